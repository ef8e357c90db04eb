"""Realtime reads to the end of the exchange the case describes: the events after the last
``response.create`` (a ``session.update`` and its ``session.updated``), and the event kinds the
case's ``events:`` expects, until they arrive or the deadline, which names the ones awaited."""

from __future__ import annotations

import json
from typing import Any

import a2a_sdk_agent  # noqa: E402  (examples/agents is on sys.path: tests/compliance/conftest.py)
import pytest

from tests.compliance.test_transport_servers import _realtime_app
from tests.helpers import run_pytest

pytest_plugins = ["pytester"]

FILE = """---
name: realtime-to-the-end
version: 1.0
transport: realtime
timeout: 2
---

## Test Cases

### 1. A session update alone

**Request:**
GET `/realtime`
```json
[{"type": "session.update", "session": {"instructions": "Be brief"}}]
```

**Strict:**
```yaml
reply:
  events[-1].kind: session.updated
  events[-1].data.session.instructions: Be brief
```

### 2. An update after the response

**Request:**
GET `/realtime`
```json
[
  {"type": "conversation.item.create", "item": {"type": "message", "role": "user",
    "content": [{"type": "input_text", "text": "hi"}]}},
  {"type": "response.create"},
  {"type": "session.update", "session": {"instructions": "later"}}
]
```

**Strict:**
```yaml
reply:
  text: "Echo: hi"
events:
  - kind: response.done
  - kind: session.updated
```
"""


def _mute_app(url: str, mode: str) -> Any:
    """A Realtime server that never acknowledges a session.update."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    async def session(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_json({"type": "session.created", "session": {"id": "s1"}})
        while True:
            event = await ws.receive_json()
            if event.get("type") == "response.create":
                await ws.send_json({"type": "response.done", "response": {"status": "completed"}})

    return Starlette(routes=[WebSocketRoute("/realtime", session)])


def _run(pytester: pytest.Pytester, app: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    server = a2a_sdk_agent.Server(app).start()
    try:
        pytester.makefile(".md", rt=FILE)
        monkeypatch.setenv("COMPLIANCE_REALTIME_URL", server.url)
        result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-results=r.jsonl")
    finally:
        server.shutdown()
    records = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
    return result, records


def test_events_after_the_last_response_create_are_read(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, _ = _run(pytester, _realtime_app, monkeypatch)
    result.assert_outcomes(passed=2)


def test_an_event_that_never_comes_is_named(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answered everything it must but never acknowledged the update: a FAILED naming the
    event awaited (not an ERROR: nothing hung, an event the case expects is missing)."""
    result, records = _run(pytester, _mute_app, monkeypatch)
    result.assert_outcomes(failed=2)
    for record in records:
        assert "waited until the case's timeout of 2 s for session.updated, which never came" in json.dumps(
            record
        )
