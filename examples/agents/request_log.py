"""The example agents note each request they receive, one line each, in the file named by
``EXAMPLE_AGENT_REQUEST_LOG`` (unset: nothing is written). A test counts them: a mutation run
(``docs/mutation.md``) must send none while it replays.

A line is ``<pid> <agent> <method> <path>``: the agents run in each pytest process (also each xdist
worker), so the pid tells whose request it was.
"""

from __future__ import annotations

import os
import threading
from typing import Any

VARIABLE = "EXAMPLE_AGENT_REQUEST_LOG"
_lock = threading.Lock()


def note(agent: str, method: str, path: str) -> None:
    """Append one request to the log, when one is asked for."""
    name = os.environ.get(VARIABLE)
    if not name:
        return
    with _lock, open(name, "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {agent} {method} {path.split('?', 1)[0]}\n")


class Noted:
    """A ``BaseHTTPRequestHandler`` mixin: each request parsed is noted under the handler's ``agent``."""

    agent = "http"

    def parse_request(self) -> bool:
        parsed: bool = super().parse_request()  # type: ignore[misc]
        if parsed:
            note(self.agent, str(getattr(self, "command", "")), str(getattr(self, "path", "")))
        return parsed


def noted_asgi(app: Any, agent: str) -> Any:
    """An ASGI application noting each HTTP request and WebSocket ``app`` is given."""

    async def logged(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") in ("http", "websocket"):
            note(agent, str(scope.get("method", "WEBSOCKET")), str(scope.get("path", "")))
        await app(scope, receive, send)

    return logged
