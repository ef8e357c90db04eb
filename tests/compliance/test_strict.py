"""Strict checks: every key and operator, passing and failing, against fabricated responses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_semantictest.blocks.chat_response import read_response
from pytest_semantictest.databus import DataBus
from pytest_semantictest.formats.compliance.parse import parse_text
from pytest_semantictest.formats.compliance.strict import (
    ChunksCheck,
    DocCheck,
    EventsCheck,
    EventTypeCheck,
    ValueCheck,
)
from pytest_semantictest.formats.compliance.strict_yaml import compile_strict
from pytest_semantictest.model import Failure
from tests.compliance.conftest import chat_case, doc, reported

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "echo-agent",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Echo: Hello", "tool_calls": None},
            "finish_reason": "stop",
        },
        {"index": 1, "message": {"role": "assistant", "content": "Echo: Hi"}, "finish_reason": "stop"},
    ],
    "usage": {"total_tokens": 12, "cached": False, "ratio": 0.5},
    "events": [
        {
            "type": "handoff",
            "from": "router",
            "to": "weather-agent",
            "metadata": {"message": "Weather in London"},
        },
        {"type": "tool.call", "agent": "weather-agent", "name": "get_weather"},
        {"type": "handoff", "from": "weather-agent", "to": "report-agent", "context": [{"content": "Tokyo"}]},
    ],
}


STRICT_CHECKS = (ChunksCheck, DocCheck, EventsCheck, EventTypeCheck, ValueCheck)


def json_response(
    body: Any = COMPLETION,
    status: int = 200,
    content_type: str = "application/json; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "status": status,
        "headers": {"Content-Type": content_type, **(headers or {})},
        "body": json.dumps(body),
    }


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "verbose-agent",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


STREAM_PAYLOADS = [
    {"type": "handoff", "from": "router", "to": "verbose-agent"},
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Hello "}),
    chunk({"content": "World"}),
    chunk({}, "stop"),
    {"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 3}},
]


def sse_response(payloads: list[Any] = STREAM_PAYLOADS, done: bool = True) -> dict[str, Any]:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads) + ("data: [DONE]\n\n" if done else "")
    return {"status": 200, "headers": {"content-type": "text/event-stream"}, "body": body}


def failures(strict: str, response: dict[str, Any]) -> list[Failure]:
    """Compile the strict block of a one-case file and evaluate it against ``response``."""
    case = parse_text(doc(chat_case(strict=strict)), "t.md").cases[0]
    assert case.strict is not None
    checks, problems = compile_strict(case.strict, "case 1")
    assert problems == []
    bus = DataBus()
    bus.set("observed", read_response(response))
    sync_checks = [check for check in checks if isinstance(check, STRICT_CHECKS)]
    assert sync_checks == checks  # a strict block's checks all run without awaiting anything
    return [f for check in sync_checks for f in check.evaluate_sync(bus).failures]


PASSING = [
    ("status: 200", json_response()),
    ("status: [200, 201]", json_response(status=201)),
    ("status: type(number)", json_response()),
    ("headers:\n  content-type: application/json", json_response()),
    ("headers:\n  Content-Type: /json/", json_response()),
    ("headers:\n  x-request-id: exists", json_response(headers={"X-Request-Id": "abc"})),
    ("headers:\n  x-request-id: not_exists", json_response()),
    ("body:\n  object: chat.completion", json_response()),
    ("body:\n  choices[0].message.content: /^Echo:/", json_response()),
    ("body:\n  choices[0].message.content: '/^echo: hello$/i'", json_response()),
    ('body:\n  choices[0].message.content: contains("Hello")', json_response()),
    ("body:\n  choices: exists", json_response()),
    ("body:\n  choices[0].message.tool_calls: exists", json_response()),  # present (null) counts
    ("body:\n  choices[0].message.refusal: not_exists", json_response()),
    ("body:\n  choices[0].message: not_null", json_response()),
    ("body:\n  choices: length(2)", json_response()),
    ("body:\n  choices[0].message.content: length(11)", json_response()),
    ("body:\n  choices[0].message.content: type(string)", json_response()),
    ("body:\n  usage.total_tokens: type(number)", json_response()),
    ("body:\n  usage.total_tokens: type(integer)", json_response()),
    ("body:\n  usage.ratio: type(number)", json_response()),
    ("body:\n  usage.cached: type(boolean)", json_response()),
    ("body:\n  choices: type(array)", json_response()),
    ("body:\n  usage: type(object)", json_response()),
    ("body:\n  choices[0].message.tool_calls: type(null)", json_response()),
    ("body:\n  choices[0].finish_reason: [stop, length]", json_response()),
    ("body:\n  choices[*].finish_reason: stop", json_response()),
    ("body:\n  choices[*].message.content: '/^Echo: /'", json_response()),
    ("body:\n  usage:\n    total_tokens: 12", json_response()),
    ('body:\n  events[0].metadata.message: contains("London")', json_response()),
    (
        "body:\n  error.type: invalid_request_error",
        json_response({"error": {"type": "invalid_request_error", "message": "x"}}, 400),
    ),
    ("format: json", json_response()),
    ("content_type: application/json", json_response()),
    ("format: sse\ncontent_type: text/event-stream", sse_response()),
    ("chunks:\n  - object: chat.completion.chunk\n  - choices[0].delta.content: World", sse_response()),
    ("chunks:\n  object: chat.completion.chunk", sse_response()),
    ("final_chunk:\n  choices[0].finish_reason: stop", sse_response()),
    ('final_event: "[DONE]"', sse_response()),
    ("concatenated_content: Hello World", sse_response()),
    ('concatenated_content: contains("World")', sse_response()),
    ("events:\n  - type: handoff\n    to: verbose-agent", sse_response()),
    (
        "events:\n  - type: handoff\n    from: router\n  - type: handoff\n    to: report-agent",
        json_response(),
    ),
    ('events:\n  - type: handoff\n    metadata:\n      message: contains("London")', json_response()),
    ('events:\n  - context: contains("Tokyo")', json_response()),
    ("events:\n  handoff: exists\n  auth.token_generated: not_exists", json_response()),
    ("events:\n  handoff: length(2)", json_response()),
    ("response:\n  status: 200\n  agent: echo-agent\n  content: /Echo/", json_response()),
    (
        "response:\n  headers:\n    content-type: application/json\n  content_type: application/json",
        json_response(),
    ),
    ("response:\n  body:\n    model: echo-agent", json_response()),
    ("response:\n  agent: verbose-agent\n  content: Hello World", sse_response()),
]


@pytest.mark.parametrize(("strict", "response"), PASSING, ids=[s.replace("\n", " ")[:60] for s, _ in PASSING])
def test_passing(strict: str, response: dict[str, Any]) -> None:
    assert failures(strict, response) == []


FAILING = [
    ("status: 201", json_response(), "status", "expected 201, got 200"),
    ("status: [400, 422]", json_response(), "status", "expected one of [400, 422], got 200"),
    ("headers:\n  content-type: text/plain", json_response(), "header content-type", 'expected "text/plain"'),
    ("headers:\n  x-request-id: exists", json_response(), "header x-request-id", "the path names nothing"),
    ("body:\n  object: chat.completion.chunk", json_response(), "body object", 'got "chat.completion"'),
    (
        "body:\n  choices[0].message.content: /^Hi/",
        json_response(),
        "body choices[0].message.content",
        "expected text matching /^Hi/",
    ),
    (
        'body:\n  choices[0].message.content: contains("Bye")',
        json_response(),
        "body choices[0].message.content",
        'expected it to contain "Bye"',
    ),
    (
        "body:\n  choices[0].message.refusal: exists",
        json_response(),
        "body choices[0].message.refusal",
        "expected it to exist",
    ),
    (
        "body:\n  choices[0].message.tool_calls: not_exists",
        json_response(),
        "body choices[0].message.tool_calls",
        "expected nothing here, found null",
    ),
    (
        "body:\n  choices[0].message.tool_calls: not_null",
        json_response(),
        "body choices[0].message.tool_calls",
        "not null, got null",
    ),
    ("body:\n  choices: length(1)", json_response(), "body choices", "expected length 1, got length 2"),
    (
        "body:\n  usage.total_tokens: type(string)",
        json_response(),
        "body usage.total_tokens",
        "expected type string, got integer 12",
    ),
    ("body:\n  usage.cached: type(number)", json_response(), "body usage.cached", "got boolean false"),
    (
        "body:\n  choices[0].finish_reason: [length, tool_calls]",
        json_response(),
        "body choices[0].finish_reason",
        "expected one of",
    ),
    (
        "body:\n  choices[*].message.content: 'Echo: Hello'",
        json_response(),
        "body choices[*].message.content",
        "(every match must hold; 2 matched)",
    ),
    ("body:\n  object: chat.completion", sse_response(), "body object", "is an SSE stream"),
    ("body:\n  object: x", {"status": 200, "headers": {}, "body": "<html>"}, "body object", "not JSON"),
    ("format: sse", json_response(), "format", 'expected "sse", got "json"'),
    ("content_type: text/event-stream", json_response(), "content_type", 'expected "text/event-stream"'),
    (
        "chunks:\n  - choices[0].delta.tool_calls: exists",
        sse_response(),
        "chunks[0]",
        "no chunk of 5 matches",
    ),
    ("chunks:\n  choices: length(1)", sse_response(), "chunks choices", "chunk 5 of 5"),
    ("chunks:\n  - object: chat.completion.chunk", json_response(), "chunks", "expected an SSE stream"),
    (
        "final_chunk:\n  choices[0].finish_reason: tool_calls",
        sse_response(),
        "final_chunk choices[0].finish_reason",
        'expected "tool_calls", got "stop"',
    ),
    ('final_event: "[DONE]"', sse_response(done=False), "final_event", "got"),
    ("concatenated_content: Hello", sse_response(), "concatenated_content", 'got "Hello World"'),
    ("events:\n  - type: handoff\n    to: nobody", json_response(), "events[0]", "no event matches"),
    (
        "events:\n  - type: handoff\n    to: report-agent\n  - type: handoff\n    to: weather-agent",
        json_response(),
        "events[1]",
        "after the events matched by the entries above",
    ),
    ("events:\n  handoff: not_exists", json_response(), "events handoff", "expected nothing here"),
    (
        "events:\n  auth.token_generated: exists",
        json_response(),
        "events auth.token_generated",
        "expected it to exist",
    ),
    ("response:\n  agent: router", json_response(), "response.agent", 'expected "router", got "echo-agent"'),
    ("response:\n  status: [500, 503]", json_response(), "status", "expected one of"),
    ('response:\n  content: contains("714")', json_response(), "response.content", 'to contain "714"'),
]


@pytest.mark.parametrize(
    ("strict", "response", "check", "message"), FAILING, ids=[s.replace("\n", " ")[:60] for s, *_ in FAILING]
)
def test_failing(strict: str, response: dict[str, Any], check: str, message: str) -> None:
    found = failures(strict, response)
    assert len(found) == 1, found
    assert found[0].check.endswith(check)
    assert message in found[0].message, found[0].message
    assert found[0].line is not None and found[0].line > 20  # the YAML key's line in the file


def test_failure_carries_operator_expected_actual_and_the_key_line() -> None:
    text = doc(chat_case(strict="status: 200\nbody:\n  choices[0].finish_reason: tool_calls"))
    found = failures("status: 200\nbody:\n  choices[0].finish_reason: tool_calls", json_response())
    (failure,) = found
    line = text.splitlines().index("  choices[0].finish_reason: tool_calls") + 1
    assert (failure.operator, failure.expected, failure.actual, failure.line) == (
        "equals",
        "tool_calls",
        "stop",
        line,
    )


@pytest.mark.parametrize(
    ("strict", "message"),
    [
        ("stauts: 200", "unknown strict key 'stauts' — did you mean 'status'?"),
        ("final_events: x", "did you mean 'final_event'?"),
        ("response:\n  agnet: router", "unknown key 'response.agnet' — did you mean 'agent'?"),
        ("body:\n  choices: lenght(1)", "unknown operator 'lenght(...)' — did you mean 'length'?"),
        ("body:\n  choices: exist", "unknown operator 'exist' — did you mean 'exists'?"),
        ("body:\n  choices: not-exists", "did you mean 'not_exists'?"),
        ("body:\n  x: type(str)", "unknown type 'str' — did you mean 'string'?"),
        ("body:\n  x: length(one)", "length needs a whole number"),
        ("body:\n  x: /[a-/", "invalid regular expression"),
        ("body:\n  x: /a/q", "unknown flags 'q'"),
        ('status: "200"', "must be a status code or a list of them"),
        ("format: xml", "format must be sse or json"),
        ("chunks: 3", "chunks must be a list"),
        ("events: handoff", "events must be a list"),
        ("headers: json", "must be a mapping of header names"),
        ("body:\n  choices[: 1", "invalid path"),
        ("status: []", "an empty list matches nothing"),
    ],
)
def test_collection_problems(strict: str, message: str) -> None:
    """Found when the file is collected; confined to the case, so they are its ERROR."""
    where, rendered = reported(doc(chat_case(strict=strict)))
    assert where == "case", rendered
    assert message in rendered
    assert rendered.startswith("t.md:") and rendered.split(":")[1].isdigit()
