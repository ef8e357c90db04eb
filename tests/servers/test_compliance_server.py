"""The example compliance server's contract (examples/agents/compliance_server.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "agents"))

import compliance_auth  # noqa: E402
import compliance_server  # noqa: E402


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    server, url = compliance_server.start_server(0)
    with httpx.Client(base_url=url, timeout=10) as c:
        yield c
    server.shutdown()


def chat(client: httpx.Client, model: str, text: str, **extra: Any) -> httpx.Response:
    return client.post(
        "/chat/completions", json={"model": model, "messages": [{"role": "user", "content": text}], **extra}
    )


def sse(response: httpx.Response) -> list[Any]:
    lines = [line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")]
    return [line if line == "[DONE]" else json.loads(line) for line in lines]


def test_request_validation(client: httpx.Client) -> None:
    bad = client.post(
        "/chat/completions", content=b"{invalid json}", headers={"Content-Type": "application/json"}
    )
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    assert (
        client.post("/chat/completions", json={"messages": [{"role": "user", "content": "x"}]}).status_code
        == 400
    )
    assert client.post("/chat/completions", json={"model": "echo-agent", "messages": []}).status_code == 400
    missing = chat(client, "no-such-agent", "Hi")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "model_not_found"


def test_echo_and_streaming_with_done(client: httpx.Client) -> None:
    body = chat(client, "echo-agent", "Hello").json()
    assert body["choices"][0]["message"]["content"] == "Echo: Hello" and body["model"] == "echo-agent"
    events = sse(chat(client, "verbose-agent", "Tell me a story", stream=True))
    assert events[-1] == "[DONE]" and all(e["object"] == "chat.completion.chunk" for e in events[:-1])
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1]).count(".") >= 3


def test_tools_offered_in_the_request(client: httpx.Client) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "weather",
            "parameters": {"type": "object", "properties": {"location": {}}, "required": ["location"]},
        },
    }
    two = chat(client, "tool-agent", "Compare weather in NYC and LA", tools=[tool]).json()["choices"][0]
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in two["message"]["tool_calls"]
    ]
    assert calls == [("get_weather", {"location": "NYC"}), ("get_weather", {"location": "LA"})]
    assert two["finish_reason"] == "tool_calls"
    none = chat(client, "tool-agent", "Weather in NYC?", tools=[tool], tool_choice="none").json()["choices"][
        0
    ]
    assert "tool_calls" not in none["message"] and none["finish_reason"] == "stop"
    wrong = client.post(
        "/chat/completions",
        json={
            "model": "tool-agent",
            "tools": [tool],
            "messages": [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "other", "content": "{}"},
            ],
        },
    )
    assert wrong.status_code == 400 and "matches no tool call" in wrong.json()["error"]["message"]


def test_handoffs_are_events_and_an_offline_target_fails(client: httpx.Client) -> None:
    body = chat(client, "router", "What is 42 * 17?").json()
    assert body["model"] == "calculator-agent" and "714" in body["choices"][0]["message"]["content"]
    assert [(e["type"], e["from"], e["to"], e["status"]) for e in body["events"]] == [
        ("handoff", "router", "calculator-agent", "completed")
    ]
    client.put("/agents/calculator-agent", json={"tools": ["calculate"], "available": False})
    failed = chat(client, "router", "What is 2 * 3?").json()
    assert failed["model"] == "router" and failed["events"][0]["status"] == "failed"
    assert client.post("/reset").status_code == 200
    assert client.get("/agents/calculator-agent").json()["available"] is True


def test_token_auth(client: httpx.Client) -> None:
    url = "/agents/protected-agent/chat/completions"
    payload = {"messages": [{"role": "user", "content": "data"}]}
    assert client.post(url, json=payload).json()["error"]["type"] == "authentication_error"
    token = client.post(
        "/agents/client-agent/auth/token", data={"grant_type": "client_credentials", "scope": "read"}
    )
    access = token.json()["access_token"]
    assert client.post(url, json=payload, headers={"Authorization": f"Bearer {access}"}).status_code == 200
    expired = compliance_auth.mint("i", "s", ["read"], expires_in=-1)
    rejected = client.post(url, json=payload, headers={"Authorization": f"Bearer {expired}"})
    assert rejected.status_code == 401 and rejected.json()["error"]["code"] == "token_expired"
    scope = client.post(
        "/agents/protected-agent/admin/action", json={}, headers={"Authorization": f"Bearer {access}"}
    )
    assert scope.status_code == 403 and scope.json()["error"]["type"] == "insufficient_scope"
    assert client.get("/agents/protected-agent/.well-known/jwks.json").json()["keys"][0]["kty"] == "RSA"


def test_api_key(client: httpx.Client) -> None:
    server, url = compliance_server.start_server(0, api_key="sk-example-1234")
    try:
        with httpx.Client(base_url=url) as keyed:
            assert chat(keyed, "echo-agent", "Hi").status_code == 401
            ok = keyed.post(
                "/chat/completions",
                headers={"Authorization": "Bearer sk-example-1234"},
                json={"model": "echo-agent", "messages": [{"role": "user", "content": "Hi"}]},
            )
            assert ok.status_code == 200
    finally:
        server.shutdown()


def test_the_signature_is_the_key_s_own() -> None:
    """Tokens are signed modulo each prime of the example key: the same signature as ``pow(m, D, N)``."""
    assert compliance_auth.P * compliance_auth.Q == compliance_auth.N
    for message in (2, 12345678901234567890, compliance_auth.N - 2):
        assert compliance_auth._sign(message) == pow(message, compliance_auth.D, compliance_auth.N)
