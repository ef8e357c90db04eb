"""Runs a Suite: setup once, cases, teardown once (also when cases fail)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..databus import DataBus
from ..model import Case, Outcome, Suite, Verdict
from ..resolve import Resolver
from ..run_context import RunContext
from ..step import StepContext
from .repeat import run_repeated
from .runner import run_pipeline


class SetupFailed(Exception):
    """A suite's setup step failed; every case of the file is an error."""


@dataclass
class SuiteRun:
    """The state of one suite during a run: its setup slots."""

    suite: Suite
    run_context: RunContext
    bus: DataBus = field(default_factory=DataBus)
    _setup_done: bool = False

    @property
    def setup_done(self) -> bool:
        """Whether the setup has run (or is running): a later ``setup()`` does nothing."""
        return self._setup_done

    async def setup(self) -> None:
        """Run the setup steps once; raise SetupFailed naming the failing step."""
        if self._setup_done:
            return
        self._setup_done = True
        if not self.suite.setup:
            return
        ctx = StepContext(
            self.run_context,
            self.bus,
            Resolver(self.bus, self.suite.context, self.run_context.env, self.run_context.secret_env),
        )
        result = await run_pipeline(self.suite.setup, ctx)
        for index, message in sorted({**result.errors, **result.unavailable}.items()):
            step = self.suite.setup[index]
            where = f"{self.suite.path}:{step.line}" if step.line else str(self.suite.path)
            raise SetupFailed(f"setup step '{step.id}' ({step.block}) failed at {where}: {message}")

    async def teardown(self) -> list[str]:
        """Run the teardown steps; returns their errors (they never hide test results)."""
        if not self.suite.teardown:
            return []
        bus = DataBus(self.bus)
        ctx = StepContext(
            self.run_context,
            bus,
            Resolver(bus, self.suite.context, self.run_context.env, self.run_context.secret_env),
        )
        result = await run_pipeline(self.suite.teardown, ctx)
        return [
            f"teardown step '{self.suite.teardown[i].id}' failed: {m}"
            for i, m in sorted(result.errors.items())
        ]

    async def run_case(self, case: Case, concurrency: int = 10) -> Verdict:
        """``case``'s verdict: its runs (repeated as it asks) after the suite's setup."""
        settled = case.settled()  # skipped as it asks, or a problem confined to it: nothing runs
        if settled is not None:
            return settled
        await self.setup()
        return await run_repeated(case, self.run_context, self.suite.context, self.bus, concurrency)


async def run_suite_async(suite: Suite, run_context: RunContext) -> dict[str, Verdict]:
    """Run every case of a suite in order; setup errors make each case an ERROR verdict."""
    run = SuiteRun(suite, run_context)
    verdicts: dict[str, Verdict] = {}
    try:
        for case in suite.cases:
            try:
                verdicts[case.id] = await run.run_case(case)
            except SetupFailed as exc:
                verdicts[case.id] = Verdict(Outcome.ERROR, error=str(exc))
    finally:
        await run.teardown()
    return verdicts
