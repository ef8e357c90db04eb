"""Whether a ``*.jsonl`` is a Yao test file (``formats.detect``), from its first content lines.

The rule (docs/conversations.md, "Which files are collected"): the name rule first (a name containing
``test``, a file named on the command line or matched by ``semantictest_yao_globs``), then the first
case: it has ``id`` and one of ``input``, ``turns``, ``checkpoints``; or it is a near miss of that
(:func:`yao_near_miss`), so its loader says what is wrong. Data rows (``{"input": ..., "output":
...}``, an ML test split's ``{"id": 1, "inputs": ..., "targets": ...}``, a bare ``{"input": ...}``)
are not cases.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..json_types import JSONObject
from .collect_context import CollectContext

_YAO_KEYS = ("input", "turns", "checkpoints")
_YAO_CASE_KEYS = frozenset(
    {
        "id",
        "name",
        "description",
        "mode",
        "input",
        "assertions",
        "assert",
        "expected",
        "options",
        "attachments",
        "turns",
        "simulator",
        "checkpoints",
        "max_turns",
        "timeout",
        "skip",
        "interactive",
        "before",
        "after",
        "user",
        "team",
        "metadata",
    }
)
"""Every key a Yao case may have: a first line made only of these is a case, whatever else is wrong."""
_YAO_ONLY = frozenset({"assertions", "assert", "expected", "turns", "checkpoints", "simulator"})


def jsonl_head(path: Path, lines: int = 5, limit: int = 1 << 20) -> list[str]:
    """The first few content lines of a ``.jsonl`` (blank and ``//`` lines skipped), read cheaply."""
    out: list[str] = []
    if not path.is_file():  # (a FIFO or a device is never opened)
        return out
    try:
        with path.open("r", encoding="utf-8-sig", errors="replace") as fh:
            for line in fh:
                limit -= len(line)
                if limit < 0 or len(out) >= lines:
                    break
                text = line.strip()
                if text and not text.startswith("//"):
                    out.append(text)
    except OSError:
        return []
    return out


def as_object(text: str) -> JSONObject | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _yao_case(data: JSONObject | None) -> bool:
    return data is not None and "id" in data and any(k in data for k in _YAO_KEYS)


def yao_near_miss(lines: list[str]) -> str | None:
    """Why a ``.jsonl`` (already matching the name rule) whose first case is not a Yao case still looks
    like Yao cases, or None: a first line that is broken JSON but names ``id`` and ``input`` (or later
    lines are cases), a first case without ``id`` (made only of a case's keys, more than a bare
    ``input``; or with a key only cases have, or later lines are cases), one with ``id`` that
    misspells ``input``, or one in the design's draft shape (``messages`` where cases now have
    ``input``)."""
    if not lines:
        return None
    first = as_object(lines[0])
    later = any(_yao_case(as_object(line)) for line in lines[1:])
    if first is None:
        return "its first line is not a JSON object" if later or _mentions_a_case(lines[0]) else None
    if "id" not in first:
        return "its first case has no 'id'" if _case_without_id(first, later) else None
    return _misnamed_input(first)


def _mentions_a_case(line: str) -> bool:
    """Whether a line that is not JSON names ``id`` and a case's input or assertions."""
    return '"id"' in line and any(f'"{k}"' in line for k in (*_YAO_KEYS, "assert", "assertions"))


def _unknown_keys(first: JSONObject) -> list[str]:
    """The keys of a first line that no Yao case has."""
    return [k for k in first if k not in _YAO_CASE_KEYS]


def _case_without_id(first: JSONObject, later: bool) -> bool:
    """Whether a first line without ``id`` is a case that lacks it: it has a case's input and only a
    case's keys (more than a bare ``input``), or at most one other key and a sign of being a case
    (later lines are cases, a key only cases have, an ``id`` spelt otherwise)."""
    if not any(k in first for k in _YAO_KEYS):
        return False
    unknown = _unknown_keys(first)
    if not unknown and len(first) > 1:  # only a case's keys, more than a bare input: a case
        return True
    if len(unknown) > 1:
        return False
    return bool(later or _YAO_ONLY & first.keys() or any(k.lower() == "id" for k in unknown))


def _misnamed_input(first: JSONObject) -> str | None:
    """Why a first line with ``id`` but none of input/turns/checkpoints is a case with its input
    misnamed (the draft's ``messages``, or one unknown key close to an input key), or None."""
    import difflib

    if any(k in first for k in _YAO_KEYS):
        return None
    if "messages" in first:
        return "its first case has 'messages' (the draft shape of Yao's test design) instead of 'input'"
    unknown = _unknown_keys(first)
    if len(unknown) == 1:
        close = difflib.get_close_matches(unknown[0].lower(), _YAO_KEYS, n=1, cutoff=0.8)
        if close:
            return f"its first case has '{unknown[0]}' but no '{close[0]}'"
    return None


def _named(path: Path, ctx: CollectContext) -> bool:
    """Named on the command line, matched by a ``semantictest_yao_globs`` pattern, or the generator's output."""
    import fnmatch

    target = path.resolve()
    named = [arg.split("::", 1)[0] for arg in ctx.args if not arg.startswith("-")]
    generated = ctx.text("generate-out")
    if generated:
        named.append(str(generated))
    if any((ctx.invocation_dir / arg).resolve() == target for arg in named if arg):
        return True
    try:
        relative = target.relative_to(ctx.rootdir.resolve()).as_posix()
    except ValueError:
        relative = target.as_posix()
    return any(fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(path.name, g) for g in ctx.texts("yao-globs"))


def yao_jsonl(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.jsonl`` whose name contains ``test`` or that was named on the command line (or matches an
    ini glob), and whose first case has ``id`` and one of input/turns/checkpoints, or is a near miss of
    that (see :func:`yao_near_miss`): its loader then says what is wrong."""
    if path.suffix != ".jsonl":
        return False
    if "test" not in path.name.lower() and not (ctx is not None and _named(path, ctx)):
        return False
    lines = jsonl_head(path)
    return bool(lines) and (_yao_case(as_object(lines[0])) or yao_near_miss(lines) is not None)


yao_jsonl.needs_context = lambda path: path.suffix == ".jsonl"  # type: ignore[attr-defined]
"""Detectors with ``needs_context(path)`` get the CollectContext for the paths it accepts (others get None)."""
