"""The OTLP receiver on its own: what the real OpenTelemetry exporter sends (protobuf, gzip or not),
OTLP/JSON with hex ids, and malformed payloads, each answered and never a crash; and the three
conventions tool calls are read from."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from pytest_semantictest.spans.model import Span, is_tool_span, llm_calls, tool_calls
from pytest_semantictest.spans.receiver import SpanReceiver


@pytest.fixture
def receiver() -> Iterator[SpanReceiver]:
    found = SpanReceiver()
    found.start()
    yield found
    found.stop()


def export(receiver: SpanReceiver, compression: Compression = Compression.NoCompression) -> str:
    """Spans made by the real SDK and sent by its real OTLP/HTTP exporter; the trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "svc"}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", compression=compression))
    )
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("invoke_agent weather") as root:
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attributes({"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 12})
        with tracer.start_as_current_span("execute_tool get_weather") as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}),
                    "gen_ai.tool.call.result": "sunny",
                }
            )
        with tracer.start_as_current_span("execute_tool book") as failed:
            failed.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "book"})
            failed.set_status(Status(StatusCode.ERROR, "no seats left"))
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip], ids=["plain", "gzip"])
def test_the_sdk_exporter_s_spans_arrive_whole(receiver: SpanReceiver, compression: Compression) -> None:
    trace_id = export(receiver, compression)
    spans = receiver.spans(trace_id, wait_s=5)
    assert sorted(s.name for s in spans) == sorted(
        ["invoke_agent weather", "chat gpt-4o", "execute_tool get_weather", "execute_tool book"]
    )
    assert {s.service for s in spans} == {"svc"}
    assert tool_calls(spans) == [
        {"name": "get_weather", "arguments": {"city": "Paris"}, "result": "sunny"},
        {"name": "book", "arguments": {}, "error": "no seats left"},
    ]
    assert llm_calls(spans)[0]["model"] == "gpt-4o" and llm_calls(spans)[0]["inputTokens"] == 12
    assert receiver.spans("0" * 31 + "1") == []  # another trace's: none


def post(receiver: SpanReceiver, body: bytes, content_type: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(  # noqa: S310  (loopback)
        f"{receiver.url}/v1/traces", data=body, headers={"content-type": content_type, **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310  (loopback)
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_otlp_json_with_hex_ids_is_read(receiver: SpanReceiver) -> None:
    trace_id, span_id = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "js-agent"}}]},
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": span_id,
                                "name": "lookup",
                                "startTimeUnixNano": "1000",
                                "endTimeUnixNano": "3000000",
                                "attributes": [
                                    {"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}},
                                    {"key": "tool.name", "value": {"stringValue": "lookup"}},
                                    {"key": "input.value", "value": {"stringValue": '{"q": "x"}'}},
                                    {"key": "retries", "value": {"intValue": "2"}},
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    assert post(receiver, json.dumps(body).encode(), "application/json")[0] == 200
    (span,) = receiver.spans(trace_id)
    assert span.span_id == span_id and span.service == "js-agent" and span.attributes["retries"] == 2
    assert span.duration_ms == pytest.approx(2.999)
    assert tool_calls([span]) == [{"name": "lookup", "arguments": {"q": "x"}}]


@pytest.mark.parametrize(
    ("body", "content_type", "headers", "status", "said"),
    [
        (b"\x0a\xff\xff\xff\xff", "application/x-protobuf", {}, 400, "not an OTLP protobuf"),
        (b"{not json", "application/json", {}, 400, "not an OTLP/JSON"),
        (b"[1, 2]", "application/json", {}, 400, "not a JSON object"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}',
            "application/json",
            {},
            400,
            "is not hex",
        ),
        (b"{}", "text/plain", {}, 415, "application/x-protobuf or application/json"),
        (b"not gzip", "application/x-protobuf", {"content-encoding": "gzip"}, 400, "gzip"),
        (
            gzip.compress(b"\x0a\x03abc"),
            "application/x-protobuf",
            {"content-encoding": "gzip"},
            400,
            "protobuf",
        ),
    ],
    ids=["protobuf", "json", "json-list", "hex", "type", "gzip", "gzip-protobuf"],
)
def test_a_malformed_payload_is_answered_and_the_receiver_goes_on(
    receiver: SpanReceiver, body: bytes, content_type: str, headers: dict[str, str], status: int, said: str
) -> None:
    code, text = post(receiver, body, content_type, **headers)
    assert code == status and said in json.loads(text)["message"], text
    assert post(receiver, b"", "application/x-protobuf")[0] == 200  # (an empty export is valid)
    assert receiver.rejected == 1


def span(name: str, **attributes: object) -> Span:
    return Span("t" * 32, "s" * 16, "", name, 0, 1, attributes)


def test_tool_spans_of_each_convention_and_not_others() -> None:
    legacy = span(
        "running tool", **{"gen_ai.tool.name": "f", "tool_arguments": '{"a": 1}', "tool_response": "ok"}
    )
    assert tool_calls([legacy]) == [{"name": "f", "arguments": {"a": 1}, "result": "ok"}]
    by_name = span("execute_tool search")
    assert tool_calls([by_name]) == [{"name": "search", "arguments": {}}]
    for other in (
        span("chat gpt-4o", **{"gen_ai.request.model": "gpt-4o"}),
        span("running tool"),
        span("GET /x"),
    ):
        assert not is_tool_span(other)


def test_a_reader_waits_for_the_root_span_that_ends_a_request(receiver: SpanReceiver) -> None:
    """An exporter under load sends a request's spans in batches far apart: a quiet spell after the
    first batch does not end the wait while the request's root span (exported after every span under
    it) has not come."""
    import threading

    from opentelemetry.proto.trace.v1.trace_pb2 import Span as OtlpSpan

    trace, root_id = bytes.fromhex("ab" * 16), bytes.fromhex("01" * 8)
    child = OtlpSpan(
        trace_id=trace, span_id=bytes.fromhex("02" * 8), parent_span_id=root_id, name="execute_tool f"
    )
    root = OtlpSpan(
        trace_id=trace, span_id=root_id, parent_span_id=bytes.fromhex("ff" * 8), name="invoke_agent"
    )
    receiver.add([(trace.hex(), child, "svc")])
    later = threading.Timer(0.5, receiver.add, [[(trace.hex(), root, "svc")]])
    later.start()
    try:
        found = receiver.spans(trace.hex(), wait_s=30, quiet_s=0.05, roots=1, parents=["ff" * 8])
    finally:
        later.join()
    assert sorted(s.name for s in found) == ["execute_tool f", "invoke_agent"]
    assert [
        s.name for s in receiver.spans(trace.hex(), wait_s=0.2, quiet_s=0.05, roots=2)
    ] != []  # gives up in time
