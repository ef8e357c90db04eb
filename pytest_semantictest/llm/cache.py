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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..files import write_atomic
from .config import CACHE_MODES

KEY_VERSION = 1


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

    def get(self, role: str, key: str) -> dict[str, Any] | None:
        """The stored entry, or None (absent or unreadable: a corrupt file is a miss)."""
        if not self.reads:
            return None
        entry = self._memo.get(key)
        if entry is not None:
            return entry
        try:
            with open(self.path(role, key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("response"), dict):
            return None
        self._memo[key] = entry
        return entry

    def put(self, role: str, key: str, entry: dict[str, Any]) -> None:
        """Store an entry atomically; a cache that cannot be written never fails a test."""
        if not self.writes:
            return
        if self.scrub is not None:
            entry = self.scrub(entry)
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

