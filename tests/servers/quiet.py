"""What the small loopback test servers share: a quiet HTTP/1.1 handler whose GET and POST both call
``serve(body)``, a server that ignores clients hanging up, and running one in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # quiet  # noqa: A002
        pass

    def do_GET(self) -> None:
        self.serve(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.serve(self.rfile.read(length) if length else b"")

    def serve(self, body: bytes) -> None:
        raise NotImplementedError


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:  # a client hung up: quiet
        pass


@contextmanager
def in_thread(handler: type[QuietHandler], port: int = 0) -> Iterator[str]:
    """Serve ``handler`` on loopback in a daemon thread for the block; yields the base URL."""
    server = QuietServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
