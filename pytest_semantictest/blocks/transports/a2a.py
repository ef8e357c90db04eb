"""An A2A client for compliance cases, in the two dialects agents serve (docs/compliance.md, "A2A").

- ``jsonrpc``: the A2A specification (v0.3 methods, as ``a2a-sdk`` serves them with its v0.3
  compatibility): JSON-RPC 2.0 ``message/stream`` (or a request written in the case) answered with
  an SSE stream of JSON-RPC responses carrying a Task, a Message, TaskStatusUpdateEvents and
  TaskArtifactUpdateEvents; the card at ``/.well-known/agent-card.json``. Requests are built and
  every payload is read with ``a2a-sdk``'s own types (``a2a.compat.v0_3.types``).
- ``webagents``: the WebAgents SDK's A2A transport: ``POST /tasks`` answered with SSE events
  ``task.started``, ``task.message`` deltas, ``task.progress``, ``task.completed`` or
  ``task.failed``; then ``GET /tasks/{id}`` and ``GET /tasks/{id}/artifacts``; the card at
  ``/.well-known/agent.json``.

The dialect is the front matter's ``dialect``, else what the request shows (a ``jsonrpc`` body, a
``/tasks`` path), else the card the server has. What arrives is folded into one :class:`Reply`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import httpx

from ...agents.exchange import send_within
from ...deadline import Deadline
from ...json_types import JSONObject, JSONValue
from .reply import Reply, last_state
from .sse_read import read_events

if TYPE_CHECKING:
    from pydantic import ValidationError

T = TypeVar("T")
CARD_PATHS = {"jsonrpc": "/.well-known/agent-card.json", "webagents": "/.well-known/agent.json"}
FINAL_STATES = frozenset(
    {"completed", "failed", "canceled", "cancelled", "rejected", "input-required", "auth-required"}
)
WEBAGENTS_FINAL = {"task.completed": "completed", "task.failed": "failed", "task.cancelled": "cancelled"}


async def a2a_exchange(client: httpx.AsyncClient, config: JSONObject, reply: Reply) -> None:
    """Run the case's exchange, filling ``reply`` as events arrive (so a deadline leaves what came)."""
    base = str(config["base_url"]).rstrip("/")
    http = _Bounded(client, float(config.get("timeout") or 60_000) / 1000)
    dialect = config.get("dialect") or _dialect_of(config)
    if dialect is None:
        dialect = await _probe(http, base, config)
        if dialect is None:
            reply.problem(
                f"no A2A agent card at {base}{CARD_PATHS['jsonrpc']} or {base}{CARD_PATHS['webagents']}: "
                "name the dialect in the front matter (dialect: jsonrpc or dialect: webagents)"
            )
            return
    reply.dialect = dialect
    await _card(http, base, dialect, config, reply)
    if dialect == "jsonrpc":
        await _jsonrpc(http, base, config, reply)
    else:
        await _webagents(http, base, config, reply)


class _Bounded:
    """The session's client through the one HTTP layer (``agents.exchange.send_within``), each request
    within the case's timeout (the whole exchange has a deadline too, in TransportRequest)."""

    def __init__(self, http: httpx.AsyncClient, seconds: float) -> None:
        self.http, self.seconds = http, seconds

    async def get(self, url: str, headers: dict[str, str]) -> httpx.Response:
        """A GET read to its end (``.text``, ``.json()`` work after it)."""
        response, _ = await self.send("GET", url, headers, None, _read_all)
        return response

    async def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        read: Callable[[httpx.Response], Awaitable[T]],
    ) -> tuple[httpx.Response, T]:
        request = self.http.build_request(
            method, url, headers=headers, content=content, timeout=httpx.Timeout(self.seconds)
        )
        return await send_within(
            Deadline(self.seconds * 1000, f"{method} {url}"),
            self.http,
            request,
            read,
            follow_redirects=True,
            phase="reading the event stream",
        )


async def _read_all(response: httpx.Response) -> bytes:
    return await response.aread()


def _dialect_of(config: JSONObject) -> str | None:
    body = config.get("body")
    if isinstance(body, dict) and "jsonrpc" in body:
        return "jsonrpc"
    if "/tasks" in str(config.get("url") or ""):
        return "webagents"
    return None


