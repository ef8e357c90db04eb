"""A2A 1.0 over its HTTP+JSON binding (``dialect: rest``): ``POST <url>/message:stream`` (an SSE stream
of StreamResponse objects) or ``POST <url>/message:send``, then ``GET <url>/tasks/{id}`` until the task
is final; the same payloads as the JSON-RPC binding without its envelope, read by :mod:`.a2a_fold`.
An error is an HTTP status with a JSON body. The endpoint is the card's ``HTTP+JSON`` interface."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING

from ...json_types import JSONObject, JSONValue
from .a2a_fold import fold_payload
from .reply import Reply, last_state
from .sse_read import read_events

if TYPE_CHECKING:
    import httpx

    from .bounded import Bounded
    from .tool_calls import ToolCallShapes

POLL_FIRST_S, POLL_MAX_S = 0.05, 1.0


def v1_params(text: str, context_id: str | None) -> JSONObject:
    """A SendMessageRequest with one user text part, built with a2a-sdk's v1.0 (protobuf) types."""
    from a2a.types import a2a_pb2
    from google.protobuf import json_format

    message = a2a_pb2.Message(
        role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=text)], message_id=str(uuid.uuid4())
    )
    if context_id:
        message.context_id = context_id
    params: JSONObject = json_format.MessageToDict(a2a_pb2.SendMessageRequest(message=message))
    return params


async def rest_exchange(
    http: Bounded, url: str, config: JSONObject, reply: Reply, shapes: ToolCallShapes, stream: bool
) -> None:
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream, application/json",
        "A2A-Version": "1.0",
        **(config.get("headers") or {}),
    }
    base = url.rstrip("/")
    if _own_request(config):
        await _turn(
            http,
            str(config.get("method") or "POST"),
            str(config.get("url") or base),
            headers,
            config.get("body"),
            reply,
            shapes,
            base,
        )
        return
    path = "/message:stream" if stream else "/message:send"
    turns = reply.extra.setdefault("turns", [])
    for text in _user_texts(config):
        reply.final, reply.task_id, start = False, None, len(reply.texts)
        await _turn(
            http, "POST", base + path, headers, v1_params(text, reply.context_id), reply, shapes, base
        )
        turns.append({"text": "".join(reply.texts[start:]), "state": reply.state, "final": reply.final})
        if reply.problems or reply.error:
            return


def _own_request(config: JSONObject) -> bool:
    """The case sends a request of its own (a body, or a method other than POST), not messages."""
    return config.get("body") is not None or config.get("method") not in (None, "POST")


def _user_texts(config: JSONObject) -> list[str]:
    return [str(m.get("content", "")) for m in config.get("messages") or [] if m.get("role") == "user"]


async def _turn(
    http: Bounded,
    method: str,
    url: str,
    headers: dict[str, str],
    body: JSONValue,
    reply: Reply,
    shapes: ToolCallShapes,
    base: str,
) -> None:
    reply.url = url
    raw = await _send(http, method, url, headers, body, reply, shapes)
    if raw is None:
        return
    marks = len(reply.texts), len(reply.data), len(reply.tool_calls), len(reply.messages)
    _fold(raw, reply, shapes)
    if reply.final or reply.error or reply.status >= 400:
        return
    await _poll(http, base, headers, reply, shapes, marks)
    if not reply.final and not reply.error:
        reply.problem(f"the response ended before the task completed; last state: {last_state(reply)}")


async def _poll(
    http: Bounded,
    base: str,
    headers: dict[str, str],
    reply: Reply,
    shapes: ToolCallShapes,
    marks: tuple[int, int, int, int],
) -> None:
    """Get the task until it is final (the case's deadline bounds this); each answer is the whole
    task, so what the turn's earlier answers added is replaced, not repeated."""
    wait, polls = POLL_FIRST_S, 0
    while reply.task_id and not reply.final and not reply.error:
        await asyncio.sleep(wait)
        wait = min(wait * 2, POLL_MAX_S)
        raw = await _send(http, "GET", f"{base}/tasks/{reply.task_id}", headers, None, reply, shapes)
        polls += 1
        reply.extra["polls"] = polls
        if raw is None or reply.status >= 400:
            return
        del (
            reply.texts[marks[0] :],
            reply.data[marks[1] :],
            reply.tool_calls[marks[2] :],
            reply.messages[marks[3] :],
        )
        _fold(raw, reply, shapes)


async def _send(
    http: Bounded,
    method: str,
    url: str,
    headers: dict[str, str],
    body: JSONValue,
    reply: Reply,
    shapes: ToolCallShapes,
) -> str | None:
    content = (
        None if body is None else json.dumps(body).encode() if not isinstance(body, str) else body.encode()
    )

    async def read(response: httpx.Response) -> str | None:
        reply.status = response.status_code
        if "text/event-stream" not in response.headers.get("content-type", ""):
            return (await response.aread()).decode("utf-8", "replace")
        async for event in read_events(response):
            _fold(event.data, reply, shapes)
            if reply.final:
                break
        if not reply.final and not reply.error:
            reply.problem(f"the stream ended before the task completed; last state: {last_state(reply)}")
        return None

    _, raw = await http.send(method, url, headers, content, read)
    return raw


def _fold(raw: str, reply: Reply, shapes: ToolCallShapes) -> None:
    """One HTTP+JSON payload: a StreamResponse, a SendMessageResponse or a Task; an error body when the
    status says so."""
    if not raw.strip():
        return
    if reply.status >= 400:
        try:
            error: JSONValue = json.loads(raw)
        except ValueError:
            error = raw[:500]
        reply.event("error", error)
        reply.error = error
        inner = error.get("error", error) if isinstance(error, dict) else error
        message = inner.get("message") if isinstance(inner, dict) else inner
        reply.problem(f"HTTP {reply.status}: {str(message)[:300]}")
        return
    try:
        payload = json.loads(raw)
    except ValueError:
        reply.event("unknown", raw[:500])
        return
    fold_payload(json.dumps({"jsonrpc": "2.0", "id": None, "result": payload}), reply, "1.0", shapes)
