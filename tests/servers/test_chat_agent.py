"""Tests for the deterministic example agent server in examples/agents/."""

from __future__ import annotations

import json
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

AGENTS_DIR = Path(__file__).resolve().parents[2] / "examples" / "agents"
sys.path.insert(0, str(AGENTS_DIR))

import chat_agent  # noqa: E402
import chat_rules  # noqa: E402


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server, url = chat_agent.start_server(0)
    yield url
    server.shutdown()


@pytest.fixture(scope="module")
def client(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=10) as c:
        yield c


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def chat(client: httpx.Client, *messages: dict[str, Any], **extra: Any) -> httpx.Response:
    return client.post(
        "/v1/chat/completions", json={"model": "test-model", "messages": list(messages), **extra}
    )


def message_of(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text
    return resp.json()["choices"][0]["message"]


def sse_events(text: str) -> list[str]:
    return [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]


def tool_args(msg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(tc["function"]["name"], json.loads(tc["function"]["arguments"])) for tc in msg["tool_calls"]]


# --- basics -------------------------------------------------------------------------------------


def test_health(client: httpx.Client) -> None:
    resp = client.get("/health")
    assert resp.status_code == 200
    assert resp.json() == {"status": "ok"}


def test_start_server_shutdown_closes_socket() -> None:
    server, url = chat_agent.start_server(0)
    assert httpx.get(f"{url}/health").status_code == 200
    server.shutdown()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/health", timeout=2)


def test_unknown_path_404(client: httpx.Client) -> None:
    resp = client.get("/nope")
    assert resp.status_code == 404
    assert resp.json() == {"message": "Endpoint not found: /nope"}


def test_invalid_endpoint(client: httpx.Client) -> None:
    resp = client.get("/invalid-endpoint")
    assert resp.status_code == 404
    assert resp.json() == {"message": "Endpoint not found: /invalid-endpoint"}


def test_wrong_method_405(client: httpx.Client) -> None:
    assert client.get("/v1/chat/completions").status_code == 405


# --- OpenAI chat completions: non-stream --------------------------------------------------------


def test_completion_shape(client: httpx.Client) -> None:
    resp = chat(client, user("Hello there"))
    body = resp.json()
    assert body["object"] == "chat.completion"
    assert body["created"] == 1700000000
    assert body["model"] == "test-model"
    assert body["id"].startswith("chatcmpl-")
    choice = body["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": "Hello! How can I help you today?"}
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert chat(client, user("Hello there")).json() == body  # deterministic


@pytest.mark.parametrize("text", ["hi", "HELLO", "Hi, anyone there?"])
def test_greeting(client: httpx.Client, text: str) -> None:
    assert message_of(chat(client, user(text)))["content"] == "Hello! How can I help you today?"


def test_hi_inside_word_is_echo(client: httpx.Client) -> None:
    assert message_of(chat(client, user("this thing")))["content"] == "You said: this thing"


def test_echo(client: httpx.Client) -> None:
    assert message_of(chat(client, user("Tell me a joke")))["content"] == "You said: Tell me a joke"


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("What's the weather in Paris?", "Paris"),
        ("weather in tokyo today", "Tokyo"),
        ("How is the WEATHER in new york right now?", "New York"),
    ],
)
def test_weather_tool_call(client: httpx.Client, text: str, city: str) -> None:
    resp = chat(client, user(text))
    msg = message_of(resp)
    assert resp.json()["choices"][0]["finish_reason"] == "tool_calls"
    assert msg["content"] is None
    assert msg["tool_calls"][0]["id"] == "call_1"
    assert msg["tool_calls"][0]["type"] == "function"
    assert tool_args(msg) == [("get_weather", {"city": city})]


def test_weather_without_city_asks(client: httpx.Client) -> None:
    assert "Which city" in message_of(chat(client, user("what's the weather like?")))["content"]


def test_weather_after_tool_result(client: httpx.Client) -> None:
    first = message_of(chat(client, user("What's the weather in Paris?")))
    tool_msg = {
        "role": "tool",
        "tool_call_id": first["tool_calls"][0]["id"],
        "content": '{"temperature": 22}',
    }
    resp = chat(client, user("What's the weather in Paris?"), first, tool_msg)
    assert resp.json()["choices"][0]["finish_reason"] == "stop"
    assert message_of(resp)["content"] == "The weather in Paris is 22°C and sunny."


