"""protocol.send against the real trace agent: request shape, reply rules, errors, tool calls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from agent_helpers import agent_command

from pytest_semantictest.agents import (
    AgentConfig,
    AgentError,
    AgentProcess,
    AgentReply,
    ToolCall,
    TraceReader,
    classify,
    new_test_id,
    resolve_correlate,
    send,
)
from tests.ports import free_port


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentProcess]:
    tmp = tmp_path_factory.mktemp("protocol")
    port = free_port()
    cfg = AgentConfig(
        endpoint=f"http://127.0.0.1:{port}/chat",
        start=agent_command(port),
        health=f"http://127.0.0.1:{port}/health",
        cwd=tmp,
        log_dir=tmp / "logs",
        timeout_ms=5000,
    )
    process = AgentProcess(cfg)
    process.start(require_hello=True)
    yield process
    process.stop()


def cfg_for(agent: AgentProcess, path: str = "/chat", **changes: Any) -> AgentConfig:
    base = agent.config.endpoint.rsplit("/", 1)[0]
    return replace(agent.config, endpoint=base + path, **changes)


def call(cfg: AgentConfig, message: str = "hello", test_id: str | None = None, **kw: Any) -> AgentReply:
    async def go() -> AgentReply:
        async with httpx.AsyncClient(trust_env=False) as client:
            return await send(client, cfg, message, test_id or new_test_id(), **kw)

    return asyncio.run(go())


def echoed(reply: AgentReply) -> tuple[dict[str, Any], str]:
    return reply.data["headers"], reply.data["body"]


def test_chat_reply_and_tagged_trace_records(agent):
    reader = TraceReader(agent.traces_path)
    reader.skip_to_end()
    tid = new_test_id()
    reply = call(cfg_for(agent), "Please cancel order 1042", tid)
    assert reply.text == "Order 1042 has been cancelled." and reply.status == 200 and reply.tool_calls is None
    other = call(cfg_for(agent), "where is order 77", new_test_id())
    assert other.text == "Sorry, I did not understand."  # 77 is not an order number (3+ digits)
    batch = reader.read_new()
    mine = classify(batch, resolve_correlate({"test": "{{test.id}}"}, tid))
    assert [(t.fn, t.args) for t in mine.mine_tools] == [
        ("get_order", {"order_id": "1042"}),
        ("cancel_order", {"order_id": "1042"}),
    ]
    assert mine.mine_tools[0].result == {"status": "shipped"} and len(mine.mine_turns) == 1
    assert mine.other == 1  # the other execution's turn record
    greeting = new_test_id()
    assert call(cfg_for(agent), "hello there", greeting).text == "Hello! How can I help?"
    only_turn = classify(reader.read_new(), resolve_correlate({"test": "{{test.id}}"}, greeting))
    assert only_turn.mine_tools == [] and only_turn.observed  # no tool, but the turn proves it was seen


def test_default_request_shape(agent):
    tid = new_test_id()
    reply = call(cfg_for(agent, "/echo"), 'say "hi"\n', tid)
    headers, body = echoed(reply)
    assert body == '{"message":"say \\"hi\\"\\n"}'  # compact, JSON-escaped
    assert headers["content-type"] == "application/json" and headers["x-highbar-test"] == tid
    assert reply.data["method"] == "POST"


def test_custom_body_headers_and_method(agent):
    cfg = cfg_for(
        agent,
        "/echo",
        request_method="PUT",
        request_headers={
            "Authorization": "Bearer tok",
            "x-highbar-test": "spoofed",
            "X-Name": "{{test.name}}",
        },
        request_body={"input": {"text": "<{{message}}>", "raw": "{{message}}"}, "stream": False, "n": [1]},
    )
    reply = call(cfg, "über {json}", "tid1", test_name="my test")
    headers, body = echoed(reply)
    assert json.loads(body) == {
        "input": {"text": "<über {json}>", "raw": "über {json}"},
        "stream": False,
        "n": [1],
    }
    assert headers["authorization"] == "Bearer tok" and headers["x-name"] == "my test"
    assert headers["x-highbar-test"] == "tid1"  # always ours, whatever the config says
    assert reply.data["method"] == "PUT"


def test_string_body_is_text_plain_and_session_headers_apply(agent):
    cfg = cfg_for(agent, "/echo", request_body="Q: {{message}}")
    reply = call(cfg, "why", session={"headers": {"X-Session": "s1"}})
    headers, body = echoed(reply)
    assert (
        body == "Q: why" and headers["content-type"].startswith("text/plain") and headers["x-session"] == "s1"
    )


def test_response_path(agent):
    body = {"data": {"items": [{"text": "{{message}}"}], "n": 3}}
    assert (
        call(cfg_for(agent, "/mirror", request_body=body, response_path="data.items.0.text"), "deep").text
        == "deep"
    )
    assert call(cfg_for(agent, "/mirror", request_body=body, response_path="data.n"), "x").text == "3"
    with pytest.raises(AgentError, match="response path 'data.items.5.text': index 5 is out of range"):
        call(cfg_for(agent, "/mirror", request_body=body, response_path="data.items.5.text"))
    with pytest.raises(AgentError, match="no key 'reply'"):
        call(cfg_for(agent, "/mirror", request_body=body, response_path="data.reply"))


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"message": "{{message}}", "response": 7}, "7"),
        ({"text": "{{message}}"}, "hi"),
        ({"reply": True}, "true"),
    ],
)
def test_default_reply_keys(agent, body, text):
    assert call(cfg_for(agent, "/mirror", request_body=body), "hi").text == text


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"response": None, "m": "{{message}}"}, "the reply's 'response' is null"),
        ({"content": {"a": "{{message}}"}}, "the reply's 'content' is a JSON object, not text"),
        ({"other": "{{message}}"}, "the JSON reply has none of response, message, content, text, reply"),
    ],
)
def test_default_reply_key_errors(agent, body, error):
    with pytest.raises(AgentError, match=error):
        call(cfg_for(agent, "/mirror", request_body=body))


def test_plain_text_reply(agent):
    reply = call(cfg_for(agent, "/text"))
    assert reply.text == "just plain words" and reply.data is None and reply.tool_calls is None
    plain = cfg_for(agent, "/mirror?ct=text%2Fplain", request_body="[1, {{message}}]")
    assert call(plain, "2").text == "[1, 2]"  # text that parses as a JSON list stays text
    with pytest.raises(AgentError, match="not a JSON object, so response path 'a' cannot be read"):
        call(cfg_for(agent, "/text", response_path="a"))
    with pytest.raises(AgentError, match="says it is JSON but is not valid JSON"):
        call(cfg_for(agent, "/mirror", request_body="{{message}}"), "not json")


def test_redirect_is_an_error_naming_location(agent):
    with pytest.raises(AgentError, match="HTTP 302 .* redirected to http://127.0.0.1/elsewhere"):
        call(cfg_for(agent, "/redirect"))


@pytest.mark.parametrize("status", [404, 500, 503])
def test_error_status_shows_body_excerpt(agent, status):
    with pytest.raises(AgentError) as info:
        call(cfg_for(agent, f"/status/{status}"))
    message = str(info.value)
    assert f"HTTP {status} from" in message and "the agent broke: xxx" in message
    assert len(message) < 400  # an excerpt, not the whole body


def test_empty_reply(agent):
    with pytest.raises(AgentError, match="empty body"):
        call(cfg_for(agent, "/empty"))


@pytest.mark.parametrize("path", ["/big", "/big?declared=0"])
def test_too_large_reply(agent, path):
    with pytest.raises(AgentError, match="larger than 10 MB"):
        call(cfg_for(agent, path))


def test_timeout_is_a_whole_body_deadline(agent):
    with pytest.raises(AgentError, match=r"no response in 0.4s"):
        call(cfg_for(agent, "/slow", timeout_ms=400))
    with pytest.raises(AgentError, match=r"no response in 0.5s"):  # bytes keep coming, the deadline holds
        call(cfg_for(agent, "/trickle", timeout_ms=500))


def test_unreachable_endpoint():
    cfg = AgentConfig(endpoint=f"http://127.0.0.1:{free_port()}/chat", cwd=Path.cwd())
    with pytest.raises(AgentError, match="cannot reach"):
        call(cfg)


def test_secrets_are_masked_in_errors(agent):
    cfg = cfg_for(agent, "/status/500", secrets=["127.0.0.1"])
    with pytest.raises(AgentError) as info:
        call(cfg)
    assert "127.0.0.1" not in str(info.value) and "***" in str(info.value)


def test_without_a_client(agent):
    async def go() -> AgentReply:
        return await send(None, cfg_for(agent), "hello", "t")

    assert asyncio.run(go()).text == "Hello! How can I help?"


# --- beyond highbar: tool calls in the reply --------------------------------------------------------


def test_openai_reply_tool_calls(agent):
    reply = call(cfg_for(agent, "/openai"))
    assert reply.text == "" and reply.tool_calls == [ToolCall("get_order", {"order_id": "1042"})]
    with_text = call(cfg_for(agent, "/openai?content"))
    assert with_text.text == "Looking it up." and len(with_text.tool_calls or []) == 1


def test_simple_reply_tool_calls(agent):
    reply = call(cfg_for(agent, "/simple"))
    assert reply.text == "done"
    assert reply.tool_calls == [
        ToolCall("get_order", {"order_id": "1042"}, {"status": "shipped"}),
        ToolCall("cancel_order", {"order_id": "1042"}, None, "not allowed"),
    ]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"reply": "{{message}}", "tool_calls": {"name": "x"}}, "'tool_calls' must be a list"),
        ({"reply": "{{message}}", "tool_calls": [{"args": {}}]}, r"tool_calls\[0\] has no 'name'"),
        (
            {"reply": "{{message}}", "tool_calls": [{"name": "a", "arguments": "{oops"}]},
            "arguments is not valid JSON",
        ),
        (
            {"reply": "{{message}}", "tool_calls": [{"name": "a", "arguments": [1]}]},
            "arguments must be an object",
        ),
        (
            {"choices": [{"message": {"content": None}}], "m": "{{message}}"},
            "content is null and there are no tool calls",
        ),
    ],
)
def test_reply_tool_call_errors(agent, body, error):
    with pytest.raises(AgentError, match=error):
        call(cfg_for(agent, "/mirror", request_body=body))


def test_openai_shapes_without_calls(agent):
    body = {
        "choices": [{"message": {"role": "assistant", "content": [{"type": "text", "text": "{{message}}"}]}}]
    }
    reply = call(cfg_for(agent, "/mirror", request_body=body), "parts")
    assert reply.text == "parts" and reply.tool_calls == []
    explicit = call(cfg_for(agent, "/mirror", request_body={"reply": "{{message}}", "tool_calls": None}), "x")
    assert explicit.tool_calls == []
