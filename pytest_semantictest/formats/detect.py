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


_YAO_KEYS = ("input", "turns", "checkpoints")


def _first_jsonl_case(path: Path, limit: int = 1 << 20) -> Any:
    """The first JSON object of a ``.jsonl`` (blank and ``//`` lines skipped), read cheaply."""
    try:
        with path.open("r", encoding="utf-8-sig", errors="replace") as fh:
            for line in fh:
                limit -= len(line)
                if limit < 0:
                    return None
                text = line.strip()
                if not text or text.startswith("//"):
                    continue
                try:
                    return json.loads(text)
                except (ValueError, RecursionError):
                    return None
    except OSError:
        return None
    return None


def _named(path: Path, ctx: CollectContext) -> bool:
    """Named on the command line, matched by a ``semantictest_yao_globs`` pattern, or the generator's output."""
    import fnmatch

    target = path.resolve()
    named = [arg.split("::", 1)[0] for arg in ctx.args if not arg.startswith("-")]
    generated = ctx.option("generate-out")
    if generated:
        named.append(str(generated))
    if any((ctx.invocation_dir / arg).resolve() == target for arg in named if arg):
        return True
    try:
        relative = target.relative_to(ctx.rootdir.resolve()).as_posix()
    except ValueError:
        relative = target.as_posix()
    return any(fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(path.name, g) for g in ctx.option("yao-globs") or [])


def yao_jsonl(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.jsonl`` whose first case has ``id`` and one of input/turns/checkpoints, and whose name
    contains ``test`` or that was named on the command line (or matches an ini glob)."""
    if path.suffix != ".jsonl":
        return False
    first = _first_jsonl_case(path)
    if not isinstance(first, dict) or "id" not in first or not any(k in first for k in _YAO_KEYS):
        return False
    return "test" in path.name.lower() or (ctx is not None and _named(path, ctx))


yao_jsonl.needs_context = lambda path: path.suffix == ".jsonl"  # type: ignore[attr-defined]
"""Detectors with ``needs_context(path)`` get the CollectContext for the paths it accepts (others get None)."""


FORMATS: list[tuple[str, Callable[[Path, CollectContext | None], bool], str]] = [
    ("semantictest", semantictest_json, "semantictest.loader"),
    ("highbar", highbar_yaml, "highbar.compile"),
    ("yao", yao_jsonl, "yao.compile"),
    ("compliance", compliance_markdown, "compliance.collect"),
]
