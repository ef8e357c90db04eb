"""ChatResponse: what an OpenAI-style chat server answered, read once for the checks.

Input: an ``HttpRequest`` output (``{status, headers, body, ...}``). Output: ``ok`` (a response
arrived), ``status``, ``headers``, ``content_type`` (media type), ``stream`` (SSE), ``json`` /
``is_json`` (a JSON body), ``chunks`` (the stream's JSON data payloads), ``final_chunk`` (the
last chunk with choices), ``final_event`` (``[DONE]`` or the last data), ``events`` (body
``events`` or the stream's typed payloads, such as ``{"type": "handoff", "from", "to"}``),
``content`` (message content, or the deltas concatenated), ``agent`` (``agent`` or ``model``),
``tool_calls`` and ``error``. When the request step disconnected on purpose (a case whose
behaviour says the client goes away after N chunks), ``client_disconnect`` (``after_chunks``,
``chunks_read``, ``disconnected``) and ``follow_up`` (the request sent afterwards and what it got)
are passed on: the stream fields then describe only what was read before the disconnect.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ..json_types import JSONObject, JSONValue
from .base import Block
from .stream.sse import SSEEvent, decode_event, loads, parse_events

if TYPE_CHECKING:
    from ..step import StepContext

TEXT_LIMIT = 500


class ChatResponseConfig(BaseModel):
    """A ChatResponse's config: ``from``, the DataBus slot to read (any value: a missing slot is the
    step's error when it runs)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    from_: JSONValue = Field(default=None, alias="from")


class ChatResponse(Block):
    """Config ``from``: the DataBus slot holding the HttpRequest output (default ``response``);
    an input ``response`` wins over it."""

    name = "ChatResponse"
    concurrency_safe = True
    primary_input = "response"
    config_model = ChatResponseConfig
    config_keys = frozenset({"from"})
    inputs = ("response",)
    outputs = (
        "ok",
        "status",
        "headers",
        "content_type",
        "stream",
        "json",
        "is_json",
        "chunks",
        "final_chunk",
        "final_event",
        "events",
        "content",
        "agent",
        "tool_calls",
        "error",
        "client_disconnect",
        "follow_up",
    )

    async def process(self, inputs: JSONObject, ctx: StepContext | None) -> JSONObject:
        response = inputs.get("response")
        if response is None and ctx is not None:  # read the slot directly: the trace stays short
            response = ctx.bus.slot(str(self.config.get("from") or "response"))
        if not isinstance(response, dict):
            response = {}
        return read_response(response)


def read_response(response: JSONObject) -> JSONObject:
    """The compliance view of one HTTP response (pure; see the module docstring)."""
    raw_status, raw_error, raw_body = response.get("status"), response.get("error"), response.get("body")
    status = raw_status if isinstance(raw_status, int) else 0
    error = raw_error if isinstance(raw_error, str) else None
    headers = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    body = raw_body if isinstance(raw_body, str) else ""
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    out: JSONObject = {"ok": status > 0 and error is None, "status": status}
    out |= _passed_on(response)
    out |= {
        "headers": headers,
        "content_type": media,
        "stream": False,
        "json": None,
        "is_json": False,
        "chunks": [],
        "final_chunk": None,
        "final_event": None,
        "events": [],
        "content": None,
        "agent": None,
        "tool_calls": [],
        "error": error,
    }
    if _is_stream(media, body):
        _stream(body, out)
    else:
        _answer(body, out)
    return out


def _passed_on(response: JSONObject) -> JSONObject:
    """What ChatRequest adds when the client went away on purpose (the disconnect, the follow-up)."""
    return {
        key: response[key]
        for key in ("client_disconnect", "follow_up")
        if isinstance(response.get(key), dict)
    }


def _is_stream(media: str, body: str) -> bool:
    """An SSE stream: said by its content type, or, without one, by how the body starts."""
    return media == "text/event-stream" or (not media and body.lstrip().startswith(("data:", "event:")))