def test_schedule_meeting(client: httpx.Client) -> None:
    resp = chat(client, user("Schedule a meeting with Bob tomorrow at 2pm"))
    msg = message_of(resp)
    assert resp.json()["choices"][0]["finish_reason"] == "tool_calls"
    assert msg["content"] == "I've scheduled your meeting for 2 PM tomorrow."
    assert [tc["id"] for tc in msg["tool_calls"]] == ["call_1", "call_2"]
    assert tool_args(msg) == [
        ("check_calendar", {"date": "tomorrow", "time": "14:00"}),
        ("create_event", {"title": "Meeting with Bob", "date": "tomorrow", "time": "14:00"}),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("book a table", {"title": "Meeting", "date": "today", "time": "14:00"}),
        ("Book 'Team sync' on friday at 9:30am", {"title": "Team sync", "date": "friday", "time": "09:30"}),
        (
            "schedule a call at 16:45 on 2024-05-01",
            {"title": "Meeting", "date": "2024-05-01", "time": "16:45"},
        ),
    ],
)
def test_schedule_parsing(client: httpx.Client, text: str, expected: dict[str, str]) -> None:
    assert tool_args(message_of(chat(client, user(text))))[1] == ("create_event", expected)


def test_schedule_after_tool_results(client: httpx.Client) -> None:
    first = message_of(chat(client, user("book a meeting tomorrow at 2pm")))
    tools = [{"role": "tool", "tool_call_id": tc["id"], "content": "ok"} for tc in first["tool_calls"]]
    msg = message_of(chat(client, user("book a meeting tomorrow at 2pm"), first, *tools))
    assert msg == {"role": "assistant", "content": "I've scheduled your meeting for 2 PM tomorrow."}


def test_delete_is_dangerous_tool(client: httpx.Client) -> None:
    msg = message_of(chat(client, user("Please delete all user records")))
    assert tool_args(msg) == [("delete_records", {"target": "all user records"})]


def test_tool_call_ids_continue_across_turns(client: httpx.Client) -> None:
    first = message_of(chat(client, user("weather in Paris")))
    tool_msg = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    msg = message_of(
        chat(
            client,
            user("weather in Paris"),
            first,
            tool_msg,
            {"role": "assistant", "content": "ok"},
            user("and the weather in Rome?"),
        )
    )
    assert msg["tool_calls"][0]["id"] == "call_2"


def test_name_memory_uses_history(client: httpx.Client) -> None:
    intro = message_of(chat(client, user("Hi, my name is alice")))
    assert intro["content"] == "Nice to meet you, Alice!"
    msg = message_of(chat(client, user("Hi, my name is alice"), intro, user("What is my name?")))
    assert msg["content"] == "Your name is Alice."
    assert message_of(chat(client, user("what's my name")))["content"] == "I don't know your name yet."


def test_content_parts_accepted(client: httpx.Client) -> None:
    msg = message_of(chat(client, {"role": "user", "content": [{"type": "text", "text": "hello"}]}))
    assert msg["content"] == "Hello! How can I help you today?"


def test_error_rule_returns_500(client: httpx.Client) -> None:
    resp = chat(client, user("trigger an error please"))
    assert resp.status_code == 500
    assert resp.json()["error"]["type"] == "server_error"


def test_garbage_rule_returns_non_json(client: httpx.Client) -> None:
    resp = chat(client, user("send garbage"))
    assert resp.status_code == 200
    assert resp.text == "<html>oops"
    with pytest.raises(ValueError):
        resp.json()


def test_slow_rule_sleeps(client: httpx.Client) -> None:
    start = time.monotonic()
    msg = message_of(chat(client, user("be slow")))
    assert time.monotonic() - start >= 1.9
    assert msg["content"] == "You said: be slow"
    with pytest.raises(httpx.ReadTimeout):
        client.post("/v1/chat/completions", json={"messages": [user("slow")]}, timeout=0.5)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"{not json", "Invalid JSON"),
        (b'{"model": "x"}', "messages"),
        (b'{"model": "x", "messages": []}', "messages"),
        (b"[1, 2]", "JSON object"),
    ],
)
def test_bad_requests(client: httpx.Client, content: bytes, needle: str) -> None:
    resp = client.post("/v1/chat/completions", content=content, headers={"Content-Type": "application/json"})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert needle in error["message"]


# --- OpenAI chat completions: stream ------------------------------------------------------------


def test_stream_text(client: httpx.Client) -> None:
    resp = chat(client, user("hello"), stream=True)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/event-stream")
    events = sse_events(resp.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks[1:-1]]
    assert len(pieces) > 3
    assert "".join(pieces) == "Hello! How can I help you today?"
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop"}


