"""StreamParser: SSE splitting, OpenAI and Vercel AI SDK streams, generic SSE, text, registry."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_semantictest.blocks.base import BlockError
from pytest_semantictest.blocks.stream import (
    StreamParser,
    get_format,
    known_formats,
    register_format,
    unregister_format,
)
from pytest_semantictest.blocks.stream.openai import parse_openai
from pytest_semantictest.blocks.stream.sse import parse_events, parse_field, parse_sse_format
from pytest_semantictest.blocks.stream.vercel import parse_vercel
from tests.helpers import fuzz_examples, step_context


def run(body: Any, fmt: str | None = None, **inputs: Any) -> dict[str, Any]:
    config = {"format": fmt} if fmt else {}
    return asyncio.run(StreamParser(config).process({"body": body, **inputs}, step_context()))


def oai(delta: dict[str, Any], finish: str | None = None) -> str:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return "data: " + json.dumps(chunk) + "\n\n"


def tc(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> str:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        fragment.update(id=call_id, type="function")
        fragment["function"]["name"] = name
    return oai({"tool_calls": [fragment]})


# ---------------------------------------------------------------- SSE splitter


def test_sse_events_blank_line_separated_multiline_crlf_cr() -> None:
    body = "event: update\r\nid: 7\r\ndata: one\r\ndata:two\r\n\r\ndata: three\rdata: four\r\r"
    events, done = parse_events(body)
    assert not done
    assert [e.data for e in events] == ["one\ntwo", "three\nfour"]
    assert events[0].event == "update" and events[0].id == "7"
    assert events[0].to_dict() == {"event": "update", "data": "one\ntwo", "id": "7"}


def test_sse_comments_keepalives_and_done() -> None:
    body = (
        ": this is a comment\n\n: keep-alive\n\nevent: ping\ndata: {}\n\nkeep-alive\n\n"
        "retry: 3000\ndata: hello\n\ndata: [DONE]\n\ndata: after-done\n\n"
    )
    events, done = parse_events(body)
    assert done
    assert [e.data for e in events] == ["hello"]


def test_sse_field_parsing() -> None:
    assert parse_field("data: x") == ("data", "x")
    assert parse_field("data:x") == ("data", "x")
    assert parse_field("data:  x") == ("data", " x")  # only one space is removed
    assert parse_field("data") == ("data", "")
    assert parse_field(": comment") is None
    assert parse_field('0:"text"') is None
    assert parse_field("database: x") is None


def test_bare_lines_are_events_of_their_own() -> None:
    events, done = parse_events('0:"Hel"\n0:"lo"\n[DONE]\n0:"ignored"')
    assert done
    assert [e.data for e in events] == ['0:"Hel"', '0:"lo"']


# ---------------------------------------------------------------- sse-openai


def test_openai_text_done_and_metadata() -> None:
    body = (
        oai({"role": "assistant", "content": ""})
        + oai({"content": "Hello"})
        + oai({"content": " there"})
        + oai({"content": "!"})
        + oai({}, "stop")
        + "data: [DONE]\n\n"
    )
    out = run(body, "sse-openai")
    assert out["text"] == "Hello there!"
    assert out["toolCalls"] == []
    assert out["chunks"] == [
        {"type": "text", "content": "Hello"},
        {"type": "text", "content": " there"},
        {"type": "text", "content": "!"},
        {"type": "finish", "reason": "stop"},
    ]
    assert out["metadata"] == {"format": "sse-openai", "totalChunks": 4, "totalTools": 0}


def test_openai_fragmented_arguments_across_many_chunks() -> None:
    args = json.dumps({"query": "users named John", "limit": 10, "filters": {"active": True}})
    pieces = [args[i : i + 3] for i in range(0, len(args), 3)]
    body = oai({"role": "assistant", "content": None})
    body += tc(0, "", "call_abc", "search_database")
    body += "".join(tc(0, piece) for piece in pieces)
    body += oai({}, "tool_calls") + "data: [DONE]\n\n"
    out = run(body, "sse-openai")
    assert out["toolCalls"] == [
        {
            "id": "call_abc",
            "name": "search_database",
            "args": {"query": "users named John", "limit": 10, "filters": {"active": True}},
        }
    ]
    assert out["chunks"] == [
        {"type": "tool-call", "toolCallId": "call_abc", "toolName": "search_database"},
        {"type": "finish", "reason": "tool_calls"},
    ]
    assert out["metadata"] == {"format": "sse-openai", "totalChunks": 2, "totalTools": 1}


def test_openai_two_parallel_calls_interleaved_by_index() -> None:
    body = (
        tc(0, "", "call_1", "search_users")
        + tc(1, "", "call_2", "send_email")
        + tc(0, '{"na')
        + tc(1, '{"to": "a@')
        + tc(0, 'me": "Alice"}')
        + tc(1, 'example.com"}')
        + oai({}, "tool_calls")
        + "data: [DONE]\n\n"
    )
    out = run(body, "sse-openai")
    assert out["toolCalls"] == [
        {"id": "call_1", "name": "search_users", "args": {"name": "Alice"}},
        {"id": "call_2", "name": "send_email", "args": {"to": "a@example.com"}},
    ]
    assert out["metadata"]["totalTools"] == 2


def test_openai_no_space_after_data_crlf_comments_and_keepalive() -> None:
    body = (
        ": OPENROUTER PROCESSING\r\n\r\n"
        'data:{"choices":[{"index":0,"delta":{"content":"The"}}]}\r\n\r\n'
        ": keep-alive\r\n\r\n"
        'data:  {"choices":[{"index":0,"delta":{"content":" capital"}}]}\r\n\r\n'
        'data: {"choices":[{"index":0,"delta":{"content":" of"}}]}\r\n\r\n'
        "data:[DONE]\r\n\r\n"
    )
    out = run(body, "sse-openai")
    assert out["text"] == "The capital of"
    assert "error" not in out["metadata"]


def test_openai_docs_partial_stream_example() -> None:
    body = (
        'data: {"choices":[{"delta":{"content":"The"}}]}\n\n'
        'data: {"choices":[{"delta":{"content":" capital"}}]}\n\n'
        'data: {"choices":[{"delta":{"content":" of"}}]}\n\n'
    )
    assert run(body, "sse-openai")["text"] == "The capital of"


def test_openai_data_lines_without_blank_separators() -> None:
    body = (
        'data: {"id":"1","choices":[{"delta":{"content":"Hello"}}]}\n'
        'data: {"id":"1","choices":[{"delta":{"content":" there"}}]}\n'
        "data: [DONE]\n"
    )
    assert run(body, "sse-openai")["text"] == "Hello there"


def test_openai_malformed_json_lines_tolerated() -> None:
    body = (
        oai({"content": "Hi"})
        + 'data: {"choices": [{"delta": {"content": "bro\n\n'
        + "data: not json at all\n\n"
        + oai({"content": "!"})
        + "data: [DONE]\n\n"
    )
    out = run(body, "sse-openai")
    assert out["text"] == "Hi!"
    assert out["metadata"]["skipped"] == 2
    assert "error" not in out["metadata"]


def test_openai_unparseable_final_arguments_name_the_call() -> None:
    body = (
        tc(0, "", "call_1", "search")
        + tc(0, '{"q": "x"}')
        + tc(1, "", "call_2", "broken")
        + tc(1, '{"q": ')
        + "data: [DONE]\n\n"
    )
    out = run(body, "sse-openai")
    assert out["toolCalls"] == [
        {"id": "call_1", "name": "search", "args": {"q": "x"}},
        {"id": "call_2", "name": "broken", "args": {}},
    ]
    assert "'broken' (call_2)" in out["metadata"]["error"]
    assert "search" not in out["metadata"]["error"]


def test_openai_error_payload_and_wrong_format_hint() -> None:
    out = run('data: {"error": {"message": "Rate limit reached", "type": "requests"}}\n\n', "sse-openai")
    assert out["metadata"]["error"].endswith("Rate limit reached")
    vercel_body = 'data: {"type":"text-delta","id":"0","delta":"Hi"}\n\n'
    assert "is the stream format right" in run(vercel_body, "sse-openai")["metadata"]["error"]
    assert "were not JSON" in run("data: hello\n\n", "sse-openai")["metadata"]["error"]


def test_openai_non_streamed_completion_object() -> None:
    completion = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Let me check.",
                    "tool_calls": [
                        {
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "search_calendar", "arguments": '{"date":"2024-10-08"}'},
                        },
                        {
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "create_event", "arguments": {"title": "Sync"}},
                        },
                    ],
                },
            }
        ],
    }
    out = run(json.dumps(completion, indent=2), "sse-openai")
    assert out["text"] == "Let me check."
    assert out["toolCalls"] == [
        {"id": "call_a", "name": "search_calendar", "args": {"date": "2024-10-08"}},
        {"id": "call_b", "name": "create_event", "args": {"title": "Sync"}},
    ]


def test_openai_empty_stream_is_not_an_error() -> None:
    out = run("", "sse-openai")
    assert out == {
        "text": "",
        "toolCalls": [],
        "chunks": [],
        "metadata": {"format": "sse-openai", "totalChunks": 0, "totalTools": 0},
    }


# ---------------------------------------------------------------- sse-vercel

DATA_STREAM = (
    'f:{"messageId":"msg-1"}\n'
    '0:"Let me "\n'
    '0:"check the weather."\n'
    'b:{"toolCallId":"call-1","toolName":"get_weather"}\n'
    'c:{"toolCallId":"call-1","argsTextDelta":"{\\"city\\":"}\n'
    'c:{"toolCallId":"call-1","argsTextDelta":"\\"Paris\\"}"}\n'
    '9:{"toolCallId":"call-2","toolName":"get_time","args":{"tz":"CET"}}\n'
    'a:{"toolCallId":"call-1","result":{"temp":21}}\n'
    'a:{"toolCallId":"call-2","result":{"error":"clock unavailable"}}\n'
    'e:{"finishReason":"tool-calls","usage":{"promptTokens":10,"completionTokens":20},'
    '"isContinued":false}\n'
    '2:[{"some":"data"}]\n'
    'd:{"finishReason":"stop","usage":{"promptTokens":10,"completionTokens":20}}\n'
)


def test_vercel_data_stream_protocol_bare_lines() -> None:
    out = run(DATA_STREAM, "sse-vercel")
    assert out["text"] == "Let me check the weather."
    assert out["toolCalls"] == [
        {"id": "call-1", "name": "get_weather", "args": {"city": "Paris"}, "result": {"temp": 21}},
        {"id": "call-2", "name": "get_time", "args": {"tz": "CET"}, "result": {"error": "clock unavailable"}},
    ]
    assert {"type": "tool-call", "toolCallId": "call-1", "toolName": "get_weather"} in out["chunks"]
    assert {"type": "tool-result", "toolCallId": "call-1", "result": {"temp": 21}} in out["chunks"]
    assert out["chunks"][-1] == {"type": "finish", "reason": "stop"}
    assert out["metadata"] == {
        "format": "sse-vercel",
        "totalChunks": len(out["chunks"]),
        "totalTools": 2,
        "toolErrorCount": 1,
    }


def test_vercel_data_stream_protocol_inside_sse_data_lines() -> None:
    wrapped = "".join(f"data: {line}\n\n" for line in DATA_STREAM.splitlines())
    assert run(wrapped, "sse-vercel") == run(DATA_STREAM, "sse-vercel")
    crlf_no_space = "".join(f"data:{line}\r\n" for line in DATA_STREAM.splitlines())
    assert run(crlf_no_space, "sse-vercel")["toolCalls"] == run(DATA_STREAM, "sse-vercel")["toolCalls"]


def test_vercel_data_stream_error_part() -> None:
    out = run('0:"Hi"\n3:"An error occurred."\n', "sse-vercel")
    assert out["text"] == "Hi"
    assert out["metadata"]["error"] == "An error occurred."
    assert {"type": "error", "error": "An error occurred."} in out["chunks"]


UI_STREAM = (
    "".join(
        f"data: {json.dumps(ev)}\n\n"
        for ev in [
            {"type": "start", "messageId": "msg-1"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t0"},
            {"type": "text-delta", "id": "t0", "delta": "Searching "},
            {"type": "text-delta", "id": "t0", "delta": "now."},
            {"type": "text-end", "id": "t0"},
            {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "search_users"},
            {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '{"name'},
            {"type": "tool-input-start", "toolCallId": "call_2", "toolName": "send_email"},
            {"type": "tool-input-delta", "toolCallId": "call_2", "inputTextDelta": '{"to":"a@b.c"}'},
            {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '":"Alice"}'},
            {
                "type": "tool-input-available",
                "toolCallId": "call_2",
                "toolName": "send_email",
                "input": {"to": "a@b.c"},
            },
            {"type": "tool-output-available", "toolCallId": "call_1", "output": [{"id": 1}]},
            {"type": "tool-output-error", "toolCallId": "call_2", "errorText": "SMTP down"},
            {"type": "finish-step"},
            {"type": "data-weather", "data": {"x": 1}},
            {"type": "finish", "finishReason": "stop"},
        ]
    )
    + "data: [DONE]\n\n"
)


def test_vercel_ui_message_stream_with_streamed_tool_inputs() -> None:
    out = run(UI_STREAM, "sse-vercel")
    assert out["text"] == "Searching now."
    assert out["toolCalls"] == [
        {"id": "call_1", "name": "search_users", "args": {"name": "Alice"}, "result": [{"id": 1}]},
        {"id": "call_2", "name": "send_email", "args": {"to": "a@b.c"}, "error": "SMTP down"},
    ]
    assert out["metadata"]["toolErrorCount"] == 1
    assert out["metadata"]["totalTools"] == 2
    assert "error" not in out["metadata"]
    assert {"type": "tool-error", "toolCallId": "call_2", "error": "SMTP down"} in out["chunks"]
    assert out["chunks"][-1] == {"type": "finish", "reason": "stop"}


def test_vercel_json_events_older_field_names() -> None:
    body = "".join(
        f"data: {json.dumps(ev)}\n\n"
        for ev in [
            {"type": "text-delta", "textDelta": "Hello"},
            {"type": "tool-call", "toolCallId": "t1", "toolName": "search", "args": {"q": "x"}},
            {"type": "tool-call", "toolCallId": "t2", "toolName": "lookup", "input": {"id": 3}},
            {"type": "tool-result", "toolCallId": "t1", "result": {"status": "error"}},
            {"type": "error", "errorText": "stream broke"},
        ]
    )
    out = run(body, "sse-vercel")
    assert out["text"] == "Hello"
    assert out["toolCalls"] == [
        {"id": "t1", "name": "search", "args": {"q": "x"}, "result": {"status": "error"}},
        {"id": "t2", "name": "lookup", "args": {"id": 3}},
    ]
    assert out["metadata"]["toolErrorCount"] == 1
    assert out["metadata"]["error"] == "stream broke"


def test_vercel_unparseable_streamed_input_and_malformed_lines() -> None:
    body = (
        '0:"ok"\n0:broken\nb:{"toolCallId":"c1","toolName":"calc"}\n'
        'c:{"toolCallId":"c1","argsTextDelta":"{\\"x\\": 1"}\n'
    )
    out = run(body, "sse-vercel")
    assert out["text"] == "ok"
    assert out["toolCalls"] == [{"id": "c1", "name": "calc", "args": {}}]
    assert "'calc' (c1)" in out["metadata"]["error"]
    assert out["metadata"]["skipped"] == 1


def test_vercel_wrong_format_hint() -> None:
    assert "is the stream format right" in run("data: hello\n\n", "sse-vercel")["metadata"]["error"]


# ---------------------------------------------------------------- sse and text


def test_generic_sse_plain_and_json_payloads() -> None:
    body = (
        "data: Any text content here\n\n"
        'event: delta\ndata: {"text": " and more"}\n\n'
        'data: {"content": "!"}\n\n'
        'data: {"choices":[{"delta":{"content":" ok"}}]}\n\n'
        'data: {"other": 1}\n\n'
        "data: [DONE]\n\n"
    )
    out = run(body, "sse")
    assert out["text"] == 'Any text content here and more! ok{"other": 1}'
    assert out["chunks"][0] == {"event": "message", "data": "Any text content here"}
    assert out["chunks"][1] == {"event": "delta", "data": {"text": " and more"}}
    assert out["metadata"] == {"format": "sse", "totalChunks": 5, "totalTools": 0}


def test_generic_sse_multiline_data_joined_with_newline() -> None:
    body = "data: Any text content here\ndata: More content\ndata: Even more\n"
    assert parse_sse_format(body)["text"] == "Any text content here\nMore content\nEven more"


def test_text_format_is_the_body_and_is_the_default() -> None:
    body = "data: not parsed\n\nplain"
    for out in (run(body, "text"), run(body)):
        assert out["text"] == body
        assert out["toolCalls"] == []
        assert out["metadata"]["format"] == "text"


def test_format_from_inputs_when_not_configured() -> None:
    assert run(oai({"content": "Hi"}), format="sse-openai")["text"] == "Hi"


# ---------------------------------------------------------------- block and registry


def test_known_formats_and_get_format() -> None:
    assert {"sse", "sse-openai", "sse-vercel", "text"} <= set(known_formats())
    assert get_format("sse-openai") is parse_openai
    assert get_format("sse-vercel") is parse_vercel
    with pytest.raises(KeyError, match="Did you mean 'sse-openai'"):
        get_format("sse-openia")


def test_custom_format_registration() -> None:
    @register_format("pipe")
    def parse_pipe(body: str) -> dict[str, Any]:
        return {"text": body.replace("|", ""), "toolCalls": [{"id": "1", "name": "t", "args": {}}]}

    try:
        assert "pipe" in known_formats()
        assert StreamParser.validate_config({"format": "pipe"}) == []
        out = run("a|b|c", "pipe")
        assert out == {
            "text": "abc",
            "toolCalls": [{"id": "1", "name": "t", "args": {}}],
            "chunks": [],
            "metadata": {"format": "pipe", "totalChunks": 0, "totalTools": 1},
        }
        register_format("boom", lambda body: {"text": str(1 / 0)})
        assert run("x", "boom") == {
            "text": "",
            "toolCalls": [],
            "chunks": [],
            "metadata": {
                "format": "boom",
                "totalChunks": 0,
                "totalTools": 0,
                "error": "ZeroDivisionError: division by zero",
            },
        }
        register_format("bad", lambda body: "not a dict")  # type: ignore[arg-type, return-value]  # a broken parser
        assert "expected a dict" in run("x", "bad")["metadata"]["error"]
    finally:
        for name in ("pipe", "boom", "bad"):
            unregister_format(name)
    assert "pipe" not in known_formats()
    with pytest.raises(TypeError):
        register_format("x", "not callable")  # type: ignore[call-overload]  # what an untyped caller may pass


def test_unknown_format_config_error_with_suggestion() -> None:
    problems = StreamParser.validate_config({"format": "sse-vercell"})
    assert len(problems) == 1
    key, message = problems[0]
    assert key == "format"
    assert "Did you mean 'sse-vercel'?" in message
    assert "Known formats: sse, sse-openai, sse-vercel, text" in message
    assert StreamParser.validate_config({"format": 3}) == [("format", "format must be a string, got int")]
    assert StreamParser.validate_config({"format": "${FMT}"}) == []
    assert StreamParser.validate_config({}) == []


def test_unknown_format_at_run_time_raises() -> None:
    with pytest.raises(BlockError, match="Unknown stream format 'openai'"):
        run("data: x", "openai")


@pytest.mark.parametrize("body", [None, 42, {"choices": []}, ["data: x"]])
def test_missing_or_non_string_body_raises(body: Any) -> None:
    with pytest.raises(BlockError, match="StreamParser needs input 'body'"):
        run(body, "sse-openai")
    with pytest.raises(BlockError, match="got nothing"):
        asyncio.run(StreamParser({"format": "sse"}).process({}, step_context()))


def test_bytes_body_is_decoded() -> None:
    assert run(oai({"content": "é"}).encode(), "sse-openai")["text"] == "é"


# ---------------------------------------------------------------- properties

sse_like = st.lists(
    st.one_of(
        st.text(),
        st.sampled_from(
            [
                "data:",
                "data: ",
                "data: [DONE]",
                ":",
                "event: ",
                "id:",
                "\r\n",
                "\n",
                "\r",
                '0:"x"',
                "9:{",
                'c:{"toolCallId":"a","argsTextDelta":"{"}',
                '{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}',
                '{"type":"',
                '{"type":"tool-input-delta","toolCallId":1,"inputTextDelta":2}',
                '{"choices":[{"delta":{"tool_calls":[{"index":true,"function":5}]}}]}',
            ]
        ),
    )
).map("".join)


@settings(max_examples=fuzz_examples(150), deadline=None)
@given(sse_like)
def test_parsers_never_raise_on_arbitrary_text(body: str) -> None:
    for fmt in ("sse-openai", "sse-vercel", "sse", "text"):
        out = get_format(fmt)(body)
        assert set(out) == {"text", "toolCalls", "chunks", "metadata"}
        assert isinstance(out["text"], str)
        assert out["metadata"]["totalTools"] == len(out["toolCalls"])
        json.dumps(out)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=fuzz_examples(100), deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=5), st.data())
def test_openai_arguments_survive_any_fragmentation(args: dict[str, Any], data: Any) -> None:
    text = json.dumps(args)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    body = tc(0, "", "call_1", "f") + "".join(tc(0, p) for p in pieces) + "data: [DONE]\n\n"
    assert parse_openai(body)["toolCalls"] == [{"id": "call_1", "name": "f", "args": args}]


def test_without_a_format_a_plain_openai_or_vercel_stream_is_read_as_one() -> None:
    """The docs' examples parse such streams without naming a format, then check the tool calls."""
    openai = oai(
        {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "lookup", "arguments": "{}"}}]}
    )
    out = run(openai)
    assert out["metadata"]["format"] == "sse-openai"
    assert [c["name"] for c in out["toolCalls"]] == ["lookup"]
    vercel = '0:"Hel"\n0:"lo"\nd:{"finishReason":"stop"}\n'
    assert run(vercel)["metadata"]["format"] == "sse-vercel"
    assert run(vercel)["text"] == "Hello"
    assert run('data: {"other": 1}\n\n')["metadata"]["format"] == "text"
