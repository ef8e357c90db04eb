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
    newlines = [m.start() for m in re.finditer("\n", text)]
    line_of = bisect.bisect_right
    lines = source.lines
    stack: list[_Frame] = []
    path: list[str | int] = []

    for pos, tok, string in _tokens(text):
        top = stack[-1] if stack else None
        if tok == ":":
            continue
        if tok == ",":
            if top is not None:
                if top.is_object:
                    top.expecting_key = True
                    path.pop()
                else:
                    top.index += 1
                    path[-1] = top.index
            continue
        if tok == "}" or tok == "]":
            frame = stack.pop()
            if (frame.is_object and not frame.expecting_key) or (not frame.is_object and frame.started):
                path.pop()
            continue
        if top is not None and top.is_object and top.expecting_key:
            key = string
            if key in top.keys:
                later = line_of(newlines, pos) + 1
                source.repeated.append(((*path, key), lines.get((*path, key)), later))  # type: ignore[arg-type]
                source.duplicates.append(
                    Problem(
                        place(path),
                        f"duplicate key '{clip(key)}' (the later value would hide the earlier)",
                        line_of(newlines, pos) + 1,
                    )
                )
            top.keys.add(key)
            top.expecting_key = False
            path.append(key)  # type: ignore[arg-type]
            continue
        if top is not None and not top.is_object and not top.started:
            top.started = True
            path.append(0)
        lines[tuple(path)] = line_of(newlines, pos) + 1
        if tok == "{" or tok == "[":
            if len(stack) >= MAX_DEPTH:
                line, col = _line_col(newlines, pos)
                where = place(path[:12]) + ("..." if len(path) > 12 else "")
                raise JsonError(
                    f"nested too deeply (more than {MAX_DEPTH} levels) at line {line} column {col}",
                    line,
                    col,
                    where,
                )
            stack.append(_Frame(True, expecting_key=True) if tok == "{" else _Frame(False))
        elif tok in _NOT_JSON:
            line, col = _line_col(newlines, pos)
            raise JsonError(
                f"invalid JSON at line {line} column {col}: {tok} is not a JSON value", line, col, place(path)
            )
