"""The DataBus: named slots blocks write to and references read from."""

from __future__ import annotations

from collections.abc import Iterator

from .json_types import JSONObject, JSONValue
from .paths import MISSING, get_path, split_path

__all__ = ["MISSING", "DataBus", "get_path", "split_path"]
"""``MISSING``, ``get_path`` and ``split_path`` are :mod:`pytest_semantictest.paths`' (re-exported:
the engine, blocks and checks read slots with them)."""


class DataBus:
    """Slots for one test; reads fall back to ``parent`` (the file's setup slots)."""

    __slots__ = ("_slots", "_parent")

    def __init__(self, parent: DataBus | None = None) -> None:
        self._slots: JSONObject = {}
        self._parent = parent

    def set(self, slot: str, value: JSONValue) -> None:
        self._slots[slot] = value

    def __setitem__(self, slot: str, value: JSONValue) -> None:
        self._slots[slot] = value

    def __getitem__(self, slot: str) -> JSONValue:
        value = self.slot(slot)
        if value is MISSING:
            raise KeyError(slot)
        return value

    def __contains__(self, slot: object) -> bool:
        return isinstance(slot, str) and self.slot(slot) is not MISSING

    def slot(self, name: str) -> JSONValue:
        if name in self._slots:
            return self._slots[name]
        if self._parent is not None:
            return self._parent.slot(name)
        return MISSING

    def get(self, path: str, default: JSONValue = MISSING) -> JSONValue:
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

    def snapshot(self) -> JSONObject:
        """All visible slots as a plain dict (own slots win)."""
        base = self._parent.snapshot() if self._parent is not None else {}
        base.update(self._slots)
        return base

    def __repr__(self) -> str:
        return f"DataBus({self.snapshot()!r})"
