"""Parse JSON keeping line numbers per path and reporting duplicate keys."""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem, clip
from .source import LineMap, Path, SourceError, place


# json's C string scanner (public in json.decoder, absent from its type stubs): (text, index after the
# opening quote) -> (the decoded string, the index after its closing quote).
scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")
# A string token is only its opening quote here: json's C scanstring finds its end (fast on MBs).
_TOKEN = re.compile(r'[{}\[\]:,"]|[^\s{}\[\]:,"]+')
_NOT_JSON = frozenset({"NaN", "Infinity", "-Infinity"})

MAX_DEPTH = 100
"""Deepest nesting a spec file may use: deeper input is an error here, never a RecursionError later."""


class JsonError(SourceError):
    """Text that is not usable JSON."""


@dataclass
class JsonSource(LineMap):
    """A parsed JSON document with the line where each value starts."""

    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    duplicates: list[Problem] = field(default_factory=list)
    repeated: list[tuple[Path, int | None, int]] = field(default_factory=list)
    """Each repeated key as ``(path of the key, line of the earlier value, line of the later one)``:
    the later value is the one ``data`` holds, as every JSON parser does."""


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
                    f"invalid JSON at line {line} column {col}: a whole number with more than {limit} digits", line, col
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


def _index(text: str, source: JsonSource) -> None:
    newlines = [m.start() for m in re.finditer("\n", text)]
    line_of = bisect.bisect_right
    lines = source.lines
    # frame: [is_object, key_or_index, expecting_key, seen_keys]
    stack: list[list[Any]] = []
    path: list[str | int] = []

    for pos, tok, string in _tokens(text):
        top = stack[-1] if stack else None
        if tok == ":":
            continue
        if tok == ",":
            if top is not None:
                if top[0]:
                    top[2] = True
                    path.pop()
                else:
                    top[1] += 1
                    path[-1] = top[1]
            continue
        if tok == "}" or tok == "]":
            frame = stack.pop()
            if (frame[0] and not frame[2]) or (not frame[0] and frame[3]):
                path.pop()
            continue
        if top is not None and top[0] and top[2]:
            key = string
            if key in top[3]:
                later = line_of(newlines, pos) + 1
                source.repeated.append(((*path, key), lines.get((*path, key)), later))  # type: ignore[arg-type]
                source.duplicates.append(
                    Problem(
                        place(path),
                        f"duplicate key '{clip(key)}' (the later value would hide the earlier)",
                        line_of(newlines, pos) + 1,
                    )
                )
            top[3].add(key)
            top[2] = False
            path.append(key)  # type: ignore[arg-type]
            continue
        if top is not None and not top[0] and not top[3]:
            top[3] = True
            path.append(0)
        lines[tuple(path)] = line_of(newlines, pos) + 1
        if tok == "{" or tok == "[":
            if len(stack) >= MAX_DEPTH:
                line, col = _line_col(newlines, pos)
                where = place(path[:12]) + ("..." if len(path) > 12 else "")
                raise JsonError(
                    f"nested too deeply (more than {MAX_DEPTH} levels) at line {line} column {col}", line, col, where
                )
            stack.append([True, None, True, set()] if tok == "{" else [False, 0, False, False])
        elif tok in _NOT_JSON:
            line, col = _line_col(newlines, pos)
            raise JsonError(
                f"invalid JSON at line {line} column {col}: {tok} is not a JSON value", line, col, place(path)
            )
