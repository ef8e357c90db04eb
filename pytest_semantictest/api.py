"""Run SemanticTest suites from Python: ``run_suite`` and the ``semantictest_run`` fixture."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .engine.context import RunContext
from .engine.suite import run_suite_async
from .formats.semantictest.loader import load_file, load_text
from .model import Outcome, Suite, Verdict


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


def compile_suite(spec: Mapping[str, Any] | str | Path) -> Suite:
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


async def arun_suite(spec: Mapping[str, Any] | str | Path, context: RunContext | None = None) -> SuiteResult:
    own = context is None
    ctx = context or RunContext()
    try:
        return SuiteResult(await run_suite_async(compile_suite(spec), ctx))
    finally:
        if own:
            await ctx.aclose()


def run_suite(spec: Mapping[str, Any] | str | Path) -> SuiteResult:
    """Run a suite outside pytest and return its verdicts by test id."""
    return asyncio.run(arun_suite(spec))


class Runner:
    """The ``semantictest_run`` fixture: ``run(spec)`` in sync tests, ``await arun(spec)`` in async ones."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def __call__(self, spec: Mapping[str, Any] | str | Path) -> SuiteResult:
        return self._runtime.run(arun_suite(spec, self._runtime.context))

    run = __call__

    async def arun(self, spec: Mapping[str, Any] | str | Path) -> SuiteResult:
        """Run on the caller's event loop, with its own HTTP pool and the session's judge."""
        shared = self._runtime.context
        ctx = RunContext(shared.settings, shared.env, shared.rootdir, judge=shared.judge, llm=shared.llm)
        try:
            return await arun_suite(spec, ctx)
        finally:
            await ctx.aclose_http()
