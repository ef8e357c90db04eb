"""``calls_from: otel``: a turn's tool calls read from the spans the agent exported for its execution."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..evidence import SpanTimeline, emit
from .errors import AgentError
from .traces import ToolCall

if TYPE_CHECKING:
    from ..spans.source import SpanSource

SPAN_WAIT_S = 5.0
"""How long a turn waits for its execution's first span, at most ..."""
SPAN_QUIET_S = 0.3
"""... and then until none came for this long (exporters send in batches)."""
seen_roots: dict[str, int] = {}
"""Test id -> the turns whose spans were read (each turn's request ends with one local root span)."""


async def span_calls(spans: SpanSource | None, test_id: str, seen: set[str]) -> list[ToolCall]:
    """The tool calls among the spans of ``test_id``'s trace that ``seen`` (the span ids an earlier
    turn of the same execution counted) does not hold yet; they are added to it."""
    from ..spans.model import is_tool_span, tool_call
    from ..trace_context import trace_id_for

    if spans is None:
        raise AgentError(
            "calls_from: otel needs the run's OTLP receiver: run pytest with --semantictest-otel (docs/traces.md)"
        )
    # this turn's request ends with a root span of its own: wait for one more than earlier turns saw
    turns = seen_roots.get(test_id, 0) + 1
    trace_id = trace_id_for(test_id)
    found, unattributed = await spans.read(trace_id, SPAN_WAIT_S, SPAN_QUIET_S, turns)
    seen_roots[test_id] = turns
    emit(SpanTimeline([s.as_dict() for s in found], trace_id, unattributed.text()))
    if unattributed.traces:  # they may hold this turn's calls: never judged as if there were none
        raise AgentError(unattributed.text())
    calls: list[ToolCall] = []
    for span in sorted(found, key=lambda s: s.start_ns):
        if span.span_id in seen or not is_tool_span(span):
            continue
        seen.add(span.span_id)
        call = tool_call(span)
        args, error = call.get("arguments"), call.get("error")
        calls.append(
            ToolCall(
                str(call.get("name")),
                args if isinstance(args, dict) else {"arguments": args},
                call.get("result"),
                str(error) if error is not None else None,
                span.start_ns / 1e9,
                span.end_ns / 1e9,
            )
        )
    return calls
