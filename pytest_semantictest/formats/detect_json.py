"""Whether a ``*.json`` is a SemanticTest suite (``formats.detect``): sniffed, not parsed.

The rule (docs/semantictest-format.md, "Which files are collected"): a JSON object with a ``tests``
key at its top level, whatever the key's value (an array is a suite; anything else is a suite its
loader reports: ``"tests": -Infinity``, ``"tests": {}``) and whether or not the rest of the file is
valid JSON (truncated, a syntax error, NaN); and a near miss: a file with ``"pipeline"`` steps whose
top level has, instead of ``tests``, a key close to it over an array of objects (``"test": [{``).
A ``tests`` key only nested inside something else (a report, a fixture) is no suite.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .collect_context import CollectContext

_SUITE_HINT = re.compile(rb'"tests"\s*(?::|\Z)')
_JSON_STRING = re.compile(rb'"[^"]*"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'{}[]"\0')
_ARRAY_OF_OBJECTS_KEY = re.compile(rb'"([^"\\]{1,20})"\s*:\s*\[\s*\{')


def semantictest_json(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.json`` whose top level has a ``tests`` key, or a near miss of one (the module doc)."""
    if path.suffix != ".json" or not path.is_file():  # (a FIFO or a device is never opened)
        return False
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    return looks_like_suite(raw)


def looks_like_suite(raw: bytes) -> bool:
    """Sniffed, not parsed: a ``"tests":`` key at depth 1 (whatever follows it, even the end of a
    truncated file) is a suite for the loader to read.

    One pass at C speed (:func:`_structure`): the bracket depth before each hint is counted with
    strings skipped. A file whose every hint is nested (a report, a fixture) is not a suite when its
    brackets balance; when they do not, or a string is left open, it is parsed to decide, and broken
    JSON with a hint is a suite (the loader reports the syntax error rather than the file vanishing).
    A near miss (``"test": [{...``, a key close to ``tests`` at the top, in a file with ``"pipeline"``
    steps) is a suite too, so the loader says "did you mean 'tests'?"; and so is a suite cut short
    before its ``tests`` key (:func:`_cut_suite`).
    """
    if b'"tests"' not in raw:
        return _near_miss_suite(raw) or _cut_suite(raw)
    marked, hints = _SUITE_HINT.subn(b"\0", raw)
    if not hints:  # "tests" only as a value, never as a key
        return _near_miss_suite(raw) or _cut_suite(raw)
    if hints != marked.count(b"\0"):  # a NUL byte of its own: not JSON text anyway
        return _parsed_suite(raw)
    structure = _structure(marked)
    if structure is None:  # a string left open: broken
        return _parsed_suite(raw)
    return _suite_by_hint_depths(structure, raw)


def _suite_by_hint_depths(structure: bytes, raw: bytes) -> bool:
    """Decided by the bracket depth before each hint (marked by NUL in ``structure``): a hint at depth 1
    is a suite; every hint nested in brackets that balance is none; anything else is parsed to decide."""
    depth = 0
    for segment in structure.split(b"\0")[:-1]:
        depth += _depth(segment)
        if depth == 1:
            return True
        if depth < 1:
            return _parsed_suite(raw)
    if structure.count(b"{") == structure.count(b"}") and structure.count(b"[") == structure.count(b"]"):
        return False  # every hint nested in a file whose brackets balance: a fixture, not a suite
    return _parsed_suite(raw)


def _structure(raw: bytes) -> bytes | None:
    """Only the brackets (and NUL markers) of JSON text outside strings; None when a string is left open."""
    if b"\\" in raw:  # an escaped quote is not a quote, an escaped backslash escapes nothing
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = raw.translate(None, _NOT_STRUCTURE)
    kept = _JSON_STRING.sub(b"", kept.replace(b'""', b""))  # removing "" keeps every quote's parity
    return None if b'"' in kept else kept


def _depth(structure: bytes) -> int:
    return structure.count(b"{") + structure.count(b"[") - structure.count(b"}") - structure.count(b"]")