async def _probe(http: _Bounded, base: str, config: JSONObject) -> str | None:
    for dialect, path in CARD_PATHS.items():
        # nothing listening: raises
        response = await http.get(base + path, headers=config.get("headers") or {})
        if response.status_code == 200:
            return dialect
    return None


async def _card(http: _Bounded, base: str, dialect: str, config: JSONObject, reply: Reply) -> None:
    """Fetch the agent card and validate it (A2A's AgentCard type for ``jsonrpc``)."""
    url = base + CARD_PATHS[dialect]
    response = await http.get(url, headers=config.get("headers") or {})
    try:
        card = response.json()
    except ValueError:
        reply.problem(f"the agent card at {url} is not JSON (status {response.status_code})")
        return
    reply.card = card
    if response.status_code != 200:
        reply.problem(f"the agent card at {url} answered status {response.status_code}")
    elif dialect == "jsonrpc":
        from a2a.compat.v0_3.types import AgentCard
        from pydantic import ValidationError

        try:
            AgentCard.model_validate(card)
        except ValidationError as exc:
            reply.problem(
                f"the agent card at {url} does not validate as an A2A AgentCard: {_first_errors(exc)}"
            )
    elif not isinstance(card, dict) or not card.get("name"):
        reply.problem(f"the agent card at {url} has no name")


def _first_errors(exc: ValidationError) -> str:
    errors = exc.errors()[:3]
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(card)'}: {e['msg']}" for e in errors)


# -- JSON-RPC ---------------------------------------------------------------------------------------


def _jsonrpc_body(config: JSONObject, text: str, context_id: str | None) -> JSONObject:
    from a2a.compat.v0_3 import types as a2a

    message = a2a.Message(
        role=a2a.Role.user,
        parts=[a2a.Part(root=a2a.TextPart(text=text))],
        message_id=str(uuid.uuid4()),
        context_id=context_id,
    )
    request = a2a.SendStreamingMessageRequest(
        id=str(uuid.uuid4()), params=a2a.MessageSendParams(message=message)
    )
    return request.model_dump(mode="json", exclude_none=True)


async def _jsonrpc(http: _Bounded, base: str, config: JSONObject, reply: Reply) -> None:
    url = config.get("url") or _rpc_url(reply.card, base)
    if config.get("body") is not None:
        await _jsonrpc_turn(http, url, config, config["body"], reply)
        return
    turns = reply.extra.setdefault("turns", [])
    for text in _user_texts(config):  # one message a user turn, the context kept
        reply.final, start = False, len(reply.texts)
        await _jsonrpc_turn(http, url, config, _jsonrpc_body(config, text, reply.context_id), reply)
        turns.append({"text": "".join(reply.texts[start:]), "state": reply.state, "final": reply.final})
        if reply.problems or reply.error:
            return


def _rpc_url(card: JSONValue, base: str) -> str:
    url = card.get("url") if isinstance(card, dict) else None
    return url if isinstance(url, str) and url.startswith(base) else base + "/"


def _user_texts(config: JSONObject) -> list[str]:
    return [str(m.get("content", "")) for m in config.get("messages") or [] if m.get("role") == "user"]


async def _jsonrpc_turn(http: _Bounded, url: str, config: JSONObject, body: JSONValue, reply: Reply) -> None:
    reply.url = url
    content = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream, application/json",
        **(config.get("headers") or {}),
    }

    async def read(response: httpx.Response) -> str | None:
        reply.status = response.status_code
        if "text/event-stream" not in response.headers.get("content-type", ""):
            return (await response.aread()).decode("utf-8", "replace")
        async for event in read_events(response):
            _jsonrpc_payload(event.data, reply)
            if reply.final:
                break
        if not reply.final and not reply.error:
            reply.problem(f"the stream ended before the task completed; last state: {last_state(reply)}")
        return None

    _, raw = await http.send(config.get("method") or "POST", url, headers, content, read)
    if raw is None:
        return
    if raw.strip():
        _jsonrpc_payload(raw, reply)
    if not reply.final and not reply.error and reply.status < 400:
        reply.problem(f"the response ended before the task completed; last state: {last_state(reply)}")


