"""A small OpenAI-compatible server for tests: real HTTP on 127.0.0.1, no API key, no internet.

``POST /v1/chat/completions`` answers from a script of :class:`Reply` objects (consumed first),
else from :meth:`FakeOpenAI.answer`: for the LLM judge's structured output (``judge_verdict``
schema) a verdict built from :class:`Rule` objects matched against the judged response, for
anything else an echo. Faults: any HTTP status, a delay (for timeouts), malformed content, a
refusal, a broken body. Every request is recorded (body, headers and arrival time: :meth:`most_in`
counts the requests of the busiest window).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    """One scripted answer. ``content`` None means "let the server compose it"."""

    status: int = 200
    content: str | None = None
    refusal: str | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    tokens: tuple[int, int] = (120, 40)


def status(code: int, retry_after_ms: int | None = 1, message: str = "scripted failure") -> Reply:
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    body = json.dumps({"error": {"message": message, "type": "server_error", "code": code}}).encode()
    return Reply(status=code, headers=headers, body=body)


@dataclass
class Rule:
    """When ``needle`` occurs in the judged response (or its tool calls), answer with these scores."""

    needle: str
    score: float = 0.9
    details: dict[str, float] = field(default_factory=dict)
    reasoning: str = ""
    violated: tuple[int, ...] = ()
    should_continue: bool = False
    next_prompt: str | None = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


_RESPONSE = re.compile(r"## Response to evaluate\n(.*?)(?=\n## Expected behaviour|\Z)", re.S)


class FakeOpenAI:
    """Start with :meth:`start` (or ``with FakeOpenAI() as server``); ``url`` ends in ``/v1``."""

    def __init__(self, default_score: float = 0.92, delay: float = 0.0) -> None:
        self.default_score = default_score
        self.delay = delay
        self.script: deque[Reply] = deque()
        self.rules: list[Rule] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        """Most requests being answered at once (shows that calls overlap, without timing them)."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body go out at once: no delayed-ACK stalls

            def do_POST(self) -> None:  # noqa: N802
                fake._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        server = _Server(("127.0.0.1", 0), Handler)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self.script.extend(replies)

    def rule(self, needle: str, score: float = 0.9, **options: Any) -> None:
        self.rules.append(Rule(needle, score, **options))

    @property
    def count(self) -> int:
        return len(self.requests)

    def most_in(self, seconds: float) -> int:
        """The most requests that arrived within any ``seconds`` (a sliding window over arrival times)."""
        with self._lock:
            times = sorted(r["at"] for r in self.requests)
        return max(
            (sum(1 for t in times[i:] if t < start + seconds) for i, start in enumerate(times)), default=0
        )

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    # -- answering ---------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with self._lock:
            self.requests.append(
                {
                    "path": handler.path,
                    "body": body,
                    "headers": {k.lower(): v for k, v in handler.headers.items()},
                    "at": time.monotonic(),
                }
            )
            reply = self.script.popleft() if self.script else Reply()
        delay = reply.delay or self.delay
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if delay:
                time.sleep(delay)
        finally:
            with self._lock:
                self.in_flight -= 1
        if handler.path.rstrip("/") != "/v1/chat/completions":
            reply = status(404, None, f"no route {handler.path}")
        payload = reply.body if reply.body is not None else json.dumps(self._completion(body, reply)).encode()
        try:
            handler.send_response(reply.status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
        except OSError:  # the client gave up (timeout test)
            pass

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = reply.content
        if content is None and reply.refusal is None:
            content = self.answer(body)
        prompt, completion = reply.tokens
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def answer(self, body: dict[str, Any]) -> str:
        """A judge verdict for the judge's schema, else an echo of the last user message."""
        schema = (body.get("response_format") or {}).get("json_schema") or {}
        messages = body.get("messages") or [{}]
        user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
        if schema.get("name") != "judge_verdict":
            return f"echo: {user}"
        first_user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
        return json.dumps(self.verdict(schema["schema"], first_user))

    def verdict(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        found = _RESPONSE.search(prompt)
        judged = found.group(1) if found else prompt
        rule = next((r for r in self.rules if r.needle in judged), Rule("", self.default_score))
        props = schema["properties"]
        criteria = props["details"]["required"]
        verdict: dict[str, Any] = {
            "reasoning": rule.reasoning or f"The response scores {rule.score} on every criterion.",
            "details": {name: rule.details.get(name, rule.score) for name in criteria},
        }
        if "constraints" in props:
            verdict["constraints"] = {
                n: {
                    "met": int(n) not in rule.violated,
                    "reason": "violated" if int(n) in rule.violated else "holds",
                }
                for n in props["constraints"]["required"]
            }
        if "shouldContinue" in props:
            verdict["shouldContinue"] = rule.should_continue
            verdict["nextPrompt"] = rule.next_prompt
        return verdict
