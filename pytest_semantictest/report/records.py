"""A verdict's evidence records by kind, with the step that gave each (None: a check gave it)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from ..model import StepTrace, Verdict

E = TypeVar("E")


def in_trace(trace: Sequence[StepTrace], kind: type[E]) -> Iterator[tuple[StepTrace, E]]:
    """``(step trace, record)`` for every record of ``kind`` the steps gave, in order."""
    for t in trace:
        for record in t.evidence:
            if isinstance(record, kind):
                yield t, record


def in_verdict(verdict: Verdict, kind: type[E]) -> Iterator[tuple[StepTrace | None, E]]:
    """The steps' records of ``kind``, then the checks' (with None for the step)."""
    yield from in_trace(verdict.trace, kind)
    for record in verdict.evidence:
        if isinstance(record, kind):
            yield None, record


def has(trace: Sequence[StepTrace], *kinds: type[object]) -> bool:
    return any(isinstance(r, kinds) for t in trace for r in t.evidence)


def step_name(t: StepTrace | None) -> str:
    """A step as the HTML report names it: its id, with its block when they differ."""
    if t is None:
        return "check"
    return t.step.id if t.step.id == t.step.block else f"{t.step.id} ({t.step.block})"