def _jsonrpc_payload(data: str, reply: Reply) -> None:
    """One JSON-RPC response (a stream event's data, or a whole body), read with a2a-sdk's types."""
    from a2a.compat.v0_3 import types as a2a
    from pydantic import ValidationError

    try:
        payload = json.loads(data)
    except ValueError:
        reply.event("unknown", data[:500])
        return
    try:
        parsed = a2a.SendStreamingMessageResponse.model_validate(payload).root
    except ValidationError:
        kind = payload.get("result", {}).get("kind") if isinstance(payload.get("result"), dict) else None
        reply.event(f"unknown:{kind}" if kind else "unknown", payload)
        return
    if isinstance(parsed, a2a.JSONRPCErrorResponse):
        error = parsed.error.model_dump(mode="json", exclude_none=True)
        reply.event("error", payload)
        reply.error = error
        reply.problem(f"JSON-RPC error {error.get('code')}: {error.get('message')}")
        return
    result = parsed.result
    reply.event(str(result.kind), payload.get("result"))
    if isinstance(result, a2a.Task):
        reply.task_id, reply.context_id = result.id, result.context_id
        _state(reply, result.status)
        for artifact in result.artifacts or []:
            _artifact(reply, artifact, append=False)
    elif isinstance(result, a2a.Message):
        reply.context_id = result.context_id or reply.context_id
        reply.messages.append(result.model_dump(mode="json", exclude_none=True))
        _parts(reply, result.parts)
        reply.final = True  # a Message is the whole answer
    elif isinstance(result, a2a.TaskStatusUpdateEvent):
        reply.task_id, reply.context_id = result.task_id, result.context_id
        _state(reply, result.status)
        reply.final = reply.final or bool(result.final)
    elif isinstance(result, a2a.TaskArtifactUpdateEvent):
        _artifact(reply, result.artifact, append=bool(result.append))


def _state(reply: Reply, status: JSONValue) -> None:
    reply.state = str(status.state.value)
    if reply.state in FINAL_STATES:
        reply.final = True
    if status.message is not None:
        reply.messages.append(status.message.model_dump(mode="json", exclude_none=True))
    if reply.state in ("failed", "rejected") and status.message is not None:
        reply.error = _text_of(status.message.parts) or reply.state


def _artifact(reply: Reply, artifact: JSONValue, append: bool) -> None:
    dumped = artifact.model_dump(mode="json", exclude_none=True)
    known = next((a for a in reply.artifacts if a.get("artifactId") == artifact.artifact_id), None)
    if known is not None and append:
        known["parts"] = [*known.get("parts", []), *dumped.get("parts", [])]
    elif known is not None:
        known.clear()
        known.update(dumped)
    else:
        reply.artifacts.append(dumped)
    _parts(reply, artifact.parts)


def _parts(reply: Reply, parts: JSONValue) -> None:
    for part in parts or []:
        inner = getattr(part, "root", part)
        kind = getattr(inner, "kind", None)
        if kind == "text":
            reply.texts.append(inner.text)
        elif kind == "data":
            reply.data.append(inner.data)
            if isinstance(inner.data, dict) and ("name" in inner.data and "arguments" in inner.data):
                reply.tool_calls.append(inner.data)


def _text_of(parts: JSONValue) -> str:
    return "".join(getattr(getattr(p, "root", p), "text", "") or "" for p in parts or [])


# -- WebAgents --------------------------------------------------------------------------------------


async def _webagents(http: _Bounded, base: str, config: JSONObject, reply: Reply) -> None:
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
            reply.event("body", _json_or_text((await response.aread()).decode("utf-8", "replace")))
            if response.status_code < 400:
                reply.problem(
                    f"expected an SSE stream of task events, got {response.headers.get('content-type')}"
                )
            return False
        async for event in read_events(response):
            _webagents_event(event.event or "message", event.data, reply)
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
            found = _json_or_text(response.text)
            if key == "task":
                reply.task = found
            elif isinstance(found, dict) and isinstance(found.get("artifacts"), list):
                reply.artifacts = found["artifacts"]


def _webagents_event(kind: str, data: str, reply: Reply) -> None:
    payload = _json_or_text(data)
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
        reply.data.extend(p.get("data") for p in parts if isinstance(p, dict) and p.get("type") == "data")
    elif kind in WEBAGENTS_FINAL:
        reply.state = str(fields.get("status") or WEBAGENTS_FINAL[kind])
        reply.final = True
        if kind == "task.failed":
            reply.error = fields.get("error") or "task.failed"


def _json_or_text(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError:
        return text
