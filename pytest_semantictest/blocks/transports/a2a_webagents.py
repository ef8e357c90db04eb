"""The WebAgents SDK's A2A transport before its 0.4 release (``dialect: webagents``): ``POST /tasks``
answered with SSE events ``task.started``, ``task.message`` deltas, ``task.progress``,
``task.completed`` or ``task.failed``; then ``GET /tasks/{id}`` and ``GET /tasks/{id}/artifacts``; the
card at ``/.well-known/agent.json``. The SDK now serves the A2A binding (v1.0) instead; agents built on
the older releases still speak this."""

from __future__ import annotations

import json
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
    body = config.get("body")
    if body is None:
        messages = [
            {
                "role": "agent" if m.get("role") == "assistant" else m.get("role", "user"),
                "parts": [{"type": "text", "text": str(m.get("content", ""))}],
            }
            for m in config.get("messages") or []
        ]
        body = {"message": messages[-1]} if len(messages) == 1 else {"messages": messages}
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
        for path, key in (
            (f"/tasks/{reply.task_id}", "task"),
            (f"/tasks/{reply.task_id}/artifacts", "artifacts"),
        ):
            response = await http.get(base + path, headers=config.get("headers") or {})
            found = json_or_text(response.text)
            if key == "task":
                reply.task = found
            elif isinstance(found, dict) and isinstance(found.get("artifacts"), list):
                reply.artifacts = found["artifacts"]


def _event(kind: str, data: str, reply: Reply, shapes: ToolCallShapes) -> None:
    payload = json_or_text(data)
    reply.event(kind, payload)
    fields = payload if isinstance(payload, dict) else {}
    if kind == "task.started":
        reply.task_id = fields.get("id") or reply.task_id
        reply.state = str(fields.get("status") or "running")
    elif kind == "task.message":
        parts = fields.get("parts") or []
        reply.texts.extend(
            str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type", "text") == "text"
        )
        data_parts = [p.get("data") for p in parts if isinstance(p, dict) and p.get("type") == "data"]
        reply.data.extend(data_parts)
        reply.tool_calls.extend(c for d in data_parts for c in calls_in(d, shapes))
    elif kind == "task.progress":  # a step of the task: a tool call when it has one's shape
        reply.tool_calls.extend(calls_in(fields.get("data", fields), shapes))
    elif kind in WEBAGENTS_FINAL:
        reply.state = str(fields.get("status") or WEBAGENTS_FINAL[kind])
        reply.final = True
        if kind == "task.failed":
            reply.error = fields.get("error") or "task.failed"


def json_or_text(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError:
        return text
