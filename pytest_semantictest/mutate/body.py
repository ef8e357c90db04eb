"""A recorded reply body as parts a mutation can edit: a JSON document, the JSON data of each
server-sent event, the ``0:"..."`` lines of a Vercel data stream, or plain text; and where in those
parts the reply's text and its tool calls are."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from ..json_types import JSONObject, JSONValue

TEXT_KEYS = frozenset(
    {"content", "text", "response", "output", "answer", "reply", "message", "delta", "textDelta"}
)
CALL_LISTS = frozenset({"tool_calls", "toolCalls", "calls", "function_calls", "functionCalls", "tool_uses"})
NAME_KEYS = ("name", "fn", "toolName", "tool_name")
ARG_KEYS = ("arguments", "args", "input", "parameters", "params")
Path = tuple[str | int, ...]
"""Where a value is inside a part: its keys and indexes."""


@dataclass
class Part:
    """One editable piece: ``value`` parsed JSON (``raw`` None), or raw text kept as it was."""

    value: JSONValue
    prefix: str = ""  # an SSE event's other lines; a Vercel line's ``0:``
    raw: str | None = None


@dataclass
class Body:
    kind: str  # json, sse, lines, text
    parts: list[Part]

    def copy(self) -> Body:
        return Body(self.kind, copy.deepcopy(self.parts))

    def dump(self) -> bytes:
        if self.kind == "json":
            return json.dumps(self.parts[0].value, ensure_ascii=False).encode()
        if self.kind == "text":
            return str(self.parts[0].value).encode()
        if self.kind == "lines":
            return "".join(
                f"{p.raw}\n" if p.raw is not None else f"{p.prefix}{_json(p.value)}\n" for p in self.parts
            ).encode()
        blocks = [p.raw if p.raw is not None else f"{p.prefix}data: {_json(p.value)}" for p in self.parts]
        return ("\n\n".join(blocks) + "\n\n").encode()


def _json(value: JSONValue) -> str:
    return json.dumps(value, ensure_ascii=False)


def parse(body: bytes, content_type: str) -> Body:
    text = body.decode("utf-8", errors="replace")
    if _is_event_stream(text, content_type):
        return Body("sse", _events(text))
    try:
        return Body("json", [Part(json.loads(text))])
    except ValueError:
        pass
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(_is_stream_line(line) for line in lines):
        return Body("lines", [_line(line) for line in lines])
    return Body("text", [Part(text)])


def _is_event_stream(text: str, content_type: str) -> bool:
    """Server-sent events: said by the content type, or a body that starts as one."""
    return "event-stream" in content_type.lower() or text.lstrip().startswith(("data:", "event:"))


def _is_stream_line(line: str) -> bool:
    """A Vercel data stream line: one letter or digit, a colon, then the data (``0:"Hi"``)."""
    return len(line) > 2 and line[1] == ":" and line[0].isalnum()


def _events(text: str) -> list[Part]:
    """Each event of a server-sent event stream (blocks apart by a blank line)."""
    return [_event(block) for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]


def _event(block: str) -> Part:
    lines = block.split("\n")
    data = [line[5:].lstrip() for line in lines if line.startswith("data:")]
    other = "".join(f"{line}\n" for line in lines if not line.startswith("data:"))
    try:
        return Part(json.loads("\n".join(data)), other) if data else Part(None, raw=block)
    except ValueError:
        return Part(None, raw=block)


def _line(line: str) -> Part:
    try:
        return Part(json.loads(line[2:]), line[:2])
    except ValueError:
        return Part(None, raw=line)


def get(root: JSONValue, path: Path) -> JSONValue:
    for key in path:
        root = root[key]
    return root


def put(part: Part, path: Path, value: JSONValue) -> None:
    if not path:
        part.value = value
        return
    get(part.value, path[:-1])[path[-1]] = value


def call_name(call: JSONValue) -> str | None:
    if not isinstance(call, dict):
        return None
    for key in NAME_KEYS:
        if isinstance(call.get(key), str):
            return str(call[key])
    function = call.get("function")
    return (
        str(function["name"])
        if isinstance(function, dict) and isinstance(function.get("name"), str)
        else None
    )


def args_path(call: JSONObject) -> Path | None:
    """Where a call's arguments are (a dict, or a JSON string of one); None: no readable arguments."""
    holder: Path = ("function",) if isinstance(call.get("function"), dict) else ()
    owner = get(call, holder)
    for key in ARG_KEYS:
        if key in owner and decoded_args(owner[key]) is not None:
            return holder + (key,)
    return None


def decoded_args(value: JSONValue) -> JSONObject | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def text_slots(body: Body) -> list[tuple[int, Path]]:
    """Every string that is reply text: under a text key, outside tool calls (a Vercel ``0:`` line
    whole; a plain-text body whole)."""
    if body.kind == "text":
        return [(0, ())]
    found: list[tuple[int, Path]] = []
    for index, part in enumerate(body.parts):
        if part.raw is not None:
            continue
        if body.kind == "lines":
            if part.prefix == "0:" and isinstance(part.value, str):
                found.append((index, ()))
            continue
        found += [(index, path) for path in _texts(part.value, ())]
    return found


def _texts(value: JSONValue, path: Path) -> list[Path]:
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _texts(v, path + (i,))]
    if not isinstance(value, dict) or call_name(value) is not None and args_path(value) is not None:
        return []  # (a tool call's strings are its arguments, not reply text)
    return _texts_in(value, path)


def _texts_in(value: JSONObject, path: Path) -> list[Path]:
    """The reply text under an object that is no tool call: strings under a text key, and deeper
    (never inside tool-call lists or arguments)."""
    found: list[Path] = []
    for key, item in value.items():
        if key in CALL_LISTS or key in ARG_KEYS:
            continue
        if key in TEXT_KEYS and isinstance(item, str):
            found.append(path + (key,))
        elif isinstance(item, (dict, list)):
            found += _texts(item, path + (key,))
    return found


def call_slots(body: Body) -> list[tuple[int, Path]]:
    """Every whole tool call (a name and readable arguments): in a tool-call list, or an event or line
    that is one call (Vercel's ``9:`` line, a UI stream's ``tool-input-available``)."""
    found: list[tuple[int, Path]] = []
    for index, part in enumerate(body.parts):
        if part.raw is None and body.kind != "text":
            found += [(index, path) for path in _calls(part.value, (), body.kind != "json")]
    return found


def _calls(value: JSONValue, path: Path, whole: bool) -> list[Path]:
    if whole and _is_call(value):
        return [path]
    if isinstance(value, dict):
        return _calls_in(value, path)
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _calls(v, path + (i,), False)]
    return []


def _is_call(value: JSONValue) -> bool:
    """A whole tool call: an object with a name and readable arguments."""
    return isinstance(value, dict) and bool(call_name(value)) and args_path(value) is not None


def _calls_in(value: JSONObject, path: Path) -> list[Path]:
    """The tool calls under an object: each call of a tool-call list, and those deeper."""
    found: list[Path] = []
    for key, item in value.items():
        if key in CALL_LISTS and isinstance(item, list):
            found += [path + (key, i) for i, c in enumerate(item) if _is_call(c)]
        elif isinstance(item, (dict, list)):
            found += _calls(item, path + (key,), False)
    return found
