"""A loopback HTTP server that answers after a delay, counting requests in flight (stdlib only).

``GET|POST /sleep?s=S&id=X``: after S seconds, ``{"ok": true, "id": X, "in_flight": N}`` (N: requests
being served when this one started, itself included). ``GET /stats``: ``{"max_in_flight": N, "served":
M, "order": [ids in the order they started]}``; ``POST /reset`` zeroes them. One thread per request.

    python latency_server.py --port 8765     # or use ``serving()`` in-process
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_LOCK = threading.Lock()
_STATE: dict[str, object] = {"in_flight": 0, "max_in_flight": 0, "served": 0, "order": []}


def _reset() -> None:
    with _LOCK:
        _STATE.update(in_flight=0, max_in_flight=0, served=0, order=[])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self._serve()

    def _serve(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/stats":
            with _LOCK:
                return self._json(dict(_STATE))
        if url.path == "/reset":
            _reset()
            return self._json({"ok": True})
        with _LOCK:
            _STATE["in_flight"] = int(_STATE["in_flight"]) + 1  # type: ignore[call-overload]
            now = int(_STATE["in_flight"])  # type: ignore[call-overload]
            _STATE["max_in_flight"] = max(int(_STATE["max_in_flight"]), now)  # type: ignore[call-overload]
            _STATE["order"].append(query.get("id"))  # type: ignore[attr-defined]
        try:
            time.sleep(float(query.get("s", "0")))
            self._json({"ok": True, "id": query.get("id"), "in_flight": now})
        finally:
            with _LOCK:
                _STATE["in_flight"] = int(_STATE["in_flight"]) - 1  # type: ignore[call-overload]
                _STATE["served"] = int(_STATE["served"]) + 1  # type: ignore[call-overload]

    def _json(self, value: object) -> None:
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:  # a client hung up: quiet
        pass


@contextmanager
def serving() -> Iterator[str]:
    """The server on a free loopback port, in this process: yields its base URL."""
    _reset()
    server = _Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    _Server(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
