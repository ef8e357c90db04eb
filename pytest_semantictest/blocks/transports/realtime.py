"""A Realtime API client for compliance cases (the OpenAI Realtime protocol over a WebSocket, as the
WebAgents SDK serves it at ``/realtime``), on the ``websockets`` package.

A case opens one socket (one session: every turn of a multi-turn case shares it), waits for
``session.created``, then sends its client events in order; after each ``response.create`` it reads
server events until that response's ``response.done`` (or an ``error`` event) before it sends the
next. After the last client event it reads on to the end of the exchange the case describes: the
acknowledgement of each event sent after the last ``response.create`` (``session.update`` ->
``session.updated``, ...) and every event kind the case's strict ``events:`` expects that has not
come yet, until they have all arrived or the deadline passes (which then names the ones still
awaited: ``reply.waiting``). The client events are the case's own (a ``**Request:**`` whose body is a JSON array of
events) or the shorthand of an ``**Input:**``: each user message becomes a
``conversation.item.create`` and a ``response.create`` (an ``Agent:`` line of a conversation an
assistant item, without a response).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Protocol

from ...json_types import JSONObject, JSONValue
from .reply import Reply, last_state


class Socket(Protocol):
    """The WebSocket a session talks over (``websockets``' client connection, or a mutation run's tape)."""

    async def send(self, message: str) -> None: ...

    async def recv(self) -> str | bytes: ...

    async def __aenter__(self) -> object: ...

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None: ...


OPENERS: list[Callable[..., Awaitable[Socket]]] = []
"""A mutation run's recording or replaying socket opener (``docs/mutation.md``); empty: the real client."""

TEXT_DELTAS = frozenset(
    {"response.text.delta", "response.output_text.delta", "response.audio_transcript.delta"}
)
TEXT_DONE = frozenset({"response.text.done", "response.output_text.done"})
ACKS = {
    "session.update": "session.updated",
    "transcription_session.update": "transcription_session.updated",
    "conversation.item.create": "conversation.item.created",
    "conversation.item.delete": "conversation.item.deleted",
    "conversation.item.truncate": "conversation.item.truncated",
    "conversation.item.retrieve": "conversation.item.retrieved",
    "input_audio_buffer.commit": "input_audio_buffer.committed",
    "input_audio_buffer.clear": "input_audio_buffer.cleared",
    "output_audio_buffer.clear": "output_audio_buffer.cleared",
}
"""The server event that acknowledges a client event (the OpenAI Realtime protocol)."""


def client_events(config: JSONObject) -> list[JSONObject]:
    """The events the case sends: its own, or the shorthand's."""
    body = config.get("body")
    if isinstance(body, list):
        return [e for e in body if isinstance(e, dict)]
    if isinstance(body, dict):
        return [body]
    events: list[JSONObject] = []
    for message in config.get("messages") or []:
        role = "assistant" if message.get("role") == "assistant" else "user"
        kind = "text" if role == "assistant" else "input_text"
        events.append(
            {
                "type": "conversation.item.create",
                "item": {
                    "type": "message",
                    "role": role,
                    "content": [{"type": kind, "text": str(message.get("content", ""))}],
                },
            }
        )
        if role == "user":
            events.append({"type": "response.create"})
    return events


def ws_url(config: JSONObject) -> str:
    url = str(config.get("url") or str(config["base_url"]).rstrip("/") + "/realtime")
    return "ws" + url[4:] if url.startswith("http") else url


async def realtime_exchange(config: JSONObject, reply: Reply) -> None:
    """Run the case's session, filling ``reply`` as events arrive."""
    from websockets.exceptions import ConnectionClosed

    reply.url = ws_url(config)
    socket = await _open(config, reply)
    if socket is None:
        return
    reply.status = 101
    events = client_events(config)
    async with socket:
        try:
            await _converse(socket, reply, events, config)
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else 1006
            why = f" ({exc.rcvd.reason})" if exc.rcvd and exc.rcvd.reason else ""
            waiting = ", ".join(reply.waiting) or "the next event"
            reply.problem(
                f"the socket closed before {waiting} (close code {code}{why}); last state: {last_state(reply)}"
            )


