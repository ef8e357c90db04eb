"""What a block's ``process(inputs, ctx)`` receives, and the errors by which a block stops its test.

:class:`StepContext` is public (``pytest_semantictest.StepContext``): a custom block annotates its
``ctx`` with it. :class:`JudgeError` and :class:`JudgeUnavailable` are what a block raises (or lets
through) when the LLM judge fails or is not configured; the engine turns them into an ERROR or a
"not evaluated" reason, never a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .databus import DataBus
from .evidence import emit
from .resolve import Resolver
from .run_context import RunContext


class JudgeUnavailable(Exception):
    """A judged step or check could not run because no LLM judge is configured."""


class JudgeError(Exception):
    """The LLM judge (or another LLM role) failed: unreachable, refused, unparseable, replay miss.

    Never a verdict: the test becomes an ERROR with this reason and its pipeline stops.
    """


@dataclass
class StepContext:
    """What a block sees while it runs: the run context plus this test's DataBus."""

    run_context: RunContext
    bus: DataBus
    resolver: Resolver
    repeat: int = 0
    execution_id: str = ""
    """A fresh id per execution of a case (agents correlate their traces with it)."""

    @property
    def http(self) -> Any:
        return self.run_context.http

    @property
    def settings(self) -> Any:
        return self.run_context.settings

    @property
    def judge(self) -> Any:
        return self.run_context.judge

    @property
    def session(self) -> RunContext:
        """The run context under its earlier name (user blocks written against it keep working)."""
        return self.run_context

    def evidence(self, record: Any) -> Any:
        """Attach an evidence record (:mod:`pytest_semantictest.evidence`) to the running step."""
        return emit(record)
