"""The WebAgents SDK's A2A transport before its 0.4 release (``dialect: webagents``): ``POST /tasks``
answered with SSE events ``task.started``, ``task.message`` deltas, ``task.progress``,
``task.completed`` or ``task.failed``; then ``GET /tasks/{id}`` and ``GET /tasks/{id}/artifacts``; the
card at ``/.well-known/agent.json``. The SDK now serves the A2A binding (v1.0) instead; agents built on
the older releases still speak this."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...json_types import JSONValue
from .reply import Reply, last_state
from .sse_read import read_events
from .tool_calls import ToolCallShapes, calls_in

if TYPE_CHECKING:
    import httpx

    from ...json_types import JSONObject
    from .bounded import Bounded

WEBAGENTS_FINAL = {"task.completed": "completed", "task.failed": "failed", "task.cancelled": "cancelled"}


async def webagents_exchange(
    http: Bounded, base: str, config: JSONObject, reply: Reply, shapes: ToolCallShapes
) -> None:
    url = config.get("url") or base + "/tasks"
    body = _body(config)
    reply.url = url
    content = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        **(config.get("headers") or {}),
    }

    async def read(response: httpx.Response) -> bool:
        """Whether a stream of task events arrived (read until its final event)."""
        reply.status = response.status_code
        if "text/event-stream" not in response.headers.get("content-type", ""):
            reply.event("body", json_or_text((await response.aread()).decode("utf-8", "replace")))
            if response.status_code < 400:
                reply.problem(
                    f"expected an SSE stream of task events, got {response.headers.get('content-type')}"
                )
            return False
        async for event in read_events(response):
            _event(event.event or "message", event.data, reply, shapes)
            if reply.final:
                break
        return True

    _, streamed = await http.send(config.get("method") or "POST", url, headers, content, read)
    if not streamed:
        return
    if not reply.final:
        reply.problem(f"the stream ended before the task completed; last state: {last_state(reply)}")
        return
    if reply.task_id:
        await _fetch_task(http, base, config, reply)


def _body(config: JSONObject) -> JSONValue:
    """The case's own body, or its messages in the dialect's shape (one ``message`` or ``messages``)."""
    body = config.get("body")
    if body is not None:
        return body
    messages = [
        {
            "role": "agent" if m.get("role") == "assistant" else m.get("role", "user"),
            "parts": [{"type": "text", "text": str(m.get("content", ""))}],
        }
        for m in config.get("messages") or []
    ]
    return {"message": messages[-1]} if len(messages) == 1 else {"messages": messages}


async def _fetch_task(http: Bounded, base: str, config: JSONObject, reply: Reply) -> None:
    """The finished task (``GET /tasks/{id}``) and its artifacts (``GET /tasks/{id}/artifacts``)."""
    headers = config.get("headers") or {}
    response = await http.get(f"{base}/tasks/{reply.task_id}", headers=headers)
    reply.task = json_or_text(response.text)
    response = await http.get(f"{base}/tasks/{reply.task_id}/artifacts", headers=headers)
    found = json_or_text(response.text)
    if isinstance(found, dict) and isinstance(found.get("artifacts"), list):
        reply.artifacts = found["artifacts"]


def _event(kind: str, data: str, reply: Reply, shapes: ToolCallShapes) -> None:
    """Record one task event and fold what it says into ``reply``."""
    payload = json_or_text(data)
    reply.event(kind, payload)
    fields = payload if isinstance(payload, dict) else {}
    fold = _FOLDS.get(kind)
    if fold is not None:
        fold(reply, kind, fields, shapes)


def _started(reply: Reply, kind: str, fields: JSONObject, shapes: ToolCallShapes) -> None:
    reply.task_id = fields.get("id") or reply.task_id
    reply.state = str(fields.get("status") or "running")


def _message(reply: Reply, kind: str, fields: JSONObject, shapes: ToolCallShapes) -> None:
    """A message delta: its text parts, its data parts, and the tool calls those data parts hold."""
    parts = [p for p in fields.get("parts") or [] if isinstance(p, dict)]
    reply.texts.extend(str(p.get("text", "")) for p in parts if p.get("type", "text") == "text")
    data_parts = [p.get("data") for p in parts if p.get("type") == "data"]
    reply.data.extend(data_parts)
    for data in data_parts:
        reply.tool_calls.extend(calls_in(data, shapes))


def _progress(reply: Reply, kind: str, fields: JSONObject, shapes: ToolCallShapes) -> None:
    """A step of the task: a tool call when it has one's shape."""
    reply.tool_calls.extend(calls_in(fields.get("data", fields), shapes))


def _final(reply: Reply, kind: str, fields: JSONObject, shapes: ToolCallShapes) -> None:
    reply.state = str(fields.get("status") or WEBAGENTS_FINAL[kind])
    reply.final = True
    if kind == "task.failed":
        reply.error = fields.get("error") or "task.failed"


_FOLDS: dict[str, Callable[[Reply, str, JSONObject, ToolCallShapes], None]] = {
    "task.started": _started,
    "task.message": _message,
    "task.progress": _progress,
    **dict.fromkeys(WEBAGENTS_FINAL, _final),
}
"""What each task event changes in the reply; other events are recorded only."""


def json_or_text(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError:
        return text