async def _open(config: JSONObject, reply: Reply) -> Socket | None:
    """The session's socket; None (a problem said) when the server refuses the WebSocket."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    from ...trace_context import with_traceparent

    opener: Callable[..., Awaitable[Socket]] = OPENERS[0] if OPENERS else connect
    try:
        return await opener(
            reply.url,
            additional_headers=with_traceparent(config.get("headers") or {}),  # (the agent's spans: ours)
            proxy=None,
            open_timeout=None,
            ping_interval=None,
            max_size=2**24,
        )
    except InvalidStatus as exc:
        reply.status = exc.response.status_code
        reply.problem(f"the server refused the WebSocket (status {reply.status})")
        return None


async def _converse(socket: Socket, reply: Reply, events: list[JSONObject], config: JSONObject) -> None:
    """Send the case's client ``events``, each ``response.create`` read to its ``response.done``, then
    read on to the end of the exchange (an ``error`` event stops it early)."""
    if not await _until(socket, reply, {"session.created"}):
        return
    for event in events:
        await socket.send(json.dumps(event))
        if event.get("type") == "response.create":
            reply.final = False
            if not await _until(socket, reply, {"response.done"}):
                return
    await _to_the_end(socket, reply, awaited(events, config.get("expect_events"), reply))


def awaited(events: list[JSONObject], expected: JSONValue, reply: Reply) -> Counter[str]:
    """The server events still to come when every client event is sent: acknowledgements of the events
    after the last ``response.create``, and what the case's ``events:`` expects that has not come."""
    last = max((i for i, e in enumerate(events) if e.get("type") == "response.create"), default=-1)
    acks = Counter(ACKS[str(e.get("type"))] for e in events[last + 1 :] if e.get("type") in ACKS)
    wanted = Counter(str(k) for k in expected or [] if isinstance(k, str))
    wanted.subtract(Counter(str(e.get("kind")) for e in reply.events))
    return acks | +wanted  # an acknowledgement the case also expects is one event, not two


async def _to_the_end(socket: Socket, reply: Reply, pending: Counter[str]) -> None:
    """Read until every ``pending`` event arrived (the deadline bounds it; an ``error`` event ends it)."""
    reply.reading_on = True
    while +pending:
        reply.waiting = sorted(+pending)
        if not await _until(socket, reply, set(+pending)):
            return
        pending[str(reply.events[-1]["kind"])] -= 1
    reply.waiting = []


async def _until(socket: Socket, reply: Reply, wanted: set[str]) -> bool:
    """Read server events until one of ``wanted``; False after an ``error`` event."""
    reply.waiting = reply.waiting or sorted(wanted)
    while True:
        raw = await socket.recv()
        try:
            event = json.loads(raw)
        except ValueError:
            reply.event("unknown", str(raw)[:500])
            continue
        kind = str(event.get("type")) if isinstance(event, dict) else "unknown"
        reply.event(kind, event)
        _fold(reply, kind, event if isinstance(event, dict) else {})
        if kind == "error":
            error = event.get("error", event)
            reply.error = error
            reply.problem(f"error event: {json.dumps(error, ensure_ascii=False)[:300]}")
            return False
        if kind in wanted:
            reply.waiting = []
            return True


def _fold(reply: Reply, kind: str, event: JSONObject) -> None:
    """Fold one server event into ``reply``: a response's state and text, and its tool calls."""
    turns = reply.extra.setdefault("responses", [])
    fold = _FOLDS.get(kind)
    if fold is not None:
        fold(reply, turns, event)


def _response_created(reply: Reply, turns: list[JSONObject], event: JSONObject) -> None:
    reply.state = str((event.get("response") or {}).get("status") or "in_progress")
    turns.append({"id": (event.get("response") or {}).get("id"), "text": "", "status": reply.state})
    reply.deltas = False


def _text_delta(reply: Reply, turns: list[JSONObject], event: JSONObject) -> None:
    reply.texts.append(str(event.get("delta", "")))
    reply.deltas = True
    if turns:
        turns[-1]["text"] += str(event.get("delta", ""))


def _text_done(reply: Reply, turns: list[JSONObject], event: JSONObject) -> None:
    """A finished text counts only for a response that streamed no deltas of it."""
    if reply.deltas:
        return
    reply.texts.append(str(event.get("text", "")))
    if turns:
        turns[-1]["text"] += str(event.get("text", ""))


def _arguments_done(reply: Reply, turns: list[JSONObject], event: JSONObject) -> None:
    reply.tool_calls.append(_tool_call(event))


def _response_done(reply: Reply, turns: list[JSONObject], event: JSONObject) -> None:
    """The response's final state, and the function calls of its output not streamed before."""
    response = event.get("response") or {}
    reply.state = str(response.get("status") or "completed")
    reply.final = True
    if turns:
        turns[-1]["status"] = reply.state
    for item in response.get("output") or []:
        if _is_function_call(item) and not _known_call(reply, item.get("call_id")):
            reply.tool_calls.append(_tool_call(item))
    if reply.state == "failed":
        reply.error = response.get("status_details")


def _is_function_call(item: JSONValue) -> bool:
    return isinstance(item, dict) and item.get("type") == "function_call"


def _known_call(reply: Reply, call_id: JSONValue) -> bool:
    return any(c.get("call_id") == call_id for c in reply.tool_calls)


def _tool_call(source: JSONObject) -> JSONObject:
    return {
        "name": source.get("name"),
        "call_id": source.get("call_id"),
        "arguments": _arguments(source.get("arguments")),
    }


_FOLDS: dict[str, Callable[[Reply, list[JSONObject], JSONObject], None]] = {
    "response.created": _response_created,
    **dict.fromkeys(TEXT_DELTAS, _text_delta),
    **dict.fromkeys(TEXT_DONE, _text_done),
    "response.function_call_arguments.done": _arguments_done,
    "response.done": _response_done,
}
"""What each server event kind changes in the reply; other kinds are recorded only."""


def _arguments(value: JSONValue) -> JSONValue:
    try:
        return json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return value
