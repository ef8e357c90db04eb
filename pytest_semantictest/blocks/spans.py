"""Spans: the spans the agent exported over OTLP for this test's execution (``docs/traces.md``).

Needs the run's OTLP receiver (``--semantictest-otel``). The requests the test made before this step
carried its ``traceparent``; the step waits up to ``waitMs`` for the first of the execution's spans,
then until none came for ``quietMs`` (exporters send in batches). Its output:

- ``spans``: every span (``name``, ``kind``, ``status``, ``durationMs``, ``attributes``, ...), in
  the order they started; ``count``, ``names``, ``errors`` (spans with an error status);
- ``toolCalls``: the tool calls read from tool spans (GenAI conventions, OpenInference, pydantic-ai),
  normalised (``name``, ``arguments``, ``result``, ``error``): what ``ValidateTools`` reads;
- ``llmCalls``: the LLM calls (``model``, ``inputTokens``, ``outputTokens``, ``durationMs``).

``config.name`` keeps only the spans whose name matches it (a glob: ``execute_tool*``). No span at
all is not an error here: the assertions on ``count`` or ``toolCalls`` say what was expected; a note
in the report says where the receiver listened and for which trace.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ..evidence import Note, ToolCalls, tool_call
from ..json_types import JSONObject, JSONValue
from .base import Block, BlockError, config_problems

if TYPE_CHECKING:
    from ..step import StepContext


class SpansConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    waitMs: int = Field(default=3000, ge=0, le=600_000)  # noqa: N815  (the format's spelling)
    quietMs: int = Field(default=300, ge=0, le=60_000)  # noqa: N815
    name: str | None = None


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
        found = await source.spans(trace_id, config.waitMs / 1000, config.quietMs / 1000)
        found = sorted(found, key=lambda s: s.start_ns)
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
        return {
            "spans": [s.as_dict() for s in found],
            "count": len(found),
            "names": [s.name for s in found],
            "errors": sum(1 for s in found if s.status == "error"),
            "toolCalls": calls,
            "llmCalls": llm_calls(found),
            "traceId": trace_id,
        }
