"""A loopback server that answers slowly on purpose, for the deadline tests.

``GET|POST /drip?bytes=N&every=S&size=K``: 200 with ``Content-Length: N*K``, then K bytes every S seconds.
``GET|POST /sse?chunks=N&every=S``: an OpenAI-style SSE stream, one chunk every S seconds, then ``[DONE]``.
``POST /drip-json/chat/completions``: an OpenAI chat completion, one byte every 0.1 s (about 20 s).
``GET|POST /fast``: ``{"ok": true}`` at once.
Each request is served on its own thread; a client that hangs up ends the drip.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlsplit

from tests.servers.quiet import QuietHandler, in_thread


class _Handler(QuietHandler):
    def serve(self, body: bytes) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        every = float(query.get("every", "0.5"))
        try:
            if url.path == "/drip":
                count, size = int(query.get("bytes", "40")), int(query.get("size", "1"))
                self._head("text/plain", count * size)
                for _ in range(count):
                    self.wfile.write(b"x" * size)
                    self.wfile.flush()
                    time.sleep(every)
            elif url.path == "/sse":
                self._head("text/event-stream", None)
                for i in range(int(query.get("chunks", "30"))):
                    chunk = {"choices": [{"index": 0, "delta": {"content": f"w{i} "}}]}
                    self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
                    time.sleep(every)
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")
            elif url.path.startswith("/drip-json"):
                body = json.dumps(
                    {
                        "id": "c",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "m",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "hi"},
                            }
                        ],
                    }
                ).encode()
                self._head("application/json", len(body))
                for i in range(len(body)):
                    self.wfile.write(body[i : i + 1])
                    self.wfile.flush()
                    time.sleep(float(query.get("every", "0.1")))
            else:
                body = b'{"ok": true}'
                self._head("application/json", len(body))
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _head(self, media: str, length: int | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", media)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


@contextmanager
def slow_server() -> Iterator[str]:
    """The server on a free loopback port for the duration of the block; yields its base URL."""
    with in_thread(_Handler) as base:
        yield base
