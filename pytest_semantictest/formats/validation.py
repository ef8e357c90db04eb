"""Rules every format's spec models share: the keys a user may add anywhere, test ids usable in node ids."""

from __future__ import annotations

from ..errors import clip
from ..json_types import JSONValue


def free_key(key: JSONValue) -> bool:
    """Keys users may add anywhere: ``x-`` extensions and ``$schema``."""
    return isinstance(key, str) and (key.startswith("x-") or key == "$schema")


def check_node_id(value: str) -> str:
    """A test id usable in a pytest node id: not blank, no '::', no line breaks or control characters."""
    if not value.strip():
        raise ValueError("must not be empty")
    if "::" in value or not value.isprintable():
        raise ValueError(f"must not contain '::', line breaks or control characters, got {clip(repr(value))}")
    return value


def strip_free_keys(data: JSONValue) -> JSONValue:
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if not free_key(k)}
    return data