def _answer(body: str, out: JSONObject) -> None:
    """What a whole (not streamed) body says: its JSON, and a chat completion's message in it."""
    try:
        data = json.loads(body) if body.strip() else None
    except (ValueError, RecursionError):
        out["text"] = body[:TEXT_LIMIT]
        return
    out["json"], out["is_json"] = data, body.strip() != ""
    if not out["is_json"]:
        out["text"] = ""
    if not isinstance(data, dict):
        return
    events = data.get("events")
    out["events"] = [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []
    message = _first_choice(data).get("message")
    if isinstance(message, dict):
        out |= _message_fields(message)
    out["agent"] = _agent(data)


def _message_fields(message: JSONObject) -> JSONObject:
    """A chat completion message's ``content`` (a string, else None) and ``tool_calls`` (a list)."""
    content, calls = message.get("content"), message.get("tool_calls")
    return {
        "content": content if isinstance(content, str) else None,
        "tool_calls": calls if isinstance(calls, list) else [],
    }


def _first_choice(data: JSONObject) -> JSONObject:
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    return first if isinstance(first, dict) else {}


def _agent(data: JSONObject) -> str | None:
    for key in ("agent", "model"):
        if isinstance(name := data.get(key), str) and name:
            return name
    return None


def _payloads(event: SSEEvent) -> list[tuple[bool, JSONObject]]:
    """An SSE event's JSON objects as ``(is_chunk, value)``: a named ``event:`` or a payload with a
    ``type`` and no ``choices`` is an event of the turn (handoff, auth); anything else is a chunk."""
    out: list[tuple[bool, JSONObject]] = []
    values, _ = decode_event(event, loads)
    name = (event.event or "").strip()
    for value in values:
        if not isinstance(value, dict):
            continue
        if name and name != "message":
            out.append((False, {"type": name, **value} if "type" not in value else value))
        elif isinstance(value.get("type"), str) and "choices" not in value:
            out.append((False, value))
        else:
            out.append((True, value))
    return out


def count_chunks(text: str) -> int:
    """How many chunks (as :func:`read_response` counts them) the complete SSE events of ``text`` hold."""
    events, _ = parse_events(text)
    return sum(1 for event in events for is_chunk, _ in _payloads(event) if is_chunk)


def _stream(body: str, out: JSONObject) -> None:
    from .stream.openai import parse_openai

    out["stream"] = True
    events, done = parse_events(body)
    chunks, typed = _sorted_payloads(events)
    out.update(
        chunks=chunks,
        final_chunk=_final_chunk(chunks),
        final_event="[DONE]" if done else (events[-1].data if events else None),
        events=typed,
        content=_streamed_content(chunks) if chunks else None,
        agent=next((a for c in reversed(chunks) if (a := _agent(c))), None),
        tool_calls=parse_openai(body)["toolCalls"],
    )


def _final_chunk(chunks: list[JSONObject]) -> JSONObject | None:
    """The last chunk with choices, else the last chunk."""
    with_choices = [c for c in chunks if isinstance(c.get("choices"), list) and c["choices"]]
    found = with_choices or chunks
    return found[-1] if found else None


def _sorted_payloads(events: list[SSEEvent]) -> tuple[list[JSONObject], list[JSONObject]]:
    """The stream's chunks, and its typed events (those inside a chunk's ``events`` included)."""
    chunks: list[JSONObject] = []
    typed: list[JSONObject] = []
    for event in events:
        for is_chunk, value in _payloads(event):
            if not is_chunk:
                typed.append(value)
                continue
            chunks.append(value)
            inner = value.get("events")
            if isinstance(inner, list):
                typed.extend(e for e in inner if isinstance(e, dict))
    return chunks, typed


def _streamed_content(chunks: list[JSONObject]) -> str:
    """The message content: every chunk's first choice's delta content, concatenated."""
    return "".join(
        str(delta.get("content") or "")
        for c in chunks
        if isinstance(delta := _first_choice(c).get("delta"), dict)
    )
