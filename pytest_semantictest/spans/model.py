"""Spans as the plugin reads them, decoded from OTLP with ``opentelemetry-proto``, and what they say
about an agent's tool calls and LLM calls (``docs/traces.md``).

Tool calls are read from three conventions:

- OpenTelemetry GenAI semantic conventions: a span whose ``gen_ai.operation.name`` is
  ``execute_tool`` (or whose name starts with ``execute_tool``), the tool in ``gen_ai.tool.name``,
  its arguments in ``gen_ai.tool.call.arguments`` and result in ``gen_ai.tool.call.result``
  (pydantic-ai, the OpenAI Agents SDK's GenAI exporters, LangChain's OTel integrations);
- OpenInference: ``openinference.span.kind`` ``TOOL``, ``tool.name``, ``input.value``, ``output.value``
  (Phoenix/Arize instrumentors for LlamaIndex, LangChain, CrewAI, ...);
- pydantic-ai's earlier names: a ``running tool`` span with ``gen_ai.tool.name``, ``tool_arguments``
  and ``tool_response``.

An error status on a tool span is the call's error. LLM calls are spans with
``gen_ai.request.model`` or ``gen_ai.response.model``: model, tokens in and out, duration.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..json_types import JSONObject, JSONValue

TOOL_OPERATION = "execute_tool"


@dataclass(frozen=True, slots=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, JSONValue] = field(default_factory=dict)
    status: str = "unset"
    """``ok``, ``error`` or ``unset``."""
    status_message: str = ""
    service: str = ""
    kind: str = ""

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    def as_dict(self) -> JSONObject:
        """The span as a SemanticTest ``Spans`` step outputs it and reports show it."""
        return {
            "name": self.name,
            "traceId": self.trace_id,
            "spanId": self.span_id,
            "parentId": self.parent_id or None,
            "kind": self.kind,
            "service": self.service,
            "status": self.status,
            "statusMessage": self.status_message or None,
            "startUnixNano": self.start_ns,
            "durationMs": round(self.duration_ms, 3),
            "attributes": dict(self.attributes),
        }


def span_of(data: Mapping[str, JSONValue]) -> Span:
    """A span from what :meth:`Span.as_dict` wrote (a step's output, read back by a check)."""
    start = data.get("startUnixNano")
    start_ns = start if isinstance(start, int) else 0
    duration = data.get("durationMs")
    length = duration if isinstance(duration, (int, float)) else 0
    attributes = data.get("attributes")
    return Span(
        trace_id=str(data.get("traceId") or ""),
        span_id=str(data.get("spanId") or ""),
        parent_id=str(data.get("parentId") or ""),
        name=str(data.get("name") or ""),
        start_ns=start_ns,
        end_ns=start_ns + int(length * 1e6),
        attributes=dict(attributes) if isinstance(attributes, Mapping) else {},
        status=str(data.get("status") or "unset"),
        status_message=str(data.get("statusMessage") or ""),
        service=str(data.get("service") or ""),
        kind=str(data.get("kind") or ""),
    )


_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {0: "unset", 1: "ok", 2: "error"}


def _value(any_value: object) -> JSONValue:
    """An OTLP ``AnyValue`` as JSON."""
    which = any_value.WhichOneof("value")  # type: ignore[attr-defined]
    if which is None:
        return None
    raw = getattr(any_value, which)
    if which == "array_value":
        return [_value(v) for v in raw.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in raw.values}
    if which == "bytes_value":
        return raw.hex()
    if which == "int_value":
        return int(raw)
    return raw


def _attributes(pairs: Iterable[object]) -> dict[str, JSONValue]:
    return {kv.key: _value(kv.value) for kv in pairs}  # type: ignore[attr-defined]


def raw_spans(request: object) -> list[tuple[str, object, str]]:
    """``(trace id, OTLP span message, service name)`` of each span of an ``ExportTraceServiceRequest``:
    what the receiver keeps; a span is turned into a :class:`Span` only when a test asks for its trace."""
    found: list[tuple[str, object, str]] = []
    for resource_spans in request.resource_spans:  # type: ignore[attr-defined]
        service = next(
            (kv.value.string_value for kv in resource_spans.resource.attributes if kv.key == "service.name"),
            "",
        )
        for scope_spans in resource_spans.scope_spans:
            found.extend((s.trace_id.hex(), s, service) for s in scope_spans.spans)
    return found


def to_span(s: object, service: str) -> Span:
    """An OTLP span message as a :class:`Span`."""
    return Span(
        trace_id=s.trace_id.hex(),  # type: ignore[attr-defined]
        span_id=s.span_id.hex(),  # type: ignore[attr-defined]
        parent_id=s.parent_span_id.hex(),  # type: ignore[attr-defined]
        name=s.name,  # type: ignore[attr-defined]
        start_ns=int(s.start_time_unix_nano),  # type: ignore[attr-defined]
        end_ns=int(s.end_time_unix_nano),  # type: ignore[attr-defined]
        attributes=_attributes(s.attributes),  # type: ignore[attr-defined]
        status=_STATUS.get(int(s.status.code), "unset"),  # type: ignore[attr-defined]
        status_message=s.status.message,  # type: ignore[attr-defined]
        service=service,
        kind=_KINDS.get(int(s.kind), "unspecified"),  # type: ignore[attr-defined]
    )


def from_request(request: object) -> list[Span]:
    """Every span of an ``ExportTraceServiceRequest``."""
    return [to_span(raw, service) for _, raw, service in raw_spans(request)]


def _parsed(value: JSONValue) -> JSONValue:
    """Arguments and results are usually JSON text: parsed when they are."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            parsed: JSONValue = json.loads(value)
            return parsed
        except ValueError:
            return value
    return value


def is_tool_span(span: Span) -> bool:
    a = span.attributes
    return (
        a.get("gen_ai.operation.name") == TOOL_OPERATION
        or span.name.startswith(TOOL_OPERATION)
        or str(a.get("openinference.span.kind", "")).upper() == "TOOL"
        or (span.name == "running tool" and "gen_ai.tool.name" in a)
    )


def tool_call(span: Span) -> JSONObject:
    """A tool span as the normalised tool call ValidateTools, highbar and Yao checks read."""
    a = span.attributes
    name = a.get("gen_ai.tool.name") or a.get("tool.name")
    if name is None and span.name.startswith(TOOL_OPERATION + " "):
        name = span.name[len(TOOL_OPERATION) + 1 :]
    arguments = next(
        (
            a[k]
            for k in ("gen_ai.tool.call.arguments", "input.value", "tool_arguments", "tool.parameters")
            if k in a
        ),
        None,
    )
    result = next(
        (a[k] for k in ("gen_ai.tool.call.result", "output.value", "tool_response") if k in a), None
    )
    call: JSONObject = {"name": name, "arguments": _parsed(arguments) if arguments is not None else {}}
    if result is not None:
        call["result"] = _parsed(result)
    if span.status == "error":
        call["error"] = span.status_message or "the tool span ended with an error status"
    return call


def tool_calls(spans: Sequence[Span]) -> list[JSONObject]:
    """The tool calls among ``spans``, in the order they started."""
    return [tool_call(s) for s in sorted(spans, key=lambda s: s.start_ns) if is_tool_span(s)]


def llm_calls(spans: Sequence[Span]) -> list[JSONObject]:
    """The LLM calls among ``spans``: model, tokens in and out, duration, in the order they started."""
    found: list[JSONObject] = []
    for s in sorted(spans, key=lambda s: s.start_ns):
        a = s.attributes
        model = a.get("gen_ai.response.model") or a.get("gen_ai.request.model")
        if model is None or is_tool_span(s):
            continue
        found.append(
            {
                "model": model,
                "inputTokens": a.get("gen_ai.usage.input_tokens"),
                "outputTokens": a.get("gen_ai.usage.output_tokens"),
                "durationMs": round(s.duration_ms, 3),
            }
        )
    return found
