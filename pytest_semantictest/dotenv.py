"""Read a ``.env`` file (KEY=value lines) without overriding the real environment."""

from __future__ import annotations

import os
from collections import ChainMap
from collections.abc import Mapping
from pathlib import Path


def parse_dotenv(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def environment(rootdir: Path | None) -> Mapping[str, str]:
    """The process environment, falling back to ``<rootdir>/.env`` for unset names."""
    path = rootdir / ".env" if rootdir else None
    if path is None or not path.is_file():
        return os.environ
    try:
        extra = parse_dotenv(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return os.environ
    return ChainMap(os.environ, extra)