def _near_miss_suite(raw: bytes) -> bool:
    """A top-level array of objects under a key close to ``tests`` (``"test": [{``) in a file with steps.
    One pass over the file's structure, as for real suites (not one scan per candidate key)."""
    if b'"pipeline"' not in raw or b"\0" in raw:  # cheap: no step anywhere, no suite meant
        return False
    starts = _close_key_starts(raw)
    if not starts:
        return False
    marked = b"\0".join(raw[a:b] for a, b in zip([0, *starts], [*starts, len(raw)]))
    structure = _structure(marked)
    if structure is None:  # a string left open somewhere: only the keys before it can be told
        structure = _structure(raw[: starts[0]])
        return structure is not None and _depth(structure) == 1
    depth = 0
    for segment in structure.split(b"\0")[:-1]:
        depth += _depth(segment)
        if depth == 1:
            return True
    return False


def _close_key_starts(raw: bytes) -> list[int]:
    """Where each key close to ``tests`` over an array of objects starts (each distinct key judged once)."""
    import difflib

    close: dict[bytes, bool] = {}
    starts = []
    for match in _ARRAY_OF_OBJECTS_KEY.finditer(raw):
        key = match.group(1)
        if key not in close:
            close[key] = bool(
                difflib.get_close_matches(key.decode("utf-8", "replace").lower(), ["tests"], n=1, cutoff=0.8)
            )
        if close[key]:
            starts.append(match.start())
    return starts


def _parsed_suite(raw: bytes) -> bool:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return True  # broken, and it has a "tests" key: the loader says what is wrong
    return isinstance(data, dict) and "tests" in data


SUITE_KEYS = frozenset({"name", "version", "description", "context", "input", "setup", "tests", "teardown"})
"""The keys of a suite's top level."""
_OWN_KEYS = ("tests", "context", "setup", "teardown")
"""Top-level keys a suite has and a package.json or other data file does not."""
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*("?)|[{}\[\]]')


def _cut_suite(raw: bytes) -> bool:
    """A suite cut short before its ``tests`` key: an object left open (or a string left open in it)
    whose top-level keys so far are all a suite's, one of them (or the cut last one, 2 characters at
    least) ``tests``, ``context``, ``setup`` or ``teardown``: ``{"name": "n", "context": {"u": "ht``,
    ``{"name": "n", "te``. Only for files whose brackets do not close, at C speed until then."""
    if not _left_open(raw):
        return False
    walked = _top_keys_before_cut(raw.decode("utf-8", "replace"))
    if walked is None:
        return False
    keys, cut = walked
    if cut is not None:  # the file was cut inside this key
        return len(cut) >= 2 and _suite_keys(keys) and any(k.startswith(cut) for k in _OWN_KEYS)
    return _suite_keys(keys) and any(k in _OWN_KEYS for k in keys)


def _left_open(raw: bytes) -> bool:
    """An object whose brackets do not close (or with a string left open); found at C speed."""
    if not raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") or b"\0" in raw:
        return False
    structure = _structure(raw)
    return structure is None or _depth(structure) > 0  # else closed (or over-closed): not cut short


def _top_keys_before_cut(text: str) -> tuple[list[str], str | None] | None:
    """The top-level keys of an object cut short, and the start of the key it was cut inside (None when
    the cut is elsewhere); None when its top level closes after all."""
    keys: list[str] = []
    depth, end, last = 0, 0, ""
    for token in _TOKEN.finditer(text):
        found = token.group()
        gap = text[end : token.start()].strip()
        before, end, last = (gap[-1] if gap else last), token.end(), found[-1]
        if found in "{[":
            depth += 1
        elif found in "}]":
            depth -= 1
            if depth <= 0:
                return None
        elif depth == 1 and before in "{,":  # a string where a key of the top level goes
            if not token.group(1):  # left open: the file was cut inside this key
                return keys, found[1:]
            if text[end : end + 64].lstrip()[:1] in (":", ""):
                keys.append(found[1:-1])
    return keys, None


def _suite_keys(keys: list[str]) -> bool:
    return all(k in SUITE_KEYS for k in keys)
