"""What a run reads and writes, checked before any test runs: each problem a usage error (exit 4).

A results file that cannot be written was found after every test ran (exit 1 on a green run); the
same path for the baseline and the results replaced the baseline with this run; a replay cache that
cannot be written recorded nothing and said nothing; a short ``SEMANTICTEST_CACHE_KEY`` surfaced
inside a teardown warning. Each is one line here, naming the option, the place and what to do.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from . import options

LEAD = "pytest-semantictest:"
WRITING_MODES = ("write", "read-write")
KEY_ENV = "SEMANTICTEST_CACHE_KEY"
"""``llm.cache.KEY_ENV``, named here so that a run without it imports nothing of the LLM client."""
LLM_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HIGHBAR_LLM_BASE_URL", "HIGHBAR_LLM_API_KEY")
"""Variables that configure an LLM: with one set, the replay cache will be written (so it is checked)."""


def check(config: pytest.Config, env: Mapping[str, str]) -> None:
    """Raise ``pytest.UsageError`` for the first place this run could not write or read as asked."""
    here = Path(str(config.invocation_params.dir))
    results, baseline = options.value(config, "results"), options.value(config, "baseline")
    base = here / baseline if baseline else None
    if results:
        problem = _output_problem(here / results, base)
        if problem is not None:
            raise pytest.UsageError(f"{LEAD} --semantictest-results: {problem}")
    viewer = options.value(config, "report")
    if viewer:
        target = here / viewer
        problem = _output_problem(target, base)
        if problem is None and results and (here / results).resolve() == target.resolve():
            problem = f"{target} is also --semantictest-results: give the viewer its own file (report.html)"
        if problem is not None:
            raise pytest.UsageError(f"{LEAD} --semantictest-report: {problem}")
    _check_cache(config, env)


def _output_problem(target: Path, baseline: Path | None) -> str | None:
    """Why an output file cannot be written, or would replace (or join) the baseline; None: it can."""
    from .files import write_problem

    problem = write_problem(target)
    if problem is None and baseline is not None:
        problem = _overwrites_baseline(target, baseline)
    return problem


def _overwrites_baseline(target: Path, baseline: Path) -> str | None:
    from .files import same_file

    if same_file(target, baseline):
        return (
            f"{target} is also --semantictest-baseline: this run would replace the baseline it is "
            "compared with; write the results to another file"
        )
    if baseline.is_dir() and target.suffix == ".jsonl" and same_file(target.parent, baseline):
        return (
            f"{target} is in the --semantictest-baseline folder {baseline}: the next run would read "
            "this run as part of the baseline; write the results elsewhere"
        )
    return None


def _check_cache(config: pytest.Config, env: Mapping[str, str]) -> None:
    """The replay cache: its key (when set) and, when it will be written, its folder."""
    if KEY_ENV in env:  # (the LLM modules are imported only when there is a key to check)
        from .llm.config import signing_key

        try:
            signing_key(env)
        except ValueError as exc:
            raise pytest.UsageError(f"{LEAD} {exc}") from None
    mode = options.value(config, "llm-cache")
    if mode not in WRITING_MODES or not _llm_in_use(config, env):
        return
    from .files import write_problem

    folder = Path(os.path.expanduser(str(options.value(config, "llm-cache-dir"))))
    if not folder.is_absolute():
        folder = Path(str(config.rootpath)) / folder
    problem = write_problem(folder, folder=True)
    if problem is not None:
        raise pytest.UsageError(
            f"{LEAD} the LLM replay cache (--semantictest-llm-cache-dir, mode {mode}) cannot be written: "
            f"{problem}. Give a folder you can write, or --semantictest-llm-cache=read to only read it"
        )


def _llm_in_use(config: pytest.Config, env: Mapping[str, str]) -> bool:
    """An LLM is configured, or the cache was asked for by name: then answers will be recorded."""
    given = any(
        config.getoption(f"semantictest_llm_{name}", None) or _ini(config, f"semantictest_llm_{name}")
        for name in ("cache", "cache_dir", "base_url", "api_key")
    )
    return given or any(env.get(name) for name in LLM_ENV)


def _ini(config: pytest.Config, name: str) -> object:
    try:
        return config.getini(name)
    except ValueError:
        return None
