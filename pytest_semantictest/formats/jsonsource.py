"""Parse JSON keeping line numbers per path and reporting duplicate keys."""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import Problem, clip
from ..json_types import JSONValue
from ..problems import place
from .jsonshallow import Suspect, scanstring, shallow_lines
from .source import LineMap, Path, SourceError, nearest_line

# A string token is only its opening quote here: json's C scanstring finds its end (fast on MBs).
_TOKEN = re.compile(r'[{}\[\]:,"]|[^\s{}\[\]:,"]+')
_NOT_JSON = frozenset({"NaN", "Infinity", "-Infinity"})

MAX_DEPTH = 100
"""Deepest nesting a spec file may use: deeper input is an error here, never a RecursionError later."""


class JsonError(SourceError):
    """Text that is not usable JSON."""


SHALLOW = 4
"""Paths up to this many keys/indexes deep (a test's step or assertion) get their line without the full
index (:mod:`.jsonshallow`); a deeper path indexes the whole document the first time one is asked."""


class JsonSource(LineMap):
    """A parsed JSON document with the line where each value starts."""

    def __init__(
        self, data: JSONValue, text: str | None = None, shallow: dict[Path, int] | None = None
    ) -> None:
        self.data = data
        self.duplicates: list[Problem] = []
        self.repeated: list[tuple[Path, int | None, int]] = []
        """Each repeated key as ``(path of the key, line of the earlier value, line of the later one)``:
        the later value is the one ``data`` holds, as every JSON parser does."""
        self._text = text
        self._shallow = shallow
        self._lines: dict[Path, int] | None = None if shallow is not None else {}

    @property
    def lines(self) -> dict[Path, int]:  # type: ignore[override]
        """Path -> line of every value (indexed on first use when the document was read fast)."""
        if self._lines is None:
            full = JsonSource(None)
            _index(self._text or "", full)
            self._lines = full.lines
        return self._lines

    def has(self, path: Sequence[str | int]) -> bool:
        """Whether the document has a value at ``path``."""
        node = self.data
        for part in path:
            if isinstance(node, dict) and isinstance(part, str) and part in node:
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                return False
        return True

    def line(self, path: Sequence[str | int]) -> int | None:
        if self._shallow is not None and len(path) <= SHALLOW:
            return nearest_line(self._shallow, path)
        return super().line(path)


def load_json(text: str) -> JsonSource:
    """Parse ``text``; raises :class:`JsonError` (a ValueError) with line and column on bad JSON."""
    text = text.removeprefix("\ufeff")  # a byte order mark is not content
    if not text.strip():
        raise JsonError("the file is empty: a suite is a JSON object with a 'tests' array", 1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (a trailing comma before it?)" if text[: exc.pos].rstrip().endswith(",") else ""
        raise JsonError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}", exc.lineno, exc.colno
        ) from None
    except RecursionError:
        _scan_for_depth(text)
        raise JsonError("invalid JSON: nested too deeply to read") from None
    except ValueError as exc:  # an integer longer than Python's digit limit
        _raise_at_long_number(text)
        raise JsonError(f"invalid JSON: {exc}") from None
    try:
        return JsonSource(data, text, shallow_lines(text, SHALLOW, MAX_DEPTH))
    except Suspect:  # something to report (a repeated key, NaN, deep nesting): the full index says where
        source = JsonSource(data)
        _index(text, source)
        return source


def _line_col(newlines: list[int], pos: int) -> tuple[int, int]:
    line = bisect.bisect_right(newlines, pos) + 1
    return line, pos - (newlines[line - 2] if line > 1 else -1)


def _scan_for_depth(text: str) -> None:
    """Raise the "nested too deeply" JsonError for text too deep for ``json.loads``."""
    try:
        _index(text, JsonSource(None))
    except JsonError:
        raise
    except (ValueError, IndexError, TypeError, AttributeError):
        pass


def _raise_at_long_number(text: str) -> None:
    limit = sys.get_int_max_str_digits()
    try:
        for pos, tok, _ in _tokens(text):
            digits = tok.lstrip("-")
            if limit and digits.isdigit() and len(digits) > limit:
                line, col = _line_col([m.start() for m in re.finditer("\n", text)], pos)
                raise JsonError(
                    f"invalid JSON at line {line} column {col}: a whole number with more than {limit} digits",
                    line,
                    col,
                )
    except json.JSONDecodeError:
        pass


