"""The replay cache: one JSON file per LLM call, keyed by everything that shapes the answer.

Key = sha256 of role, model, prompt template version, the full rendered messages, temperature,
seed, repeat index and response schema. Files are written atomically (temp file + ``os.replace``)
so xdist workers never see half an entry, and only successful, validated answers are stored.
Modes: ``off`` (no cache), ``read`` (hits only), ``write`` (always call, record),
``read-write`` (default: hits, record misses), ``replay`` (hits only; a miss is an error).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..files import write_atomic
from .roles import CACHE_MODES
from .errors import LLMError

KEY_VERSION = 1
CHECKED_FIELDS = ("role", "model", "template", "temperature", "seed", "repeat", "schema")
"""Fields an entry records that must equal the call's (what the key was computed from)."""
DIGESTED_FIELDS = (*CHECKED_FIELDS, "key", "messages")


class CorruptEntry(LLMError):
    """A cache entry that cannot be used (not JSON, no response, an unusable answer)."""


class EntryMismatch(LLMError):
    """A cache entry that records another call than the one its file name is for."""


class CorruptEntryWarning(UserWarning):
    """A corrupt entry found in a mode that records: it is recorded again."""


def request_digest(entry: Mapping[str, Any]) -> str:
    """The sha256 of what an entry records about its request (as stored: secrets already masked)."""
    material = {k: entry.get(k) for k in DIGESTED_FIELDS}
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _shape_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"a JSON {type(entry).__name__}, not an object"
    response = entry.get("response")
    if not isinstance(response, dict):
        return "it has no 'response' object"
    if not isinstance(response.get("content"), str):
        return "its response has no 'content' text"
    return None


def _mismatch(entry: Mapping[str, Any], key: str, expect: Mapping[str, Any]) -> str | None:
    stored = entry.get("key")
    if stored != key:
        return f"it records key {stored!r}, its file name is for key {key!r}" if stored else "it records no key"
    for name in CHECKED_FIELDS:
        if name in expect and name in entry and entry[name] != expect[name]:
            return f"it records {name} {entry[name]!r}, the call has {expect[name]!r}"
    digest = entry.get("request_digest")
    if digest is not None and digest != request_digest(entry):
        return "its request_digest does not match what it records"
    return None


def cache_key(
    *,
    role: str,
    model: str,
    template: str,
    messages: list[dict[str, Any]],
    temperature: float | None,
    seed: int | None,
    repeat: int,
    schema: dict[str, Any] | None,
) -> str:
    """The hex sha256 naming one call's entry."""
    material = {
        "v": KEY_VERSION,
        "role": role,
        "model": model,
        "template": template,
        "messages": messages,
        "temperature": temperature,
        "seed": seed,
        "repeat": repeat,
        "schema": schema,
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReplayCache:
    """Entries under ``<directory>/<role>/<key>.json``; a directory you can commit."""

    def __init__(self, directory: Path, mode: str = "read-write", scrub: Callable[[Any], Any] | None = None) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"LLM cache mode {mode!r} is not one of {', '.join(CACHE_MODES)}")
        self.directory = Path(directory)
        self.mode = mode
        self.scrub = scrub
        """Applied to an entry before it is stored (the session masks secrets: entries get committed)."""
        self._memo: dict[str, dict[str, Any]] = {}

    @property
    def reads(self) -> bool:
        return self.mode in ("read", "read-write", "replay")

    @property
    def writes(self) -> bool:
        return self.mode in ("write", "read-write")

    @property
    def replay(self) -> bool:
        return self.mode == "replay"

    def path(self, role: str, key: str) -> Path:
        return self.directory / role / f"{key}.json"

    def get(self, role: str, key: str, expect: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """The stored entry, or None when there is none.

        An entry that belongs to another call (its recorded key, a field in ``expect`` or its request
        digest disagrees) raises :class:`EntryMismatch`. A corrupt entry raises :class:`CorruptEntry`
        unless this mode records (``read-write``): then it warns and is recorded again.
        """
        if not self.reads:
            return None
        entry = self._memo.get(key)
        if entry is not None:
            return entry
        path = self.path(role, key)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.corrupt(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})")
            return None
        try:
            loaded = json.loads(text)
        except ValueError as exc:
            self.corrupt(path, f"not JSON ({getattr(exc, 'msg', exc)}, line {getattr(exc, 'lineno', '?')})")
            return None
        problem = _shape_problem(loaded)
        if problem:
            self.corrupt(path, problem)
            return None
        checked: dict[str, Any] = loaded  # an object with a response: the shape checked above
        mismatch = _mismatch(checked, key, expect or {})
        if mismatch:
            raise EntryMismatch(
                f"replay cache entry {path} does not belong to this call: {mismatch} (was the file copied, "
                "renamed or edited?); delete it and record it again with --semantictest-llm-cache=read-write"
            )
        self._memo[key] = checked
        return checked

    def forget(self, key: str) -> None:
        """Drop a remembered entry (it turned out unusable)."""
        self._memo.pop(key, None)

    def corrupt(self, path: Path, why: str) -> None:
        """A corrupt entry: an error when this mode cannot record it again, else a warning."""
        message = f"corrupt entry {path}: {why}"
        if not self.writes:
            raise CorruptEntry(f"{message}; delete it and record it again with --semantictest-llm-cache=read-write")
        warnings.warn_explicit(CorruptEntryWarning(f"{message}; recording it again"), CorruptEntryWarning, str(path), 1)

    def put(self, role: str, key: str, entry: dict[str, Any]) -> None:
        """Store an entry atomically; a cache that cannot be written never fails a test."""
        if not self.writes:
            return
        if self.scrub is not None:
            entry = self.scrub(entry)
        entry = {**entry, "request_digest": request_digest(entry)}
        target = self.path(role, key)
        try:
            write_atomic(target, json.dumps(entry, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
        except OSError:
            return
        self._memo[key] = entry

    def miss_message(self, role: str, key: str, model: str) -> str:
        return (
            f"replay cache miss for the {role} call (model {model}, key {key}): no entry "
            f"{self.path(role, key)}. Record it by running once with a reachable LLM endpoint "
            f"and --semantictest-llm-cache=read-write (the default), then commit {self.directory}."
        )

