"""A loopback HTTP server that answers after a delay, counting requests in flight (stdlib only).

``GET|POST /sleep?s=S&id=X``: after S seconds, ``{"ok": true, "id": X, "in_flight": N}`` (N: requests
being served when this one started, itself included). ``POST .../chat/completions``: after the
server's delay, an OpenAI chat completion echoing the last user message ("Echo: ..."). ``GET /stats``:
``{"max_in_flight": N, "served": M, "order": [ids in the order they started]}``; ``POST /reset``
zeroes them. One thread per request; a listen backlog of 128.

    python -m tests.concurrency.latency_server --port 8765 [--delay 1]   # or ``serving(delay)`` in-process
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlsplit

from tests.servers.quiet import QuietHandler, QuietServer, in_thread

_LOCK = threading.Lock()
_STATE: dict[str, object] = {"in_flight": 0, "max_in_flight": 0, "served": 0, "order": []}
_DELAY = {"s": 0.0}


def _reset() -> None:
    with _LOCK:
        _STATE.update(in_flight=0, max_in_flight=0, served=0, order=[])


class Handler(QuietHandler):
    disable_nagle_algorithm = True

    def serve(self, body: bytes) -> None:
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
            time.sleep(float(query.get("s", _DELAY["s"])))
            if url.path.endswith("/chat/completions"):
                return self._json(_completion(body))
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


def _completion(body: bytes) -> dict[str, object]:
    try:
        messages = json.loads(body or b"{}").get("messages") or []
    except ValueError:
        messages = []
    last = next(
        (m.get("content") for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), ""
    )
    message = {"role": "assistant", "content": f"Echo: {last}"}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "echo-agent",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@contextmanager
def serving(delay: float = 0.0) -> Iterator[str]:
    """The server on a free loopback port, in this process (``delay``: seconds before each chat
    completion and each ``/sleep`` without ``s``): yields its base URL."""
    _reset()
    _DELAY["s"] = delay
    with in_thread(Handler) as base:
        yield base


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    _DELAY["s"] = args.delay
    QuietServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