def _tokens(text: str) -> Iterator[tuple[int, str, str | None]]:
    """``(position, token, decoded string or None)`` for each JSON token of ``text``."""
    search = _TOKEN.search
    pos = 0
    while True:
        match = search(text, pos)
        if match is None:
            return
        start = match.start()
        tok = match.group()
        if tok == '"':
            value, pos = scanstring(text, start + 1)
            yield start, tok, value
        else:
            pos = match.end()
            yield start, tok, None


@dataclass(slots=True)
class _Frame:
    """An open object or array while :func:`_index` walks the tokens."""

    is_object: bool
    index: int = 0
    """An array: the index of its current element."""
    expecting_key: bool = False
    """An object: the next string is a key."""
    started: bool = False
    """An array: its first element was seen."""
    keys: set[str | None] = field(default_factory=set)
    """An object: the keys seen so far."""


def _index(text: str, source: JsonSource) -> None:
    """Record in ``source`` the line of every value of ``text`` and every repeated key."""
    indexer = _Indexer(text, source)
    for pos, tok, string in _tokens(text):
        if tok == ",":
            indexer.next_member()
        elif tok == "}" or tok == "]":
            indexer.close()
        elif tok != ":":
            indexer.token(pos, tok, string)


class _Indexer:
    """The walk of :func:`_index`: the open objects and arrays, and the path to the current value."""

    def __init__(self, text: str, source: JsonSource) -> None:
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.source = source
        self.lines = source.lines
        self.stack: list[_Frame] = []
        self.path: list[str | int] = []

    def line_at(self, pos: int) -> int:
        return bisect.bisect_right(self.newlines, pos) + 1

    def next_member(self) -> None:
        """A comma: an object expects its next key, an array moves to its next index."""
        if not self.stack:
            return
        top = self.stack[-1]
        if top.is_object:
            top.expecting_key = True
            self.path.pop()
        else:
            top.index += 1
            self.path[-1] = top.index

    def close(self) -> None:
        """A closing bracket: leave the object or array (and its last member, when it had one)."""
        frame = self.stack.pop()
        if (frame.is_object and not frame.expecting_key) or (not frame.is_object and frame.started):
            self.path.pop()

    def token(self, pos: int, tok: str, string: str | None) -> None:
        """A key, or the start of a value (its line recorded; a bracket opens a frame)."""
        top = self.stack[-1] if self.stack else None
        if top is not None and top.is_object and top.expecting_key:
            self.key(top, pos, string)
            return
        if top is not None and not top.is_object and not top.started:
            top.started = True
            self.path.append(0)
        self.value(pos, tok)

    def value(self, pos: int, tok: str) -> None:
        """The start of a value: its line recorded; a bracket opens a frame; NaN and Infinity are refused."""
        self.lines[tuple(self.path)] = self.line_at(pos)
        if tok == "{" or tok == "[":
            self.open(pos, tok)
        elif tok in _NOT_JSON:
            line, col = _line_col(self.newlines, pos)
            raise JsonError(
                f"invalid JSON at line {line} column {col}: {tok} is not a JSON value",
                line,
                col,
                place(self.path),
            )

    def key(self, top: _Frame, pos: int, key: str | None) -> None:
        """An object's key: a repeated one is recorded with the line of the value it hides."""
        path = self.path
        if key in top.keys:
            later = self.line_at(pos)
            self.source.repeated.append(((*path, key), self.lines.get((*path, key)), later))  # type: ignore[arg-type]
            self.source.duplicates.append(
                Problem(
                    place(path),
                    f"duplicate key '{clip(key)}' (the later value would hide the earlier)",
                    self.line_at(pos),
                )
            )
        top.keys.add(key)
        top.expecting_key = False
        path.append(key)  # type: ignore[arg-type]

    def open(self, pos: int, tok: str) -> None:
        """An opening bracket: a new frame, unless it nests deeper than :data:`MAX_DEPTH`."""
        if len(self.stack) >= MAX_DEPTH:
            line, col = _line_col(self.newlines, pos)
            where = place(self.path[:12]) + ("..." if len(self.path) > 12 else "")
            raise JsonError(
                f"nested too deeply (more than {MAX_DEPTH} levels) at line {line} column {col}",
                line,
                col,
                where,
            )
        self.stack.append(_Frame(True, expecting_key=True) if tok == "{" else _Frame(False))
