"""The DataBus: named slots blocks write to and references read from."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any


class _Missing:
    """The value of a path that names nothing (JavaScript's ``undefined``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")
_path_cache: dict[str, tuple[str | int, ...]] = {}


def split_path(path: str) -> tuple[str | int, ...]:
    """``users[0].name`` -> ``("users", 0, "name")``; keys keep dashes and colons."""
    cached = _path_cache.get(path)
    if cached is not None:
        return cached
    parts: list[str | int] = []
    for key, index in _SEGMENT.findall(path.strip()):
        parts.append(int(index) if index else key)
    result = tuple(parts)
    if len(_path_cache) < 10000:
        _path_cache[path] = result
    return result


def _json_text(value: str) -> Any:
    """A string holding a JSON object or array, parsed; MISSING otherwise."""
    text = value.lstrip()
    if not text or text[0] not in "{[":
        return MISSING
    try:
        return json.loads(text)
    except ValueError:
        return MISSING


def get_path(root: Any, parts: tuple[str | int, ...]) -> Any:
    """Walk ``parts`` into nested dicts and lists; MISSING when any step names nothing.

    A path that continues into a string holding JSON (an HTTP response ``body``) reads
    inside it, so ``${login.body.token}`` works without a JsonParser step.
    """
    value = root
    for part in parts:
        if isinstance(value, str) and part != "length":
            value = _json_text(value)
        if isinstance(value, Mapping):
            value = value.get(part if isinstance(part, str) else str(part), MISSING)
        elif isinstance(value, (list, tuple)):
            try:
                index = int(part)
            except (TypeError, ValueError):
                if part == "length":
                    value = len(value)
                    continue
                return MISSING
            if -len(value) <= index < len(value):
                value = value[index]
            else:
                return MISSING
        elif isinstance(value, str) and part == "length":
            value = len(value)
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value


class DataBus:
    """Slots for one test; reads fall back to ``parent`` (the file's setup slots)."""

    __slots__ = ("_slots", "_parent")

    def __init__(self, parent: DataBus | None = None) -> None:
        self._slots: dict[str, Any] = {}
        self._parent = parent

    def set(self, slot: str, value: Any) -> None:
        self._slots[slot] = value

    def __setitem__(self, slot: str, value: Any) -> None:
        self._slots[slot] = value

    def __getitem__(self, slot: str) -> Any:
        value = self.slot(slot)
        if value is MISSING:
            raise KeyError(slot)
        return value

    def __contains__(self, slot: object) -> bool:
        return isinstance(slot, str) and self.slot(slot) is not MISSING

    def slot(self, name: str) -> Any:
        if name in self._slots:
            return self._slots[name]
        if self._parent is not None:
            return self._parent.slot(name)
        return MISSING

    def get(self, path: str, default: Any = MISSING) -> Any:
        """The value at a dotted path (``response.body``, ``users[0].name``)."""
        parts = split_path(path)
        if not parts or not isinstance(parts[0], str):
            return default
        value = self.slot(parts[0])
        if value is MISSING:
            return default
        value = get_path(value, parts[1:])
        return default if value is MISSING else value

    def names(self) -> list[str]:
        names = list(self._parent.names()) if self._parent is not None else []
        return names + [n for n in self._slots if n not in names]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def snapshot(self) -> dict[str, Any]:
        """All visible slots as a plain dict (own slots win)."""
        base = self._parent.snapshot() if self._parent is not None else {}
        base.update(self._slots)
        return base

    def __repr__(self) -> str:
        return f"DataBus({self.snapshot()!r})"
