"""Spans that carry no trace context of ours: the one-at-a-time rule. On the receiver with spans made
by the real SDK (timestamps are the SDK's own), and end to end with the real pydantic-ai agent
switched to ignore incoming ``traceparent``: one test at a time reads its calls; two tests whose
requests the agent holds until both are in flight are each told that the spans belong to none."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from pytest_semantictest.spans.receiver import SpanReceiver
from tests.helpers import run_pytest
from tests.traces.otel_agent_conftest import agent_conftest

OURS_A, OURS_B = "a" * 32, "b" * 32


@pytest.fixture
def receiver() -> Iterator[SpanReceiver]:
    found = SpanReceiver()
    found.start()
    yield found
    found.stop()


def export_own_trace(receiver: SpanReceiver, name: str) -> str:
    """An agent that starts a trace of its own (the real SDK's exporter, no incoming context)."""
    provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces")))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("invoke_agent") as root:
        with tracer.start_as_current_span(name):
            pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


def test_a_foreign_trace_inside_the_only_running_execution_is_its_own(receiver: SpanReceiver) -> None:
    receiver.begin(OURS_A)
    foreign = export_own_trace(receiver, "execute_tool f")
    found, unattributed = receiver.read(OURS_A, wait_s=5, quiet_s=0.05, roots=1, parents=["cc" * 8])
    assert sorted(s.name for s in found) == ["execute_tool f", "invoke_agent"]
    assert {s.trace_id for s in found} == {foreign} and unattributed.traces == 0
    receiver.end(OURS_A)
    receiver.begin(OURS_B)  # a later execution: the earlier trace lay outside its window
    assert receiver.read(OURS_B)[0] == []


def test_two_executions_at_once_get_none_and_are_told(receiver: SpanReceiver) -> None:
    receiver.begin(OURS_A)
    receiver.begin(OURS_B)
    export_own_trace(receiver, "execute_tool f")
    for ours in (OURS_A, OURS_B):
        found, unattributed = receiver.read(ours, wait_s=0.3, quiet_s=0.05)
        assert found == [] and (unattributed.traces, unattributed.concurrent) == (1, 2)
        assert "attributed to none" in unattributed.text() and "2 tests ran at once" in unattributed.text()


def test_a_trace_whose_execution_was_announced_after_its_spans_is_ours(receiver: SpanReceiver) -> None:
    """Under xdist a worker announces an execution over HTTP: on a busy machine the agent's spans of that
    execution can reach the receiver first. Once announced, its trace is ours, not a foreign one that
    the tests running meanwhile are told belongs to none."""
    receiver.begin(OURS_A)
    provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces")))
    parent = trace.NonRecordingSpan(
        trace.SpanContext(int(OURS_B, 16), int("cd" * 8, 16), is_remote=True, trace_flags=trace.TraceFlags(1))
    )
    with provider.get_tracer("t").start_as_current_span(
        "invoke_agent", context=trace.set_span_in_context(parent)
    ):
        pass
    provider.shutdown()
    receiver.begin(OURS_B)  # announced after its span arrived
    found, unattributed = receiver.read(OURS_A, wait_s=0.3, quiet_s=0.05)
    assert found == [] and unattributed.traces == 0
    assert [s.name for s in receiver.read(OURS_B)[0]] == ["invoke_agent"]


def test_an_execution_that_ended_before_the_span_does_not_count(receiver: SpanReceiver) -> None:
    receiver.begin(OURS_B)
    receiver.end(OURS_B)
    time.sleep(0.01)
    receiver.begin(OURS_A)
    export_own_trace(receiver, "execute_tool g")
    found, unattributed = receiver.read(OURS_A, wait_s=5, quiet_s=0.05, roots=1, parents=["cc" * 8])
    assert "execute_tool g" in [s.name for s in found] and unattributed.traces == 0


def weather_test(city: str, n: int) -> dict[str, object]:
    return {
        "id": f"weather-{n}-{city.lower()}",
        "pipeline": [
            {
                "block": "HttpRequest",
                "input": {
                    "url": "${env.OTEL_AGENT_URL}/chat",
                    "method": "POST",
                    "body": {"message": f"What's the weather in {city}?"},
                },
                "output": "response",
            },
            {"block": "Spans", "config": {"waitMs": 8000}, "output": "trace"},
            {
                "block": "ValidateTools",
                "input": {"from": "trace.toolCalls", "as": "toolCalls"},
                "config": {
                    "expected": ["get_weather"],
                    "maxTools": 1,
                    "validateArgs": {"get_weather": {"city": city}},
                },
                "output": "tools",
            },
        ],
        "assertions": {"response.status": 200, "tools.passed": True},
    }


def test_one_test_at_a_time_reads_the_calls_of_an_agent_that_ignores_traceparent(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(agent_conftest(WEATHER_AGENT_NO_CONTEXT="1"))
    tests = [weather_test(city, n) for n, city in enumerate(["Paris", "Oslo", "Tokyo"])]
    pytester.makefile(".json", weather=json.dumps({"name": "w", "tests": tests}))
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-otel",
        "--semantictest-items-at-once=1",
        own_process=True,
    )
    result.assert_outcomes(passed=3)


def test_two_tests_at_once_are_told_their_spans_belong_to_none(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(agent_conftest(WEATHER_AGENT_NO_CONTEXT="1", WEATHER_AGENT_BARRIER="2"))
    tests = [weather_test(city, n) for n, city in enumerate(["Paris", "Oslo"])]
    pytester.makefile(".json", weather=json.dumps({"name": "w", "tests": tests}))
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-otel",
        "--semantictest-items-at-once=2",
        own_process=True,
    )
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert out.count("ran at once, so they are attributed to none (the one-at-a-time rule)") >= 2, out
    assert "Traceback" not in out


def test_a_worker_announces_its_executions_and_reads_over_http(receiver: SpanReceiver) -> None:
    """Under xdist a worker tells the controller's receiver when each execution starts and ends, and
    reads what the rule gives it over HTTP."""
    import asyncio

    from pytest_semantictest.spans.source import RemoteSpans

    worker = RemoteSpans(receiver.url)
    worker.announce(OURS_A, "begin")
    export_own_trace(receiver, "execute_tool f")
    found, unattributed = asyncio.run(worker.read(OURS_A, 5, 0.05))
    assert "execute_tool f" in [s.name for s in found] and unattributed.traces == 0
    worker.announce(OURS_B, "begin")  # a second execution while the first runs: a later trace is no one's
    export_own_trace(receiver, "execute_tool g")
    found, unattributed = asyncio.run(worker.read(OURS_B, 0.5, 0.05))
    assert found == [] and unattributed.traces == 1 and worker.unannounced is None
    worker.announce(OURS_A, "end")
    assert receiver.attribution.ours[OURS_A].end_ns is not None
    gone = RemoteSpans("http://127.0.0.1:9")
    gone.announce(OURS_A, "begin")
    assert gone.unannounced is not None and "could not be told" in gone.unannounced
