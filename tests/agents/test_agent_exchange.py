"""The one agent exchange (agents/exchange.py) against a real loopback server: the typed reply of a
success and of each way an exchange fails, the test id header, the deadline and secret masking."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest

from pytest_semantictest.agents.errors import AgentError
from pytest_semantictest.agents.exchange import TEST_HEADER, AgentReply, AgentRequest, exchange, json_bytes
from pytest_semantictest.redact import Redactor
from tests.servers.quiet import QuietHandler, in_thread

SECRET = "s3cr3t-token-value"


class _Agent(QuietHandler):
    """``/chat`` echoes what it was sent as an OpenAI completion with a tool call; ``/status?code=N``
    answers N with a body naming the secret; ``/slow`` waits 3 s; ``/empty``; ``/moved``; ``/text``."""

    def serve(self, body: bytes) -> None:
        url = urlparse(self.path)
        if url.path == "/slow":
            time.sleep(3)
        if url.path == "/moved":
            return self._send(302, b"", {"Location": "http://127.0.0.1:1/elsewhere"})
        if url.path == "/status":
            code = int(parse_qs(url.query)["code"][0])
            return self._send(code, f"failed for {SECRET}".encode(), {"Content-Type": "text/plain"})
        if url.path == "/empty":
            return self._send(200, b"", {})
        if url.path == "/text":
            return self._send(
                200, "h\u00e9llo".encode("latin-1"), {"Content-Type": "text/plain; charset=latin-1"}
            )
        echoed = {"test_id": self.headers.get(TEST_HEADER), "body": json.loads(body or b"null")}
        reply = {
            "choices": [
                {
                    "message": {
                        "content": json.dumps(echoed),
                        "tool_calls": [{"function": {"name": "lookup", "arguments": '{"q": "x"}'}}],
                    }
                }
            ]
        }
        self._send(200, json.dumps(reply).encode(), {"Content-Type": "application/json", "X-Agent": "echo"})

    def _send(self, code: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(code)
        for name, value in {**headers, "Content-Length": str(len(data))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with in_thread(_Agent) as url:
        yield url


def _exchange(url: str, *, timeout_ms: float = 5000, response_path: str | None = None) -> AgentReply:
    request = AgentRequest(
        "POST",
        url,
        {TEST_HEADER: "t-1", "Content-Type": "application/json"},
        json_bytes({"messages": [{"role": "user", "content": "hi"}]}),
        "t-1",
        timeout_ms,
        response_path,
        Redactor([SECRET]),
    )
    return asyncio.run(exchange(None, request))


def test_a_reply_is_typed_status_headers_body_text_tool_calls_duration(base: str) -> None:
    reply = _exchange(base + "/chat")
    assert reply.error is None and reply.status == 200 and reply.test_id == "t-1"
    assert reply.headers["x-agent"] == "echo" and reply.headers["content-type"] == "application/json"
    assert json.loads(reply.text) == {
        "test_id": "t-1",
        "body": {"messages": [{"role": "user", "content": "hi"}]},
    }
    assert json.loads(reply.raw)["choices"][0]["message"]["content"] == reply.text
    assert [(c.fn, c.args) for c in reply.tool_calls or []] == [("lookup", {"q": "x"})]
    assert reply.elapsed_ms > 0 and reply.checked() is reply


def test_the_body_is_decoded_with_its_charset(base: str) -> None:
    assert _exchange(base + "/text").text == "h\u00e9llo"


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/status?code=500", 500, "HTTP 500 from {url}: failed for ***"),
        (
            "/moved",
            302,
            "HTTP 302 from {url}: redirected to http://127.0.0.1:1/elsewhere; set the endpoint to that URL",
        ),
        ("/empty", 200, "the agent replied with an empty body (HTTP 200)"),
    ],
)
def test_a_reply_that_fails_the_rules_keeps_its_status_and_says_why_masked(
    base: str, path: str, status: int, error: str
) -> None:
    reply = _exchange(base + path)
    assert (reply.status, reply.error) == (status, error.format(url=base + path))
    assert SECRET not in (reply.error or "") and reply.text == "" and reply.tool_calls is None
    with pytest.raises(AgentError, match="HTTP|empty body"):
        reply.checked()


def test_a_response_path_that_names_nothing_is_the_error(base: str) -> None:
    reply = _exchange(base + "/chat", response_path="answer")
    assert (
        reply.status == 200 and reply.error is not None and reply.error.startswith("response path 'answer'")
    )


def test_no_response_is_status_0_with_the_reason() -> None:
    reply = _exchange("http://127.0.0.1:9/chat")
    assert (
        reply.status == 0
        and reply.error is not None
        and reply.error.startswith("cannot reach http://127.0.0.1:9")
    )


def test_the_deadline_bounds_the_whole_exchange(base: str) -> None:
    start = time.perf_counter()
    reply = _exchange(base + "/slow", timeout_ms=500)
    assert time.perf_counter() - start < 2.5
    assert (reply.status, reply.error) == (0, "no response in 0.5s (timeout)")
