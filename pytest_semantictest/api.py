"""The public Python API: run SemanticTest suites (``run_suite``, the ``semantictest_run`` fixture),
and what a ``conftest.py`` may read or set (``option``, ``set_default``, ``dry_run``,
``compliance_case``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest

from .engine.suite import run_suite_async
from .formats.semantictest.loader import load_file, load_text
from .json_types import JSONValue
from .model import Outcome, Suite, Verdict
from .run_context import RunContext

if TYPE_CHECKING:
    from .formats.compliance.models import TestCase


__all__ = [
    "Runner",
    "SuiteResult",
    "arun_suite",
    "compile_suite",
    "compliance_base_url",
    "compliance_case",
    "dry_run",
    "option",
    "otel_exporter_env",
    "run_suite",
    "set_default",
]

T = TypeVar("T")


class _Runtime(Protocol):
    """What ``Runner`` needs of the per-process runtime (``runtime.Runtime``)."""

    @property
    def context(self) -> RunContext: ...

    def run(self, coro: Coroutine[object, None, T]) -> T: ...


class SuiteResult(dict[str, Verdict]):
    """Verdicts by test id; ``.passed`` when every test passed, ``.verdict`` for one test."""

    @property
    def passed(self) -> bool:
        return all(v.outcome is Outcome.PASSED for v in self.values())

    @property
    def verdict(self) -> Verdict:
        if len(self) != 1:
            raise ValueError(f"the suite has {len(self)} tests; index the result by test id")
        return next(iter(self.values()))


def compile_suite(spec: Mapping[str, JSONValue] | str | Path) -> Suite:
    """A suite from a dict (a suite, or one test with ``pipeline``), JSON text or a file path."""
    if isinstance(spec, Path):
        return load_file(spec)
    if isinstance(spec, str):
        if spec.lstrip().startswith("{"):
            return load_text(spec, Path("<string>"))
        return load_file(Path(spec))
    data = dict(spec)
    if "tests" not in data and "pipeline" in data:
        data = {"tests": [{"id": data.pop("id", "pipeline"), **data}]}
    return load_text(json.dumps(data), Path("<dict>"))


async def arun_suite(
    spec: Mapping[str, JSONValue] | str | Path, context: RunContext | None = None
) -> SuiteResult:
    own = context is None
    ctx = context or RunContext()
    try:
        return SuiteResult(await run_suite_async(compile_suite(spec), ctx))
    finally:
        if own:
            await ctx.aclose()


def run_suite(spec: Mapping[str, JSONValue] | str | Path) -> SuiteResult:
    """Run a suite outside pytest and return its verdicts by test id."""
    return asyncio.run(arun_suite(spec))


class Runner:
    """The ``semantictest_run`` fixture: ``run(spec)`` in sync tests, ``await arun(spec)`` in async ones."""

    def __init__(self, runtime: _Runtime) -> None:
        self._runtime = runtime

    def __call__(self, spec: Mapping[str, JSONValue] | str | Path) -> SuiteResult:
        return self._runtime.run(arun_suite(spec, self._runtime.context))

    run = __call__

    async def arun(self, spec: Mapping[str, JSONValue] | str | Path) -> SuiteResult:
        """Run on the caller's event loop, with its own HTTP pool and the session's judge."""
        shared = self._runtime.context
        ctx = RunContext(shared.settings, shared.env, shared.rootdir, judge=shared.judge, llm=shared.llm)
        try:
            return await arun_suite(spec, ctx)
        finally:
            await ctx.aclose_http()


# --------------------------------------------------------------------------- for conftest.py files


def option(config: pytest.Config, name: str) -> Any:
    """A plugin setting by its option name without ``--semantictest-`` (``"llm-cache"``): the
    command-line option if given, else the ini key, else the default."""
    from . import options

    return options.value(config, name)


def set_default(config: pytest.Config, name: str, value: Any) -> bool:
    """Give a setting a value for this run unless the user set it (on the command line or in the
    ini file); call it from ``pytest_configure``. Returns whether the value was applied. A list
    setting (``"compliance-value"``) gets ``value`` appended to what the user gave instead."""
    from . import option_groups, options

    name = option_groups.new_name(name)  # a renamed setting by its old name too
    kind = next((k for n, k, *_ in options.OPTIONS if n == name), None)
    if kind is None:
        raise ValueError(f"unknown semantictest setting {name!r}")
    dest = "semantictest_" + name.replace("-", "_")
    if kind is list:
        current = list(options.value(config, name) or [])
        setattr(config.option, dest, current + list(value))
        return True
    if config.getoption(dest, None) is not None or config.getini(dest) not in (None, "", []):
        return False
    setattr(config.option, dest, value)
    return True


def dry_run(config: pytest.Config) -> bool:
    """Whether this run only plans or shows setup (``--setup-only``, ``--setup-plan``): a hook must
    not contact the server under test then (``--collect-only`` runs no setup hook at all)."""
    from .nodes import dry_run as _dry_run

    return _dry_run(config)


def compliance_case(item: pytest.Item) -> TestCase | None:
    """For a compliance test item: its case as parsed (``.setup``: the case's own ``**Setup:**``
    with ``agents`` and ``unavailable``, or None; ``.title``), else None."""
    from .formats.compliance.pytest_glue import compliance_parts

    parts = compliance_parts(item)
    return parts.data.parsed if parts is not None else None


def compliance_base_url(item: pytest.Item) -> str | None:
    """Where a compliance test item's requests go (None for other items)."""
    from .formats.compliance.pytest_glue import compliance_parts

    parts = compliance_parts(item)
    return parts.file.setup.base_url if parts is not None else None


def otel_exporter_env(config: pytest.Config) -> dict[str, str]:
    """The OpenTelemetry exporter settings that send an agent's spans to this run's OTLP receiver
    (``OTEL_EXPORTER_OTLP_ENDPOINT`` and friends), for an agent a ``conftest.py`` starts itself; the
    receiver starts now if it has not. Empty when the receiver is off (``--semantictest-otel``).
    See docs/traces.md."""
    from .runtime import runtime
    from .span_service import exporter_env

    source = runtime(config).span_service.source()
    return exporter_env(source.endpoint) if source is not None else {}
