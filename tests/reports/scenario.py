"""Shared pieces of the report tests: a small HTTP backend in this process, spec builders, a runner.

End-to-end runs are in-process (``pytester.runpytest_inprocess``; the root conftest keeps one copy
of the plugin's modules and fresh plugin state per run), also under xdist (``-n``: the controller
here, its workers in their own interpreters); the secrets run gets its own interpreter.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import WITHOUT_UNUSED_PLUGINS, once_per_session, pytest_process, run_pytest
from tests.ports import free_port

PYTEST_ARGS = ["-p", "no:cacheprovider", *WITHOUT_UNUSED_PLUGINS]
BIG = 20_000_000
"""The size of ``/big``'s body."""
TRACE_AGENT = Path(__file__).resolve().parents[1] / "agents" / "trace_agent.py"

SSE = (
    "".join(
        f"data: {json.dumps(chunk)}\n\n"
        for chunk in [
            {"choices": [{"index": 0, "delta": {"content": "Checking the weather in Paris."}}]},
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_1",
                                    "function": {"name": "get_weather", "arguments": '{"city":'},
                                }
                            ]
                        },
                    }
                ]
            },
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
                    }
                ]
            },
        ]
    )
    + "data: [DONE]\n\n"
)


class Backend:
    """``/ok``, ``/flaky`` (200, 500, 200, ...), ``/slow`` (2 s), ``/sse`` (an OpenAI stream with a
    tool call), ``/big`` (20 MB of text), ``/echo`` (the request's headers and body back as JSON) and ``.../chat/completions``
    (an OpenAI-style agent whose reply tells the path, headers and body it was sent)."""

    def __init__(self) -> None:
        self.hits = 0
        self.requests = 0
        """Every request this backend answered (any path)."""
        self._lock = threading.Lock()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: str, content_type: str = "application/json") -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._route(b"")

            def do_POST(self) -> None:
                self._route(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _route(self, raw: bytes) -> None:
                path = self.path.partition("?")[0]
                with backend._lock:
                    backend.requests += 1
                if path == "/flaky":
                    with backend._lock:
                        backend.hits += 1
                        status = 200 if backend.hits % 2 else 500
                    self._send(status, json.dumps({"hit": backend.hits}))
                elif path == "/slow":
                    time.sleep(2)
                    self._send(200, "{}")
                elif path == "/big":
                    self._send(200, "a" * BIG, "text/plain")
                elif path == "/sse":
                    self._send(200, SSE, "text/event-stream")
                elif path == "/echo":
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    self._send(200, json.dumps({"path": self.path, "headers": headers, "body": raw.decode()}))
                elif path.endswith("/chat/completions"):
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    sent = json.dumps({"path": self.path, "headers": headers, "body": raw.decode()})
                    message = {"role": "assistant", "content": f"You sent {sent}"}
                    self._send(
                        200,
                        json.dumps(
                            {
                                "object": "chat.completion",
                                "model": "echo-agent",
                                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                            }
                        ),
                    )
                else:
                    self._send(200, json.dumps({"status": "ok", "text": "All systems go."}))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda *args: None  # type: ignore[method-assign]  # a client gave up (/slow)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def step(block: str, output: str, **keys: Any) -> dict[str, Any]:
    return {"block": block, "output": output, **keys}


def report_suite(url: str, judge: bool = False) -> dict[str, Any]:
    """One test of each outcome and of each kind of content the reports show."""
    tests: list[dict[str, Any]] = [
        {
            "id": "passes",
            "pipeline": [step("MockData", "d", config={"data": {"reply": "hello"}})],
            "assertions": {"d.reply": "hello"},
        },
        {
            "id": "fails",
            "pipeline": [step("MockData", "d", config={"data": {"reply": "hello"}})],
            "assertions": {"d.reply": "goodbye"},
        },
        {
            "id": "errors",
            "timeout": 300,
            "pipeline": [step("HttpRequest", "response", input={"url": f"{url}/slow"})],
            "assertions": {"response.status": 200},
        },
        {
            "id": "flaky",
            "runs": 3,
            "minPass": 2,
            "pipeline": [step("HttpRequest", "response", input={"url": f"{url}/flaky"})],
            "assertions": {"response.status": 200},
        },
        {
            "id": "streamed",
            "pipeline": [
                step(
                    "HttpRequest",
                    "response",
                    input={
                        "url": f"{url}/sse",
                        "method": "POST",
                        "body": {"messages": [{"role": "user", "content": "Weather in Paris?"}]},
                    },
                ),
                step("StreamParser", "parsed", input="${response.body}", config={"format": "sse-openai"}),
                step(
                    "ValidateTools",
                    "tools",
                    input={"from": "parsed.toolCalls", "as": "toolCalls"},
                    config={"expected": ["get_weather"]},
                ),
            ],
            "assertions": {"tools.passed": True, "parsed.text": {"contains": "Paris"}},
        },
    ]
    if judge:
        tests += [
            {
                "id": "judged",
                "pipeline": [
                    step("MockData", "reply", config={"data": {"text": "Your meeting is booked for 2 PM."}}),
                    step(
                        "LLMJudge",
                        "judgement",
                        input={
                            "text": "${reply.text}",
                            "expected": {"expectedBehavior": "Confirms the meeting at 2 PM"},
                        },
                        config={"criteria": {"accuracy": 0.5, "completeness": 0.5}, "threshold": 0.7},
                    ),
                ],
                "assertions": {"judgement.passed": True},
            },
            {
                "id": "judged-low",
                "pipeline": [
                    step("MockData", "reply", config={"data": {"text": "I cannot help with that."}}),
                    step(
                        "LLMJudge",
                        "judgement",
                        input={
                            "text": "${reply.text}",
                            "expected": {"expectedBehavior": "Confirms the meeting at 2 PM"},
                        },
                        config={"threshold": 0.7},
                    ),
                ],
                "assertions": {"judgement.passed": True},
            },
        ]
    return {"name": "reports", "tests": tests}


def write_suite(pytester: pytest.Pytester, suite: dict[str, Any], name: str = "reports") -> None:
    pytester.makefile(".json", **{name: json.dumps(suite, indent=2)})
    # all runs: the reports show the flaky test's 3 runs (else it may stop once 2 passed)
    pytester.makeini("[pytest]\nsemantictest_no_early_stop = true\n")


def _xdist_run(folder: Path) -> dict[str, Any]:
    folder.mkdir(exist_ok=True)
    backend = Backend()
    try:
        (folder / "reports.json").write_text(json.dumps(report_suite(backend.url), indent=2))
        (folder / "tox.ini").write_text(  # what write_suite's makeini writes
            "[pytest]\nsemantictest_no_early_stop = true\n"
        )
        done = pytest_process(folder, *PYTEST_ARGS, "-n", "2", "-v", "--junitxml=junit.xml")
    finally:
        backend.close()
    output = done.stdout + done.stderr
    outcomes = {
        noun: n
        for noun, n in pytest.RunResult.parse_summary_nouns(output.splitlines()).items()
        if noun not in ("warnings", "warning")
    }
    return {"output": output, "outcomes": outcomes, "junit": str(folder / "junit.xml")}


def xdist_run(request: pytest.FixtureRequest) -> dict[str, Any]:
    """:func:`report_suite` (no judge) under ``-n 2 -v --junitxml=junit.xml``, run once for the session
    (the summary's and JUnit's xdist tests check the same run): ``output``, ``outcomes`` (pytest's
    summary counts) and the ``junit`` file's path."""
    return once_per_session(request, "reports-xdist", _xdist_run, lambda found: found, lambda found: found)


def run(pytester: pytest.Pytester, *args: str, own_process: bool = False) -> pytest.RunResult:
    """:func:`tests.helpers.run_pytest` with this scenario's arguments."""
    return run_pytest(pytester, *PYTEST_ARGS, *args, own_process=own_process)


def trace_agent_spec(tests: str) -> str:
    """A highbar spec against the trace agent (on a free port) with one suite, ``Orders``, of ``tests``
    (YAML list items, indented as in the suite)."""
    port = free_port()
    return textwrap.dedent(f"""\
        agent:
          start: "{sys.executable} {TRACE_AGENT} --port {port}"
          endpoint: "http://127.0.0.1:{port}/chat"
          health: "http://127.0.0.1:{port}/health"
          settle_time: 0
        suites:
          - name: Orders
            tests:
        """) + textwrap.indent(textwrap.dedent(tests), "      ")


def highbar_spec(pytester: pytest.Pytester) -> None:
    """A highbar spec against the trace agent: one test passes, one fails."""
    pytester.makefile(
        ".highbar.yaml",
        orders=trace_agent_spec("""\
              - name: looks the order up
                trigger: "Where is order 1042?"
                expect:
                  function_calls: [{name: get_order, params: {order_id: "1042"}}]
              - name: wrong tool
                trigger: "Where is order 1042?"
                expect:
                  function_calls: [{name: cancel_order}]
        """),
    )
