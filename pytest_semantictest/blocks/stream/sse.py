"""A tolerant Server-Sent Events splitter and the generic ``sse`` stream format.

Pure functions, no I/O. Tolerates what real servers and hand-written fixtures send:
``data:`` with or without a space, CRLF / CR / LF line ends, ``:`` comment and keep-alive
lines, a missing ``data:`` prefix (a bare line is an event of its own), and ``[DONE]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ...json_types import JSONObject, JSONValue

DONE = "[DONE]"
FIELDS = frozenset({"data", "event", "id", "retry"})
KEEPALIVE = frozenset({"ping", "keep-alive", "keepalive", "heartbeat"})
_LINE_END = re.compile(r"\r\n|\r|\n")
_FIELD = re.compile(r"^(data|event|id|retry)(?::|$)")
_TEXT_KEYS = ("content", "text", "delta", "message")


@dataclass
class SSEEvent:
    """One dispatched event: its data lines (joined with ``\\n`` in :attr:`data`)."""

    data_lines: list[str] = field(default_factory=list)
    event: str | None = None
    id: str | None = None
    bare: bool = False  # a line without an SSE field name, taken as data

    @property
    def data(self) -> str:
        return "\n".join(self.data_lines)

    def to_dict(self) -> JSONObject:
        out: JSONObject = {"event": self.event or "message", "data": self.data}
        if self.id is not None:
            out["id"] = self.id
        return out


def split_lines(body: str) -> list[str]:
    """Split on CRLF, CR or LF (a leading byte-order mark is dropped)."""
    return _LINE_END.split(body.removeprefix("\ufeff"))


def parse_field(line: str) -> tuple[str, str] | None:
    """``(field, value)`` for an SSE field line, None for a blank, comment or bare line."""
    if not line.strip() or line.startswith(":"):
        return None
    match = _FIELD.match(line)
    if not match:
        return None
    name = match.group(1)
    value = line[len(name) + 1 :] if len(line) > len(name) else ""
    return name, value.removeprefix(" ")


def is_done(data: str) -> bool:
    """True for the ``[DONE]`` end-of-stream marker."""
    return data.strip() == DONE


def parse_events(body: str) -> tuple[list[SSEEvent], bool]:
    """Split ``body`` into events; return ``(events, saw_done)``.

    Events are separated by blank lines; consecutive ``data:`` lines join with ``\\n``.
    Lines that carry no SSE field (``0:"Hi"``, a bare JSON object) are events of their own.
    Parsing stops at ``[DONE]``; keep-alive events (``event: ping``) are dropped.
    """
    events = _Events()
    for line in split_lines(body):
        if not line.strip():
            events.flush()
            continue
        if line.startswith(":"):
            continue
        parsed = parse_field(line)
        done = events.bare(line) if parsed is None else events.field(*parsed)
        if done:
            return events.dispatched, True
    events.flush()
    return events.dispatched, False


class _Events:
    """The events dispatched so far, and the one whose lines are being read."""

    def __init__(self) -> None:
        self.dispatched: list[SSEEvent] = []
        self.current = SSEEvent()

    def flush(self) -> None:
        """Dispatch the current event (one with data that is no keep-alive) and start the next."""
        if self.current.data_lines and (self.current.event or "").lower() not in KEEPALIVE:
            self.dispatched.append(self.current)
        self.current = SSEEvent()

    def bare(self, line: str) -> bool:
        """A line without SSE framing: an event of its own (a keep-alive word is dropped); True at
        ``[DONE]``."""
        if line.strip().lower() in KEEPALIVE:
            return False
        self.flush()
        if is_done(line):
            return True
        self.dispatched.append(SSEEvent([line.strip()], bare=True))
        return False

    def field(self, name: str, value: str) -> bool:
        """One field line of the current event; True at ``data: [DONE]``."""
        if name == "data":
            if is_done(value):
                self.flush()
                return True
            self.current.data_lines.append(value)
        elif name == "event":
            self.current.event = value.strip() or None
        elif name == "id":
            self.current.id = value
        return False


def decode_event(event: SSEEvent, decode: Callable[[str], JSONValue]) -> tuple[list[JSONValue], list[str]]:
    """Decode an event's data with ``decode``; return ``(values, bad_payloads)``.

    When the joined data does not decode and the event has several lines (``data:`` lines
    written without blank lines between them), each line is decoded on its own.
    """
    try:
        return [decode(event.data)], []
    except (ValueError, TypeError, RecursionError):
        pass
    if len(event.data_lines) <= 1:
        return [], [event.data]
    values: list[JSONValue] = []
    bad: list[str] = []
    for line in event.data_lines:
        if not line.strip():
            continue
        try:
            values.append(decode(line))
        except (ValueError, TypeError, RecursionError):
            bad.append(line)
    return values, bad


def loads(text: str) -> JSONValue:
    """``json.loads`` that raises only ValueError."""
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def payload_text(value: JSONValue) -> str | None:
    """The text of a decoded JSON payload, or None when it has none."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return None
    for read in (_own_text, _nested_text, _choice_text):
        text = read(value)
        if text is not None:
            return text
    return None


def _own_text(value: JSONObject) -> str | None:
    """The first of ``content``, ``text``, ``delta``, ``message`` that is a string."""
    for key in _TEXT_KEYS:
        if isinstance(text := value.get(key), str):
            return text
    return None


def _nested_text(value: JSONObject) -> str | None:
    """Anthropic's ``delta.text``, Ollama's ``message.content``."""
    for key in ("delta", "message"):
        inner = value.get(key)
        if isinstance(inner, dict):
            for sub in ("text", "content"):
                if isinstance(text := inner.get(sub), str):
                    return text
    return None


def _choice_text(value: JSONObject) -> str | None:
    """An OpenAI chunk's (or completion's) first choice's content; empty when it has none."""
    choices = value.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        return None
    inner = choices[0].get("delta") or choices[0].get("message") or {}
    if not isinstance(inner, dict):
        return None
    content = inner.get("content")
    return content if isinstance(content, str) else ""


def parse_sse_format(body: str) -> JSONObject:
    """The generic ``sse`` format: concatenated payload text; chunks are the events."""
    events, _ = parse_events(body)
    text: list[str] = []
    chunks: list[JSONObject] = []
    for event in events:
        values, bad = decode_event(event, loads)
        if bad or (len(values) > 1 and not all(isinstance(v, dict) for v in values)):
            text.append(event.data)  # plain text (multi-line data joined with \n)
            chunks.append(event.to_dict())
            continue
        for value in values:
            found = payload_text(value)
            if found is None:  # no text field: the raw data string
                found = event.data if len(values) == 1 else json.dumps(value)
            text.append(found)
            chunks.append({**event.to_dict(), "data": value})
    return {
        "text": "".join(text),
        "toolCalls": [],
        "chunks": chunks,
        "metadata": {"format": "sse", "totalChunks": len(chunks), "totalTools": 0},
    }
