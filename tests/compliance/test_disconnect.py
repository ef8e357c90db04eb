"""A case whose behaviour says the client disconnects after N chunks: the stream is cut after N
chunks, the connection closed, one follow-up request sent, and the judge told about both."""

from __future__ import annotations

import json
import select
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pytest_semantictest.blocks.chat_response import count_chunks
from pytest_semantictest.formats.compliance.prose import disconnect_after
from tests.compliance.conftest import CORPUS, compliance_server, doc
from tests.compliance.test_judged import verdicts
from tests.compliance.test_requests import compiled, request_of
from tests.llm.fake_openai import FakeOpenAI
from tests.shared import needs_corpus

pytest_plugins = ["pytester"]

STREAMING = CORPUS / "transport" / "completions-streaming.md"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Client disconnects after receiving 3 chunks.", 3),
        ("disconnect after 3 chunks", 3),
        ("The client cancels after 5 chunks", 5),
        ("Client cancels the stream after the first 2 SSE chunks", 2),
        ("The client closes the connection after one chunk.", 1),
        ("Client stops reading after the first chunk", 1),
        ("Client aborts the request after receiving two data chunks", 2),
        ("Client\ndisconnects after\nreceiving 4 chunks", 4),
        ("Client drops the connection after the first three chunks", 3),
        ("Client disconnects after 3 seconds", None),
        ("Client disconnects after a few chunks", None),
        ("The server keeps streaming after the client disconnects", None),
        ("Client disconnects after 0 chunks", None),
        ("Server streams 3 chunks", None),
    ],
)
def test_disconnect_phrasings(text: str, count: int | None) -> None:
    assert disconnect_after(text) == count


def test_chunks_are_counted_as_the_response_reads_them() -> None:
    chunk = 'data: {"choices": [{"delta": {"content": "x"}}]}\n\n'
    handoff = 'data: {"type": "handoff", "from": "a", "to": "b"}\n\n'
    assert count_chunks(handoff + chunk + "event: ping\ndata: {}\n\n" + chunk + "data: [DONE]\n\n") == 2
    assert count_chunks('data: {"id": 1}\r\n\r\n: keep-alive\r\n\r\n') == 1


@needs_corpus
def test_the_request_disconnects_and_follows_up_with_the_same_request_not_streamed() -> None:
    suite = compiled(STREAMING.read_text(), base_url="http://127.0.0.1:9")
    configs = {case.name: request_of(case) for case in suite.cases}
    cancel = configs["5. Stream Cancellation"]
    assert cancel["disconnect_after"] == 3 and cancel["body"]["stream"] is True
    assert cancel["follow_up"] == {
        "method": "POST",
        "url": "http://127.0.0.1:9/chat/completions",
        "headers": {},
        "timeout": cancel["timeout"],
        "body": {**cancel["body"], "stream": False},
    }
    assert [name for name, config in configs.items() if "disconnect_after" in config] == [
        "5. Stream Cancellation"
    ]
    # the **Input:** short form streams when the client is to disconnect mid-stream
    case = (
        '### 1. Cut\n\n**Input:**\nUser sends "Tell me a story" to `echo-agent`\n\n**Behavior:**\n'
        "Client cancels after the first 2 chunks.\n"
    )
    config = request_of(compiled(doc(case), api_key="k").cases[0])
    assert config["body"]["stream"] is True and config["disconnect_after"] == 2
    assert config["follow_up"]["body"]["stream"] is False
    assert config["follow_up"]["headers"] == {"Authorization": "Bearer k"}


def _chunk(n: int) -> str:
    data = {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "story-agent",
        "choices": [{"index": 0, "delta": {"content": f"part {n}. "}, "finish_reason": None}],
    }
    return f"data: {json.dumps(data)}\n\n"


class _HoldingServer(ThreadingHTTPServer):
    """The holding agent: what each request asked and what happened to its stream."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Holding)
        self.daemon_threads = True
        self.log: list[dict[str, Any]] = []


class _Holding(BaseHTTPRequestHandler):
    """Streams a handoff event and chunks 1 and 2 one at a time, then chunks 3 and 4 in one write, and
    then waits (at most 60 s) for the client to close the connection before sending the rest."""

    protocol_version = "HTTP/1.1"
    server: _HoldingServer

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if not body.get("stream"):
            self.server.log.append({"stream": False, "body": body})
            answer = json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "Still here after the disconnect."},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            return
        record: dict[str, Any] = {"stream": True, "body": body, "sent": 0, "client_gone": False}
        self.server.log.append(record)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        writes = [
            ('data: {"type": "handoff", "from": "router", "to": "story-agent"}\n\n', 0),
            (_chunk(1), 1),
            (_chunk(2), 1),
            (_chunk(3) + _chunk(4), 2),
        ]
        try:
            for text, chunks in writes:
                self.write(text)
                record["sent"] += chunks
            readable, _, _ = select.select([self.connection], [], [], 60)
            if readable and self.connection.recv(1, socket.MSG_PEEK) == b"":
                record["client_gone"] = True
                self.close_connection = True
                return
            for n in range(5, 9):
                self.write(_chunk(n))
                record["sent"] += 1
            self.write("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            record["client_gone"] = True
            self.close_connection = True

    def write(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def holding() -> Iterator[_HoldingServer]:
    httpd = _HoldingServer()
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


CANCEL = """### 1. Cancel

