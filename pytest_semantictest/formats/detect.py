"""Which format a file is, decided cheaply (no heavy imports) during pytest collection.

Each entry: a format name (also its pytest marker), a detector ``(path) -> bool`` and the
module whose ``make_loader(ctx: CollectContext) -> Callable[[Path], Suite]`` compiles files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SUITE_HINT = re.compile(rb'"tests"\s*:\s*\[')
_FRONT_TRANSPORT = re.compile(r"^transport\s*:", re.M)


@dataclass(frozen=True)
class CollectContext:
    """What loaders may know about the session: folders, environment, option values."""

    rootdir: Path
    invocation_dir: Path
    env: Mapping[str, str]
    option: Callable[[str], Any]
    args: tuple[str, ...] = ()


def semantictest_json(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.json`` whose top level has a ``tests`` array (or that only looks like one but is broken)."""
    if path.suffix != ".json":
        return False
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    if b'"tests"' not in raw:
        return False
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return bool(_SUITE_HINT.search(raw))
    return isinstance(data, dict) and isinstance(data.get("tests"), list)


def highbar_yaml(path: Path, ctx: CollectContext | None = None) -> bool:
    return path.name.endswith(".highbar.yaml")


def compliance_markdown(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.md`` starting with YAML front matter that has a ``transport`` key."""
    if path.suffix != ".md":
        return False
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            head = fh.read(8192)
    except OSError:
        return False
    if not head.lstrip("\ufeff").startswith("---"):
        return False
    end = head.find("\n---", 3)
    front = head[: end if end != -1 else len(head)]
    return bool(_FRONT_TRANSPORT.search(front))


FORMATS: list[tuple[str, Callable[[Path, CollectContext | None], bool], str]] = [
    ("semantictest", semantictest_json, "semantictest.loader"),
    ("highbar", highbar_yaml, "highbar.compile"),
]
