"""A conversation turn's tool calls read from the spans the agent exported for it (``docs/traces.md``).

The Yao compiler chooses per turn (:func:`span_mode`, written into the ``ChatTurn`` step's config as
``calls_from``):

- ``otel``: the agent file says ``calls_from: otel``: every turn's tool calls are its spans' (the run
  must have the receiver, ``--semantictest-otel``; without it the turn fails saying so);
- ``auto``: the agent file names no ``calls_from``, and the turn has tool assertions (``tool_called``,
  ``tool_result``): while the receiver runs, a turn whose reply carries no tool calls reads them
  from its spans; when no span of the execution came within :data:`WAIT_S`, the reply's (none) stand
  and the turn record says so (``tool_calls_from``);
- otherwise (``calls_from: reply`` or ``traces``, or no tool assertions): nothing is read.

A turn counts only the spans no earlier turn of the same execution counted, waiting for one more
root span than they did (each turn is one request to the agent). Foreign traces the one-at-a-time
rule cannot attribute fail the turn, naming why (never read as "no calls").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..json_types import JSONObject, JSONValue
from .base import BlockError

if TYPE_CHECKING:
    from ..checks.specs import AssertionSpec
    from ..step import StepContext

TOOL_ASSERTIONS = frozenset({"tool_called", "tool_result"})
WAIT_S = 5.0
QUIET_S = 0.3
SEEN = "_spans_counted"
"""Bus slot: the span ids earlier turns of this execution counted."""


def span_mode(chosen: str | None, assertions: Sequence[AssertionSpec]) -> str | None:
    """How a turn with ``assertions`` reads tool calls from spans: ``otel``, ``auto`` or None."""
    if chosen == "otel":
        return "otel"
    if chosen == "auto" and any(a.type in TOOL_ASSERTIONS for a in assertions):
        return "auto"
    return None


async def turn_from_spans(ctx: StepContext, turn: JSONObject, mode: JSONValue, number: int) -> JSONObject:
    """``turn`` with its ``tool_calls`` read from this execution's new spans, as ``mode`` says."""
    from ..evidence import SpanTimeline
    from ..spans.model import tool_calls
    from ..trace_context import current

    if mode not in ("otel", "auto"):
        return turn
    source, trace_id = ctx.run_context.spans, current()
    if source is None or trace_id is None:
        if mode == "otel":
            raise BlockError(
                "calls_from: otel needs the run's OTLP receiver: run pytest with --semantictest-otel "
                "(docs/traces.md)"
            )
        return turn
    if mode == "auto" and turn.get("tool_calls"):
        return turn  # the reply carries its calls
    found, unattributed = await source.read(trace_id, WAIT_S, QUIET_S, number)
    ctx.evidence(SpanTimeline([s.as_dict() for s in found], trace_id, unattributed.text()))
    if unattributed.traces:
        raise BlockError(f"turn {number}: {unattributed.text()}")
    seen = ctx.bus.get(SEEN)
    counted = set(seen) if isinstance(seen, list) else set()
    new = [s for s in found if s.span_id not in counted]
    if not found and mode == "auto":
        turn["tool_calls_from"] = f"reply (no span of this execution came within {WAIT_S:g} s)"
        return turn
    ctx.bus.set(SEEN, sorted(counted | {s.span_id for s in new}))
    turn["tool_calls"] = tool_calls(new)
    turn["tool_calls_from"] = "spans"
    return turn
