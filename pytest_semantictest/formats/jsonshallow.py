"""The lines of a JSON document's shallow values, found fast; deeper values are skipped by json's C scanner.

Indexing every token of a large suite in Python costs far more than parsing it (1000 tests: 60 ms
against 3 ms). A compile asks only for the lines of shallow paths (a test, a step, an assertion), so
:func:`shallow_lines` walks the text down to ``depth`` and lets the C scanner skip each deeper value
whole. While skipping it also tells whether the full index has something to report (a repeated key,
``NaN``/``Infinity``, nesting deeper than allowed): then the caller indexes everything, as before.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable

from ..json_types import JSONObject, JSONValue
from .source import Path

_SPACE = re.compile(r"[ \t\n\r]*")
scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")
"""json's C string scanner (public in json.decoder, absent from its type stubs): (text, index after the
opening quote) -> (the decoded string, the index after its closing quote)."""


class Suspect(Exception):
    """The document needs the full index: it has something to report (or is past what is walked here)."""


def shallow_lines(text: str, depth: int, max_depth: int) -> dict[Path, int]:
    """Path -> line for every value at most ``depth`` keys/indexes deep in ``text`` (valid JSON).

    Raises :class:`Suspect` when the document repeats a key, uses a non-JSON constant, or nests
    ``max_depth`` containers or more (what the full index reports, with its place)."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    line_of = bisect.bisect_right
    space = _SPACE.match
    scan: Callable[[str, int], tuple[JSONValue, int]] = (
        getattr(  # (its C scanner, absent from the type stubs)
            json.JSONDecoder(object_pairs_hook=_unique, parse_constant=_constant), "scan_once"
        )
    )
    lines: dict[Path, int] = {}

    def skip(pos: int) -> int:  # past the whitespace at ``pos`` (the pattern always matches)
        found = space(text, pos)
        return found.end() if found else pos

    def value(pos: int, path: Path) -> int:
        pos = skip(pos)
        lines[path] = line_of(newlines, pos) + 1
        opening = text[pos]
        if len(path) < depth and opening in "{[":
            return container(pos, path, opening == "{")
        try:
            found, end = scan(text, pos)
        except StopIteration:
            raise Suspect from None
        if isinstance(found, (dict, list)) and _too_deep(text, pos, end, found, max_depth - len(path)):
            raise Suspect
        return int(end)

    def container(pos: int, path: Path, is_object: bool) -> int:
        pos = skip(pos + 1)
        if text[pos] in "}]":
            return pos + 1
        seen: set[str] = set()
        index = 0
        while True:
            if is_object:
                key, pos = scanstring(text, pos + 1)
                if key in seen:
                    raise Suspect
                seen.add(key)
                pos = value(skip(pos) + 1, (*path, key))  # past the ':'
            else:
                pos = value(pos, (*path, index))
                index += 1
            pos = skip(pos)
            if text[pos] != ",":
                return pos + 1
            pos = skip(pos + 1)

    value(0, ())
    return lines


def _unique(pairs: list[tuple[str, JSONValue]]) -> JSONObject:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise Suspect
    return found


def _constant(name: str) -> float:
    raise Suspect


def _too_deep(text: str, start: int, end: int, value: JSONObject | list[JSONValue], room: int) -> bool:
    """Whether ``value`` (``text[start:end]``) opens ``room`` containers or more, one inside the other
    (it cannot without as many brackets in its text: counted first, they rule out almost every value)."""
    if end - start < room or text.count("{", start, end) + text.count("[", start, end) < room:
        return False
    return _nesting(value, room) >= room


def _nesting(value: JSONObject | list[JSONValue], limit: int) -> int:
    """How many containers deep ``value`` goes below itself (0: none inside), counting up to ``limit``."""
    deepest = 0
    stack: list[tuple[JSONValue, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest >= limit:
            return deepest
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
