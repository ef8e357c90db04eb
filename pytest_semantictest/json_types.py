"""The one name for arbitrary JSON: what ``json.loads`` or YAML's safe loader can return.

A spec file's values, a reply's body, a cache entry: their shape is only known where they are read,
so they are typed ``JSONValue`` (which is ``Any``: narrow it with ``isinstance`` where it is read).
Everything that is not arbitrary JSON carries its real type.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JSONValue: TypeAlias = Any
"""A JSON value of unknown shape (object, array, string, number, boolean or null)."""

JSONObject: TypeAlias = dict[str, JSONValue]
"""A JSON object: its keys are strings, its values of unknown shape."""

__all__ = ["JSONObject", "JSONValue"]