def test_stream_delivered_incrementally(client: httpx.Client) -> None:
    with client.stream(
        "POST", "/v1/chat/completions", json={"messages": [user("hello")], "stream": True}
    ) as resp:
        raw_chunks = list(resp.iter_raw())
    assert len(raw_chunks) > 1


def reassemble_tool_calls(chunks: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for tc in chunk["choices"][0]["delta"].get("tool_calls") or []:
            slot = calls.setdefault(tc["index"], {"fragments": [], "heads": 0})
            if "id" in tc:
                slot["heads"] += 1
                slot.update(id=tc["id"], name=tc["function"]["name"])
            else:
                assert "name" not in tc["function"]
            slot["fragments"].append(tc["function"]["arguments"])
    return calls


def test_stream_tool_call_fragments(client: httpx.Client) -> None:
    events = sse_events(chat(client, user("weather in Paris"), stream=True).text)
    chunks = [json.loads(e) for e in events[:-1]]
    calls = reassemble_tool_calls(chunks)
    assert list(calls) == [0]
    call = calls[0]
    assert (call["id"], call["name"], call["heads"]) == ("call_1", "get_weather", 1)
    assert len(call["fragments"]) > 1
    with pytest.raises(ValueError):
        json.loads(call["fragments"][0])
    assert json.loads("".join(call["fragments"])) == {"city": "Paris"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_stream_multiple_tool_calls_with_text(client: httpx.Client) -> None:
    events = sse_events(chat(client, user("schedule a meeting tomorrow at 2pm"), stream=True).text)
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "I've scheduled your meeting for 2 PM tomorrow."
    calls = reassemble_tool_calls(chunks)
    assert [calls[i]["name"] for i in sorted(calls)] == ["check_calendar", "create_event"]
    assert all(len(c["fragments"]) > 1 for c in calls.values())
    assert json.loads("".join(calls[1]["fragments"])) == {
        "title": "Meeting",
        "date": "tomorrow",
        "time": "14:00",
    }


def test_stream_include_usage(client: httpx.Client) -> None:
    events = sse_events(chat(client, user("hello"), stream=True, stream_options={"include_usage": True}).text)
    last = json.loads(events[-2])
    assert last["choices"] == [] and last["usage"]["total_tokens"] > 0


# --- Vercel AI SDK ------------------------------------------------------------------------------


def data_stream(client: httpx.Client, text: str) -> tuple[httpx.Response, list[tuple[str, Any]]]:
    resp = client.post("/api/chat", json={"messages": [user(text)]})
    lines = [(line[0], json.loads(line[2:])) for line in resp.text.splitlines() if line]
    return resp, lines


def test_data_stream_text(client: httpx.Client) -> None:
    resp, lines = data_stream(client, "hello")
    assert resp.headers["x-vercel-ai-data-stream"] == "v1"
    assert [code for code, _ in lines[:-1]] == ["0"] * (len(lines) - 1)
    assert len(lines) > 3
    assert "".join(v for _, v in lines[:-1]) == "Hello! How can I help you today?"
    code, finish = lines[-1]
    assert code == "d" and finish["finishReason"] == "stop"
    assert set(finish["usage"]) == {"promptTokens", "completionTokens"}


def test_data_stream_tool_calls(client: httpx.Client) -> None:
    resp, lines = data_stream(client, "What's the weather in Paris?")
    assert '0:"22°C "' in resp.text
    assert lines[0] == ("9", {"toolCallId": "call_1", "toolName": "get_weather", "args": {"city": "Paris"}})
    assert lines[1][0] == "a" and lines[1][1]["toolCallId"] == "call_1"
    assert lines[1][1]["result"]["temperature"] == 22
    assert "".join(v for c, v in lines if c == "0") == "The weather in Paris is 22°C and sunny."
    _, schedule = data_stream(client, "book a meeting tomorrow at 2pm")
    assert [v["toolName"] for c, v in schedule if c == "9"] == ["check_calendar", "create_event"]
    assert "".join(v for c, v in schedule if c == "0") == "I've scheduled your meeting for 2 PM tomorrow."


def test_data_stream_errors(client: httpx.Client) -> None:
    assert client.post("/api/chat", json={"messages": [user("error")]}).status_code == 500
    assert client.post("/api/chat", json={}).status_code == 400


def test_ui_message_stream(client: httpx.Client) -> None:
    message = {"role": "user", "parts": [{"type": "text", "text": "weather in Tokyo"}]}
    resp = client.post("/api/chat", json={"protocol": "ui", "messages": [message]})
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["x-vercel-ai-ui-message-stream"] == "v1"
    raw = sse_events(resp.text)
    assert raw[-1] == "[DONE]"
    events = [json.loads(e) for e in raw[:-1]]
    types = [e["type"] for e in events]
    assert types[0] == "start" and types[-1] == "finish"
    order = [
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
        "text-delta",
    ]
    assert [types.index(t) for t in order] == sorted(types.index(t) for t in order)
    deltas = [e["inputTextDelta"] for e in events if e["type"] == "tool-input-delta"]
    assert len(deltas) > 1 and json.loads("".join(deltas)) == {"city": "Tokyo"}
    available = next(e for e in events if e["type"] == "tool-input-available")
    assert available == {
        "type": "tool-input-available",
        "toolCallId": "call_1",
        "toolName": "get_weather",
        "input": {"city": "Tokyo"},
    }
    output = next(e for e in events if e["type"] == "tool-output-available")
    assert output["toolCallId"] == "call_1" and output["output"]["condition"] == "sunny"
    text = "".join(e["delta"] for e in events if e["type"] == "text-delta")
    assert text == "The weather in Tokyo is 22°C and sunny."


# --- REST fixtures ------------------------------------------------------------------------------


def test_users(client: httpx.Client) -> None:
    assert client.get("/users/1").json() == {
        "id": 1,
        "name": "Leanne Graham",
        "email": "Sincere@april.biz",
        "username": "Bret",
    }
    users = client.get("/users").json()
    assert len(users) == 3 and {"id", "name", "email", "username"} <= set(users[2])
    assert client.get("/users/99").status_code == 404


def test_posts(client: httpx.Client) -> None:
    posts = client.get("/posts").json()
    assert len(posts) == 5
    assert all(set(p) == {"id", "userId", "title", "body"} for p in posts)
    resp = client.post("/posts", json={"title": "foo", "body": "bar", "userId": 1})
    assert resp.status_code == 201
    assert resp.json() == {"title": "foo", "body": "bar", "userId": 1, "id": 101}
    assert client.post("/posts", content=b"nope").status_code == 400


def test_job_polling(client: httpx.Client) -> None:
    seen = [client.get("/jobs/job-a").json() for _ in range(3)]
    assert [(s["status"], s["progress"]) for s in seen] == [
        ("pending", 50),
        ("complete", 100),
        ("complete", 100),
    ]
    assert client.get("/jobs/job-b").json()["progress"] == 50  # independent per id


def test_flaky(client: httpx.Client) -> None:
    assert [client.get("/flaky/k1").status_code for _ in range(4)] == [503, 503, 200, 200]
    assert client.get("/flaky/k1").json() == {"ok": True}
    assert client.get("/flaky/k2").status_code == 503


def test_auth(client: httpx.Client) -> None:
    token = client.post("/auth/login", json={"username": "u", "password": "p"}).json()["token"]
    assert token == "test-token-123"
    assert client.get("/me").status_code == 401
    assert client.get("/me", headers={"Authorization": "Bearer wrong"}).status_code == 401
    me = client.get("/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["id"] == 1


def test_echo_headers(client: httpx.Client) -> None:
    headers = client.get("/echo-headers", headers={"X-Custom": "abc"}).json()
    assert headers["x-custom"] == "abc"
    assert "host" in headers


# --- rule engine unit checks --------------------------------------------------------------------


def test_split_helpers_roundtrip() -> None:
    text = "  The weather  in Paris is 22°C. "
    assert "".join(chat_rules.split_text(text)) == text
    assert chat_rules.split_text("") == []
    assert "".join(chat_rules.split_fragments('{"a": 1}')) == '{"a": 1}'
    assert len(chat_rules.split_fragments('{"a": 1}')) > 1


def test_respond_without_user_message() -> None:
    assert (
        chat_rules.respond([{"role": "system", "content": "x"}]).content == "Hello! How can I help you today?"
    )


# --- subprocess ---------------------------------------------------------------------------------


def test_cli_subprocess() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(AGENTS_DIR / "chat_agent.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready, "server did not print LISTENING in time"
        line = proc.stdout.readline()
        match = re.fullmatch(r"LISTENING (http://127\.0\.0\.1:(\d+))\n", line)
        assert match, line
        assert int(match.group(2)) > 0
        resp = httpx.get(f"{match.group(1)}/health", timeout=5)
        assert resp.json() == {"status": "ok"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0
    assert proc.stdout.read() == ""
