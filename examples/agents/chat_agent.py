"""Deterministic example agent server (stdlib only) for pytest-semantictest examples.

Run: ``python examples/agents/chat_agent.py --port 0`` (prints ``LISTENING http://127.0.0.1:<port>``)
or import and call :func:`start_server`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

try:
    from .chat_rules import (
        DEFAULT_MODEL,
        Reply,
        openai_chunks,
        openai_completion,
        respond,
        run_agent,
        ui_message_stream,
        usage,
        vercel_data_stream,
    )
    from .request_log import Noted
except ImportError:  # run as a script, or imported with examples/agents on sys.path
    from chat_rules import (  # type: ignore
        DEFAULT_MODEL,
        Reply,
        openai_chunks,
        openai_completion,
        respond,
        run_agent,
        ui_message_stream,
        usage,
        vercel_data_stream,
    )
    from request_log import Noted  # type: ignore[no-redef]

TOKEN = "test-token-123"
USERS = [
    {"id": 1, "name": "Leanne Graham", "email": "Sincere@april.biz", "username": "Bret"},
    {"id": 2, "name": "Ervin Howell", "email": "Shanna@melissa.tv", "username": "Antonette"},
    {"id": 3, "name": "Clementine Bauch", "email": "Nathan@yesenia.net", "username": "Samantha"},
]
POSTS = [
    {"id": i, "userId": (i + 1) // 2, "title": f"Post number {i}", "body": f"This is the body of post {i}."}
    for i in range(1, 6)
]


class BadRequest(Exception):
    """Raised by handlers to produce a 400 ``invalid_request_error``."""


class AgentServer(ThreadingHTTPServer):
    """Threading HTTP server holding per-key call counters (jobs, flaky)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler] | None = None) -> None:
        super().__init__(address, handler or AgentHandler)
        self._lock = threading.Lock()
        self._counters: dict[str, int] = {}

    def server_bind(self) -> None:  # skip the (possibly slow) reverse DNS lookup
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def bump(self, key: str) -> int:
        """Increment and return the call counter for ``key``."""
        with self._lock:
            self._counters[key] = self._counters.get(key, 0) + 1
            return self._counters[key]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (reset, broken pipe) is not worth a traceback on stderr."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def shutdown(self) -> None:
        """Stop ``serve_forever`` and close the listening socket."""
        super().shutdown()
        self.server_close()


