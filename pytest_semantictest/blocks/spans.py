"""Spans: the spans the agent exported over OTLP for this test's execution (``docs/traces.md``).

Needs the run's OTLP receiver (``--semantictest-otel``). The requests the test made before this step
carried its ``traceparent``; the step waits up to ``waitMs`` for the first of the execution's spans,
then until none came for ``quietMs`` (exporters send in batches). Its output:

- ``spans``: every span (``name``, ``kind``, ``status``, ``durationMs``, ``attributes``, ...), in
  the order they started; ``count``, ``names``, ``errors`` (spans with an error status);
- ``toolCalls``: the tool calls read from tool spans (GenAI conventions, OpenInference, pydantic-ai),
  normalised (``name``, ``arguments``, ``result``, ``error``): what ``ValidateTools`` reads;
- ``llmCalls``: the LLM calls (``model``, ``inputTokens``, ``outputTokens``, ``durationMs``).

``config.name`` keeps only the spans whose name matches it (a glob: ``execute_tool*``).
``config.expect`` entries (``name`` glob, ``kind``, ``service``, ``status``, ``attributes``,
``minMs``/``maxMs``, ``count``) are span assertions: ``passed`` and ``failures`` in the output say how
they went, an attribute no span carries named with a did-you-mean (:mod:`..spans.expect`). Foreign
traces the one-at-a-time rule cannot attribute fail the step, saying so. No span at
all is not an error here: the assertions on ``count`` or ``toolCalls`` say what was expected; a note
in the report says where the receiver listened and for which trace.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ..evidence import Note, SpanTimeline, ToolCalls, tool_call
from ..json_types import JSONObject, JSONValue
from ..spans.expect import Bound, SpanEntry, ValueTest, entry_failure
from .base import Block, BlockError, config_problems

if TYPE_CHECKING:
    from ..step import StepContext


class Range(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min: float | None = None
    max: float | None = None


class SpanExpectation(BaseModel):
    """One entry of ``config.expect``: the spans it matches (``name`` a glob, every other value equal)
    and how many must (``count``: a number or ``{min, max}``; at least one by default)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    kind: str | None = None
    service: str | None = None
    status: str | None = None
    attributes: dict[str, JSONValue] = Field(default_factory=dict)
    minMs: float | None = None  # noqa: N815
    maxMs: float | None = None  # noqa: N815
    count: int | Range | None = None


class SpansConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    waitMs: int = Field(default=3000, ge=0, le=600_000)  # noqa: N815  (the format's spelling)
    quietMs: int = Field(default=300, ge=0, le=60_000)  # noqa: N815
    name: str | None = None
    expect: list[SpanExpectation] = Field(default_factory=list)
    roots: int = Field(default=1, ge=0, le=10_000)
    """How many requests' root spans to wait for (each request the test made that the agent handled)."""


class Spans(Block):
    name = "Spans"
    concurrency_safe = True
    config_model = SpansConfig
    config_keys = frozenset(SpansConfig.model_fields)
    input_keys = frozenset()

    @classmethod
    def validate_config(cls, config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        return config_problems(SpansConfig, config)

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONValue:
        from ..spans.model import llm_calls, tool_calls
        from ..trace_context import current

        source = ctx.run_context.spans
        trace_id = current()
        if source is None or trace_id is None:
            raise BlockError(
                "Spans needs the run's OTLP receiver: run pytest with --semantictest-otel (or set "
                "semantictest_otel = true in the ini) and point the agent's OpenTelemetry exporter at it "
                "(docs/traces.md)"
            )
        config = SpansConfig.model_validate(dict(self.config))
        found, unattributed = await source.read(
            trace_id, config.waitMs / 1000, config.quietMs / 1000, config.roots
        )
        found = sorted(found, key=lambda s: s.start_ns)
        ctx.evidence(SpanTimeline([s.as_dict() for s in found], trace_id, unattributed.text()))
        if unattributed.traces:  # they may be this test's: never judged as if they were not there
            raise BlockError(unattributed.text())
        if config.name is not None:
            found = [s for s in found if fnmatch.fnmatchcase(s.name, config.name)]
        calls = tool_calls(found)
        ctx.evidence(ToolCalls([tool_call(c) for c in calls], where="spans"))
        ctx.evidence(
            Note(
                "spans",
                {
                    "trace": trace_id,
                    "spans": len(found),
                    "receiver": source.endpoint,
                    "names": ", ".join(dict.fromkeys(s.name for s in found)) or "none",
                },
            )
        )
        failures = [why for e in config.expect if (why := entry_failure(_entry(e), found)) is not None]
        return {
            "passed": not failures,
            "failures": list(failures),
            "spans": [s.as_dict() for s in found],
            "count": len(found),
            "names": [s.name for s in found],
            "errors": sum(1 for s in found if s.status == "error"),
            "toolCalls": calls,
            "llmCalls": llm_calls(found),
            "traceId": trace_id,
        }


def _equal(expected: JSONValue) -> ValueTest:
    def test(found: bool, value: JSONValue) -> str | None:
        if not found:
            return "absent"
        return None if value == expected else f"expected {expected!r}, got {value!r}"

    return test


def _glob(pattern: str) -> ValueTest:
    def test(found: bool, value: JSONValue) -> str | None:
        return None if fnmatch.fnmatchcase(str(value), pattern) else f"expected {pattern!r}, got {value!r}"

    return test


def _entry(e: SpanExpectation) -> SpanEntry:
    """A ``config.expect`` entry as the span assertions' core reads it."""
    count = (
        Bound(1, None)
        if e.count is None
        else Bound(e.count, e.count)
        if isinstance(e.count, int)
        else Bound(e.count.min, e.count.max)
    )
    label = json.dumps(e.model_dump(exclude_none=True, exclude_defaults=True), default=str)
    return SpanEntry(
        label,
        name=_glob(e.name) if e.name is not None else None,
        kind=_equal(e.kind) if e.kind is not None else None,
        service=_equal(e.service) if e.service is not None else None,
        status=_equal(e.status) if e.status is not None else None,
        attributes={k: _equal(v) for k, v in e.attributes.items()},
        duration_ms=Bound(e.minMs, e.maxMs) if e.minMs is not None or e.maxMs is not None else None,
        count=count,
    )