**Request:**
POST `/chat/completions`
```json
{"model": "story-agent", "messages": [{"role": "user", "content": "Write a long story"}], "stream": true}
```

**Behavior:**
Client disconnects after receiving 3 chunks.

**Assertions:**
- Server handles disconnection gracefully

**Strict:**
```yaml
chunks:
  object: chat.completion.chunk
events:
  - type: handoff
final_event: "[DONE]"
```
"""


def test_the_stream_is_cut_after_n_chunks_and_the_follow_up_is_in_the_trace_and_the_prompt(
    pytester: pytest.Pytester, holding: _HoldingServer
) -> None:
    pytester.makefile(".md", cancel=doc(CANCEL))
    url = f"http://127.0.0.1:{holding.server_address[1]}"
    with FakeOpenAI() as fake:
        fake.queue(verdicts(True))
        result = pytester.runpytest_inprocess(
            "-p",
            "no:cacheprovider",
            f"--semantictest-compliance-base-url={url}",
            f"--semantictest-llm-base-url={fake.url}",
            "-vv",  # the whole trace
        )
        prompt = fake.bodies()[0]["messages"][1]["content"]
    # the strict checks apply to what was read: every chunk read is a chunk, the handoff event was seen, but
    # the stream has no [DONE] since the client went away after the 3rd chunk
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            'final_event (line *): expected "?DONE?", got *',
            "  operator: equals",
            "  expected: '?DONE?'",
            "  actual:   *part 3. *",
        ]
    )
    assert "chunks (line" not in result.stdout.str() and "events (line" not in result.stdout.str()
    stream, follow_up = holding.log
    # the server made 4 chunks available and saw the client close the connection; the client read 3
    assert stream["stream"] is True and stream["sent"] == 4 and stream["client_gone"] is True
    assert follow_up == {"stream": False, "body": {**stream["body"], "stream": False}}
    output = result.stdout.str()
    assert (
        '"client_disconnect": {' in output
        and '"chunks_read": 3,' in output
        and '"disconnected": true' in output
    )
    result.stdout.fnmatch_lines(
        ['*"follow_up": {', '*"status": 200,', '*"content": "Still here after the disconnect."*']
    )
    assert "part 4" not in output
    assert "The client disconnected on purpose after receiving 3 chunk(s)" in prompt
    assert "a Server-Sent Events stream of 3 JSON chunk(s)" in prompt and "part 4" not in prompt
    after = prompt.split("## After the disconnect\n", 1)[1]
    assert "the same request without streaming" in after and "status: 200" in after
    assert 'message content: "Still here after the disconnect."' in after


@needs_corpus
def test_the_published_cancellation_case_against_the_example_server(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, capfd: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI() as fake:
        fake.queue(verdicts(True, True, True))
        result = pytester.runpytest_inprocess(  # the rootdir (the judge's replay cache) is the test's folder
            "-p",
            "no:cacheprovider",
            "-v",
            f"--rootdir={pytester.path}",
            f"--semantictest-compliance-base-url={server.url}",
            f"--semantictest-llm-base-url={fake.url}",
            f"{STREAMING}::5. Stream Cancellation",
        )
        prompt = fake.bodies()[0]["messages"][1]["content"]
    result.assert_outcomes(passed=1)
    cut, answered = server.streams, prompt.split("## After the disconnect\n", 1)[1]
    # more than the client read
    assert len(cut) == 1 and cut[0]["agent"] == "verbose-agent" and cut[0]["parts"] > 3
    assert "a Server-Sent Events stream of 3 JSON chunk(s)" in prompt
    assert (
        "status: 200" in answered and "Here is a response about a very long essay about history" in answered
    )
    assert "Traceback" not in capfd.readouterr().err


def test_the_example_server_stops_a_stream_whose_client_went_away(
    server: compliance_server.ComplianceServer,
) -> None:
    body = json.dumps(
        {"model": "verbose-agent", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    )
    host, port = server.server_address[:2]
    with socket.create_connection((host, port)) as sock:
        with (
            server.lock
        ):  # the handler waits for it before answering: the client is gone before the first chunk
            sock.sendall(
                f"POST /chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
            )
            sock.shutdown(socket.SHUT_WR)
        received = b""
        while data := sock.recv(65536):  # the server closes the connection when it gives up
            received += data
    assert received.startswith(b"HTTP/1.0 200") or received.startswith(b"HTTP/1.1 200")
    assert b"data:" not in received
    assert server.streams == [
        {
            "agent": "verbose-agent",
            "parts": server.streams[0]["parts"],
            "sent": 0,
            "completed": False,
            "client_gone": True,
        }
    ]