class AgentHandler(Noted, BaseHTTPRequestHandler):
    """Routes requests to the handler methods listed in ``routes`` (default ``ROUTES``); each is noted in
    the request log (``request_log``) when one is asked for."""

    agent = "chat"

    routes: list[tuple[str, str, Callable[..., None]]] | None = None
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes; avoid 40 ms delayed-ACK stalls
    server: AgentServer
    body: bytes = b""

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet  # noqa: A002
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        self.body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        allowed = False
        for route_method, pattern, handler in self.routes if self.routes is not None else ROUTES:
            match = re.fullmatch(pattern, path)
            if match and route_method == method:
                try:
                    return handler(self, *match.groups())
                except BadRequest as exc:
                    return self.send_json(
                        400, {"error": {"message": str(exc), "type": "invalid_request_error"}}
                    )
            allowed = allowed or bool(match)
        if allowed:
            return self.send_json(
                405,
                {
                    "error": {
                        "message": f"Method {method} not allowed for {path}",
                        "type": "invalid_request_error",
                    }
                },
            )
        self.send_json(404, {"message": f"Endpoint not found: {path}"})

    def send_raw(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(obj, ensure_ascii=False).encode()
        self.send_raw(status, body, "application/json; charset=utf-8", headers)

    def send_stream(
        self, content_type: str, parts: Iterable[str], headers: dict[str, str] | None = None
    ) -> None:
        """Send each part as its own HTTP chunk (``Transfer-Encoding: chunked``), flushing each."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        try:
            for part in parts:
                data = part.encode()
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def json_body(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequest(f"Invalid JSON body: {exc}") from None

    def chat_request(self) -> tuple[dict[str, Any], list[dict[str, Any]], Reply | None]:
        """Parse a chat body; returns ``reply=None`` if a special response was already sent."""
        body = self.json_body()
        if not isinstance(body, dict):
            raise BadRequest("Request body must be a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("'messages' is required and must be a non-empty array")
        reply = respond(messages)
        if reply.special == "error":
            self.send_json(500, {"error": {"message": "Simulated internal error", "type": "server_error"}})
            return body, messages, None
        if reply.special == "garbage":
            self.send_raw(200, b"<html>oops", "application/json")
            return body, messages, None
        time.sleep(reply.delay)
        return body, messages, reply

    def chat_completions(self) -> None:
        body, messages, reply = self.chat_request()
        if reply is None:
            return
        model = str(body.get("model") or DEFAULT_MODEL)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self.send_stream("text/event-stream", openai_chunks(reply, model, messages, include_usage))
        else:
            self.send_json(200, openai_completion(reply, model, messages))

    def ai_sdk_chat(self) -> None:
        body, messages, reply = self.chat_request()
        if reply is None:
            return
        steps, final = run_agent(messages, reply)
        if body.get("protocol") == "ui":
            self.send_stream(
                "text/event-stream",
                ui_message_stream(steps, final, "msg_1"),
                {"x-vercel-ai-ui-message-stream": "v1"},
            )
        else:
            self.send_stream(
                "text/plain; charset=utf-8",
                vercel_data_stream(steps, final, usage(messages, final)),
                {"x-vercel-ai-data-stream": "v1"},
            )

    def user(self, user_id: str) -> None:
        found = [u for u in USERS if u["id"] == int(user_id)]
        if not found:
            return self.send_json(404, {"message": f"User {user_id} not found"})
        self.send_json(200, found[0])

    def create_post(self) -> None:
        body = self.json_body()
        if not isinstance(body, dict):
            raise BadRequest("Request body must be a JSON object")
        self.send_json(201, {**body, "id": 101})

    def job(self, job_id: str) -> None:
        progress = min(100, 50 * self.server.bump(f"job:{job_id}"))
        self.send_json(
            200, {"id": job_id, "status": "complete" if progress >= 100 else "pending", "progress": progress}
        )

    def flaky(self, key: str) -> None:
        attempt = self.server.bump(f"flaky:{key}")
        if attempt <= 2:
            return self.send_json(503, {"error": "Service temporarily unavailable", "attempt": attempt})
        self.send_json(200, {"ok": True})

    def me(self) -> None:
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.send_json(401, {"error": "unauthorized"}, {"WWW-Authenticate": "Bearer"})
        self.send_json(200, USERS[0])


ROUTES: list[tuple[str, str, Callable[..., None]]] = [
    ("GET", r"/health", lambda h: h.send_json(200, {"status": "ok"})),
    ("POST", r"/v1/chat/completions", AgentHandler.chat_completions),
    ("POST", r"/api/chat", AgentHandler.ai_sdk_chat),
    ("GET", r"/users", lambda h: h.send_json(200, USERS)),
    ("GET", r"/users/(\d+)", AgentHandler.user),
    ("GET", r"/posts", lambda h: h.send_json(200, POSTS)),
    ("POST", r"/posts", AgentHandler.create_post),
    ("GET", r"/jobs/([\w.-]+)", AgentHandler.job),
    ("GET", r"/flaky/([\w.-]+)", AgentHandler.flaky),
    ("POST", r"/auth/login", lambda h: h.send_json(200, {"token": TOKEN})),
    ("GET", r"/me", AgentHandler.me),
    ("GET", r"/echo-headers", lambda h: h.send_json(200, {k.lower(): v for k, v in h.headers.items()})),
]


def start_server(port: int = 0, host: str = "127.0.0.1") -> tuple[AgentServer, str]:
    """Start the agent in a daemon thread; returns ``(server, base_url)``. Stop with ``server.shutdown()``."""
    server = AgentServer((host, port))
    threading.Thread(target=server.serve_forever, args=(0.05,), name="chat-agent", daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: serve until SIGINT/SIGTERM."""
    parser = argparse.ArgumentParser(description="Deterministic example chat agent server.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0 = pick a free port)")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    server = AgentServer((args.host, args.port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"LISTENING http://{args.host}:{server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt), server:
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
