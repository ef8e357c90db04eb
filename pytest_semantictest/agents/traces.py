"""The trace file (JSON Lines, highbar trace contract v1 and v0), read by byte offset.

Only newline-terminated lines are read (a writer may be mid-line). A file smaller than
the offset was recreated and is read from 0. Unknown record types and fields are
ignored; a line that cannot be read becomes a ``TraceProblem`` naming its line, which
makes the test reading it an error (skipping it could hide a tool call).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..json_types import JSONObject, JSONValue

CONTRACT_VERSION = 1
# Fields a v0 line has of its own; any other top-level field is its context.
_V0_FIELDS = frozenset({"v", "id", "seq", "fn", "args", "result", "started_at", "ended_at", "error"})


@dataclass(frozen=True)
class ToolCall:
    """One tool call; ``error`` (not ``result``) says whether it failed."""

    fn: str
    args: JSONObject
    result: JSONValue = None
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    context: JSONObject = field(default_factory=dict)


@dataclass(frozen=True)
class Hello:
    """An emitter started; ``tools`` is what it declared (None when it declared nothing)."""

    ts: float
    sdk: str | None = None
    pid: int | None = None
    tools: tuple[str, ...] | None = None


@dataclass(frozen=True)
class TurnRecord:
    """The agent's own record of one message it handled."""

    ts: float
    message: str | None = None
    response: str | None = None
    context: JSONObject = field(default_factory=dict)


