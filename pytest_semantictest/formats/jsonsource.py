"""Parse JSON keeping line numbers per path and reporting duplicate keys."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem

Path = tuple[str | int, ...]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


@dataclass
class JsonSource:
    """A parsed JSON document with the line where each value starts."""

    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    duplicates: list[Problem] = field(default_factory=list)

    def line(self, path: Sequence[str | int]) -> int | None:
        """Line of ``path`` or of its nearest ancestor that has one."""
        key = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), 1)


def place(path: Sequence[str | int]) -> str:
    """``("tests", 1, "pipeline")`` -> ``tests[1].pipeline``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def load_json(text: str) -> JsonSource:
    """Parse ``text``; raises ``ValueError`` with line and column on bad JSON."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
    source = JsonSource(data)
    _index(text, source)
    return source


def _index(text: str, source: JsonSource) -> None:
    newlines = [m.start() for m in re.finditer("\n", text)]
    lines = source.lines
    # frame: [is_object, key_or_index, expecting_key, seen_keys]
    stack: list[list[Any]] = []
    path: list[str | int] = []

    def value_start(pos: int) -> None:
        lines[tuple(path)] = bisect.bisect_right(newlines, pos) + 1

    for match in _TOKEN.finditer(text):
        tok = match.group()
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
        if tok in "}]":
            frame = stack.pop()
            if (frame[0] and not frame[2]) or (not frame[0] and frame[3]):
                path.pop()
            continue
        if top is not None and top[0] and top[2]:
            key = json.loads(tok)
            if key in top[3]:
                ln = bisect.bisect_right(newlines, match.start()) + 1
                source.duplicates.append(
                    Problem(place(path), f"duplicate key '{key}' (the later value would hide the earlier)", ln)
                )
            top[3].add(key)
            top[2] = False
            path.append(key)
            continue
        if top is not None and not top[0] and not top[3]:
            top[3] = True
            path.append(0)
        value_start(match.start())
        if tok == "{":
            stack.append([True, None, True, set()])
        elif tok == "[":
            stack.append([False, 0, False, False])
