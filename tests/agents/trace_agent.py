"""A tiny agent that speaks highbar's trace contract v1 (stdlib only), for the agents tests.

    python trace_agent.py --port 8731 [--exit-at-start] [--never-healthy] [--no-hello]
                          [--slow-start S] [--ignore-sigterm] [--spawn-child PIDFILE]
                          [--sigterm-file FILE] [--slow-file FILE]

On start it appends a ``hello`` with its tools to ``$HIGHBAR_TRACES_URL`` (or ``--traces``).
``POST /chat {"message"}`` replies ``{"response": ...}`` and appends ``tool`` and ``turn``
records whose context is ``{"test": <X-Highbar-Test>}``. Rules: "order 1042" -> get_order;
"cancel" -> get_order then cancel_order; "hello" -> no tool; "crash" -> the process exits.
Other routes serve the protocol tests (echo, redirects, errors, odd bodies).
``--sigterm-file FILE``: SIGTERM is ignored (by its child too) but noted in FILE, so a test knows
that a stop's grace period has begun.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

TOOLS = ["cancel_order", "get_order"]
TRACES: str | None = None
HEALTHY = True
SLOW_FILE: str | None = None


def log(text: str) -> None:
    print(text, flush=True)


def write(record: dict[str, Any]) -> None:
    if not TRACES:
        return
    line = json.dumps({"v": 1, "ts": time.time(), **record}) + "\n"
    fd = os.open(TRACES, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def tool(name: str, args: dict[str, Any], result: Any, test: str | None) -> None:
    now = time.time()
    write(
        {
            "type": "tool",
            "fn": name,
            "args": args,
            "result": result,
            "error": None,
            "started_at": now,
            "ended_at": now,
            "context": {"test": test},
        }
    )


def chat(message: str, test: str | None) -> str:
    """The agent's 'brain': fixed rules, tool records tagged with the test id."""
    lowered = message.lower()
    if "crash" in lowered:
        log("crash requested: exiting")
        os._exit(1)
    order = re.search(r"\d{3,}", message)
    order_id = order.group(0) if order else "unknown"
    if "cancel" in lowered:
        tool("get_order", {"order_id": order_id}, {"status": "shipped"}, test)
        tool("cancel_order", {"order_id": order_id}, {"cancelled": True}, test)
        reply = f"Order {order_id} has been cancelled."
    elif "order" in lowered and order:
        tool("get_order", {"order_id": order_id}, {"status": "shipped"}, test)
        reply = f"Order {order_id} has shipped."
    elif "later" in lowered:  # a tool call recorded 0.3 s after the reply (highbar's "late call")
        threading.Timer(0.3, tool, ("get_order", {"order_id": "late"}, {"status": "late"}, test)).start()
        reply = "I will look into it later."
    elif "hello" in lowered:
        reply = "Hello! How can I help?"
    else:
        reply = "Sorry, I did not understand."
    write({"type": "turn", "message": message, "response": reply, "context": {"test": test}})
    return reply


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log("request: " + format % args)

    def send_body(
        self,
        status: int,
        body: bytes | str,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        length: bool = True,
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(data)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, value: Any, status: int = 200) -> None:
        self.send_body(status, json.dumps(value))

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/health":
            self.send_json({"ok": HEALTHY}, 200 if HEALTHY else 503)
        else:
            self.send_json({"error": "not found"}, 404)

    do_HEAD = do_GET  # noqa: N815

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self) -> None:  # noqa: N802, C901
        raw = self.body()
        path, _, query = self.path.partition("?")
        test = self.headers.get("X-Highbar-Test")
        if path == "/chat":
            try:
                message = json.loads(raw)["message"]
            except (ValueError, KeyError, TypeError):
                self.send_json({"error": 'body must be {"message": ...}'}, 400)
                return
            self.send_json({"response": chat(str(message), test)})
        elif path == "/echo":
            headers = {k.lower(): v for k, v in self.headers.items()}
            self.send_json(
                {"response": "echoed", "method": self.command, "body": raw.decode(), "headers": headers}
            )
        elif path == "/redirect":
            self.send_body(302, "", headers={"Location": "http://127.0.0.1/elsewhere"})
        elif path.startswith("/status/"):
            self.send_body(int(path.rsplit("/", 1)[1]), "the agent broke: " + "x" * 500, "text/plain")
        elif path == "/empty":
            self.send_body(200, "", "text/plain")
        elif path == "/big":
            self.send_body(200, b"a" * 10_000_001, "text/plain", length="declared=0" not in query)
        elif path == "/slow":
            if SLOW_FILE:  # the request is in flight: a test may now interrupt the run that waits for it
                with open(SLOW_FILE, "a") as f:
                    f.write("awaited\n")
            time.sleep(3)
            self.send_json({"response": "late"})
        elif path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            for _ in range(30):
                self.wfile.write(b"drip ")
                self.wfile.flush()
                time.sleep(0.1)
        elif path == "/text":
            self.send_body(200, "just plain words", "text/plain; charset=utf-8")
        elif path == "/mirror":  # the request body comes back as the reply
            self.send_body(200, raw, unquote(query.removeprefix("ct=")) or "application/json")
        elif path == "/openai":
            self.send_json(openai_reply(query == "content"))
        elif path == "/simple":
            self.send_json(
                {
                    "reply": "done",
                    "tool_calls": [
                        {
                            "name": "get_order",
                            "arguments": {"order_id": "1042"},
                            "result": {"status": "shipped"},
                        },
                        {"name": "cancel_order", "args": '{"order_id": "1042"}', "error": "not allowed"},
                    ],
                }
            )
        else:
            self.send_json({"error": "not found"}, 404)

    do_PUT = do_POST  # noqa: N815
    do_PATCH = do_POST  # noqa: N815


def openai_reply(with_content: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "Looking it up." if with_content else None}
    message["tool_calls"] = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_order", "arguments": '{"order_id": "1042"}'},
        }
    ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }


def main() -> None:
    global TRACES, HEALTHY, SLOW_FILE
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--traces", default=os.environ.get("HIGHBAR_TRACES_URL"))
    parser.add_argument("--exit-at-start", action="store_true")
    parser.add_argument("--never-healthy", action="store_true")
    parser.add_argument("--no-hello", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--spawn-child", metavar="PIDFILE")
    parser.add_argument("--sigterm-file", metavar="FILE")
    parser.add_argument("--slow-file", metavar="FILE", help="a line per /slow request, as it arrives")
    args = parser.parse_args()
    TRACES, HEALTHY, SLOW_FILE = args.traces, not args.never_healthy, args.slow_file
    log(f"trace agent pid {os.getpid()} starting on port {args.port}")
    if args.exit_at_start:
        log("misconfigured: exiting at start")
        sys.exit(3)
    if args.ignore_sigterm or args.sigterm_file:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.spawn_child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        with open(args.spawn_child, "w") as f:
            f.write(str(child.pid))
    if args.sigterm_file:

        def note(signum: int, frame: Any) -> None:
            with open(args.sigterm_file, "a") as f:
                f.write(f"SIGTERM at {time.time()}\n")

        signal.signal(signal.SIGTERM, note)
    time.sleep(args.slow_start)
    if not args.no_hello:
        write({"type": "hello", "sdk": "trace-agent/1", "pid": os.getpid(), "tools": TOOLS})
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    log(f"listening on http://127.0.0.1:{args.port}")
    server.serve_forever()


if __name__ == "__main__":
    main()