@dataclass(frozen=True)
class TraceProblem:
    """A trace line that cannot be read."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path} line {self.line}: {self.message}"


@dataclass
class TraceBatch:
    """The records of the complete lines between two offsets (``end`` is the new offset)."""

    tools: list[ToolCall] = field(default_factory=list)
    turns: list[TurnRecord] = field(default_factory=list)
    hellos: list[Hello] = field(default_factory=list)
    declarations: list[tuple[str, ...]] = field(default_factory=list)
    problems: list[TraceProblem] = field(default_factory=list)
    start: int = 0
    end: int = 0


class _BadLine(Exception):
    pass


class TraceReader:
    """Reads a trace file incrementally; ``read_new`` keeps its own offset."""

    def __init__(self, path: str | Path, offset: int = 0) -> None:
        self.path = Path(path)
        self.offset = offset

    def exists(self) -> bool:
        return self.path.exists()

    def checkpoint(self) -> int:
        """Offset just after the last complete line now in the file (0 without a file)."""
        try:
            with open(self.path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                position = size
                while position > 0:
                    step = min(65536, position)
                    position -= step
                    f.seek(position)
                    found = f.read(step).rfind(b"\n")
                    if found != -1:
                        return position + found + 1
                return 0
        except FileNotFoundError:
            return 0

    def skip_to_end(self) -> None:
        """Ignore everything already written (attach mode: earlier runs' records)."""
        self.offset = self.checkpoint()

    def read_new(self) -> TraceBatch:
        """Records written since the last ``read_new`` (or the initial offset)."""
        batch = self.read_since(self.offset)
        self.offset = batch.end
        return batch

    def read_since(self, offset: int) -> TraceBatch:
        """Records in the complete lines after byte ``offset``; stateless."""
        try:
            with open(self.path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                start = offset if offset <= size else 0
                f.seek(start)
                data = f.read()
        except FileNotFoundError:
            return TraceBatch(start=offset, end=offset)
        complete = data[: data.rfind(b"\n") + 1]
        batch = TraceBatch(start=start, end=start + len(complete))
        line_no: int | None = None
        position = start
        for raw in complete.splitlines(keepends=True):
            try:
                _add(batch, raw)
            except _BadLine as e:
                if line_no is None:
                    line_no = self._line_at(start)
                line = line_no + complete[: position - start].count(b"\n")
                batch.problems.append(TraceProblem(str(self.path), line, str(e)))
            position += len(raw)
        return batch

    def inventory(self) -> frozenset[str] | None:
        """Tools declared since the last ``hello`` (hello tools + ``tools`` records), or None."""
        current: set[str] | None = None
        for record in self._declaring_records():
            kind = record.get("type")
            if kind == "hello":
                current = None
                if "tools" not in record:
                    continue
            try:
                names = _names(record, "tools" if kind == "hello" else "names")
            except _BadLine:
                continue
            current = set(names) if current is None else current | set(names)
        return frozenset(current) if current is not None else None

    def wait_for_hello(self, timeout_s: float = 2.0) -> Hello | None:
        """The first ``hello`` in the file, waiting up to ``timeout_s``; None if none came."""
        deadline = time.monotonic() + timeout_s
        while True:
            hellos = self.read_since(0).hellos
            if hellos:
                return hellos[0]
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def _declaring_records(self) -> list[JSONObject]:
        records = []
        try:
            with open(self.path, "rb") as f:
                for raw in f:
                    if raw.endswith(b"\n") and (b'"hello"' in raw or b'"tools"' in raw):
                        try:
                            record = json.loads(raw)
                        except ValueError:
                            continue
                        if isinstance(record, dict) and record.get("type") in ("hello", "tools"):
                            records.append(record)
        except FileNotFoundError:
            pass
        return records

    def _line_at(self, offset: int) -> int:
        with open(self.path, "rb") as f:
            return f.read(offset).count(b"\n") + 1


def _add(batch: TraceBatch, raw: bytes) -> None:
    """Add one line's record to ``batch``; ``_BadLine`` says why a line cannot be read."""
    if not raw.strip():
        return
    record = _object(raw)
    version = record.get("v")
    if _is_v0(version):
        context = {k: v for k, v in record.items() if k not in _V0_FIELDS}
        batch.tools.append(_tool(record, context))
        return
    _check_version(version)
    kind = record.get("type")
    add = _ADDERS.get(kind) if isinstance(kind, str) else None
    if add is not None:  # other record types are for other readers
        add(batch, record)


def _object(raw: bytes) -> JSONObject:
    """The line as a JSON object."""
    try:
        record: JSONValue = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        reason = e.msg if isinstance(e, json.JSONDecodeError) else "not UTF-8"
        raise _BadLine(f"not valid JSON ({reason})") from None
    if not isinstance(record, dict):
        raise _BadLine(f"not a JSON object, got {type(record).__name__}")
    return record


def _is_v0(version: JSONValue) -> bool:
    """A line without ``v`` (or ``v: 0``) is a v0 tool record."""
    return version is None or (not isinstance(version, bool) and version == 0)


def _check_version(version: JSONValue) -> None:
    """Only a version number this plugin knows is read."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise _BadLine(f"unknown trace format version {version!r}")
    if version > CONTRACT_VERSION:
        raise _BadLine(f"trace format v{version} is newer than the v{CONTRACT_VERSION} this plugin reads")


def _add_tool(batch: TraceBatch, record: JSONObject) -> None:
    batch.tools.append(_tool(record, _context(record)))


def _add_turn(batch: TraceBatch, record: JSONObject) -> None:
    batch.turns.append(
        TurnRecord(
            _number(record, "ts", 0.0),
            _text(record.get("message")),
            _text(record.get("response")),
            _context(record),
        )
    )


def _add_hello(batch: TraceBatch, record: JSONObject) -> None:
    """An emitter's start; the tools it declares (if it does) are a declaration too."""
    pid = record.get("pid")
    tools = _names(record, "tools") if "tools" in record else None
    batch.hellos.append(
        Hello(
            _number(record, "ts", 0.0),
            _text(record.get("sdk")),
            pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            tools,
        )
    )
    if tools is not None:
        batch.declarations.append(tools)


def _add_declaration(batch: TraceBatch, record: JSONObject) -> None:
    batch.declarations.append(_names(record, "names"))


_ADDERS: dict[str, Callable[[TraceBatch, JSONObject], None]] = {
    "tool": _add_tool,
    "turn": _add_turn,
    "hello": _add_hello,
    "tools": _add_declaration,
}
"""Where each record type of a v1 line goes."""


def _tool(record: JSONObject, context: JSONObject) -> ToolCall:
    fn = record.get("fn")
    if not isinstance(fn, str) or not fn:
        raise _BadLine("tool record without 'fn'")
    args = record.get("args", {})
    if not isinstance(args, dict):
        raise _BadLine(f"'args' must be an object, got {type(args).__name__}")
    ts = _number(record, "ts", 0.0)
    return ToolCall(
        fn,
        args,
        record.get("result"),
        error_text(record.get("error")),
        _number(record, "started_at", ts),
        _number(record, "ended_at", ts),
        context,
    )


def error_text(error: JSONValue) -> str | None:
    """A tool call's ``error`` as text (JSON for a structured one); false, "" and null say "no error"."""
    if not error:
        return None
    return error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)


def _names(record: JSONObject, key: str) -> tuple[str, ...]:
    names = record.get(key)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _BadLine(f"'{key}' must be a list of tool names")
    return tuple(names)


def _context(record: JSONObject) -> JSONObject:
    context = record.get("context", {})
    if not isinstance(context, dict):
        raise _BadLine(f"'context' must be an object, got {type(context).__name__}")
    return context


def _number(record: JSONObject, key: str, default: float) -> float:
    value = record.get(key)
    return default if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)


def _text(value: JSONValue) -> str | None:
    return None if value is None else str(value)
