"""An agent that echoes what it was sent, each time in several escapings of its own (stdlib only).

    python echo_agent.py --port 8731 --secret VALUE      (a highbar agent: hello record, /health)

Imported, :class:`Handler` serves the same echo in the tests' own process (``serve()``).

Every ``POST`` (and ``GET``) gets a JSON object: ``response`` (the echo as text, for highbar's
``response:``), the echo in ``forms`` (URL-quoted, ``+``-quoted, repr, HTML-escaped, base64), the
SHA-256 of the ``--secret`` it was started with (``start_sha``: the start command kept it intact),
and innocent values that must stay visible. The body is written with every character that is not
a letter or a digit as ``\\uXXXX`` and ``/`` as ``\\/`` (JSON as some agents escape it). The response
carries ``x-ratelimit-limit-tokens: 1500000``: a number, not a secret.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, quote_plus

START_SECRET = ""
INNOCENT = {
    "tokenizer": "cl100k_base",
    "secretary": "Miss Moneypenny",
    "sort-key": "created_at",
    "auth_method": "oauth-device",
    "budget": "The budget is 1500000 EUR",
}


def own_json(value: Any) -> str:
    """JSON with every non-alphanumeric character of a string as ``\\uXXXX`` (``/`` as ``\\/``)."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    out: list[str] = []
    in_string = escaped = False
    for ch in text:
        if not in_string:
            in_string = ch == '"'
            out.append(ch)
        elif escaped:
            escaped = False
            out.append(ch)
        elif ch == "\\":
            escaped = True
            out.append(ch)
        elif ch == '"':
            in_string = False
            out.append(ch)
        elif ch == "/":
            out.append("\\/")
        elif ch.isalnum() and ch.isascii():
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)


def reply(path: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    echo = f"path={path} headers={json.dumps(headers)} body={body} start={START_SECRET}"
    sha = hashlib.sha256(START_SECRET.encode()).hexdigest()[:16]
    return {
        "response": f"You sent: {echo} (started with sha {sha})",
        "forms": {
            "url": quote(echo, safe=""),
            "plus": quote_plus(echo),
            "repr": repr(echo),
            "html": html.escape(echo),
            "b64": base64.b64encode(echo.encode()).decode(),
        },
        **INNOCENT,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._answer(b"")

    def do_POST(self) -> None:  # noqa: N802
        self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _answer(self, raw: bytes) -> None:
        if self.path == "/health":
            data = b"{}"
        else:
            headers = {k.lower(): v for k, v in self.headers.items()}
            data = own_json(reply(self.path, headers, raw.decode("utf-8", "replace"))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("x-ratelimit-limit-tokens", "1500000")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(port: int = 0) -> ThreadingHTTPServer:
    """The echo in this process, on a thread (``server.server_address[1]``: its port)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def main() -> None:
    global START_SECRET
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", required=True)
    args = parser.parse_args()
    START_SECRET = args.secret
    traces = os.environ.get("HIGHBAR_TRACES_URL")
    if traces:
        with open(traces, "a", encoding="utf-8") as f:
            f.write(
                json.dumps(
                    {
                        "v": 1,
                        "ts": time.time(),
                        "type": "hello",
                        "sdk": "echo-agent/1",
                        "pid": os.getpid(),
                        "tools": [],
                    }
                )
                + "\n"
            )
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
