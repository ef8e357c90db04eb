"""The replay cache: one JSON file per LLM call, keyed by everything that shapes the answer.

Key = sha256 of role, model, prompt template version, the full rendered messages, temperature,
seed, repeat index and response schema. Files are written atomically (temp file + ``os.replace``)
so xdist workers never see half an entry, and only successful, validated answers are stored.
Modes: ``off`` (no cache), ``read`` (hits only), ``write`` (always call, record),
``read-write`` (default: hits, record misses), ``replay`` (hits only; a miss is an error).

Every entry carries a ``digest``: the sha256 of all it records (request and response: verdict,
score, reasoning, tokens), and, when ``SEMANTICTEST_CACHE_KEY`` is set, a ``keyed_digest`` (an
HMAC-SHA256 with that key) too. An entry read is checked whole before it answers: its digests, its
recorded key and request against the call's. Whatever disagrees is an error naming the file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path

from ..errors import SemanticTestWarning
from ..files import UnreadableFile, json_value, read_regular, write_atomic
from ..json_types import JSONValue
from .errors import LLMError
from .roles import CACHE_MODES

KEY_VERSION = 1
CHECKED_FIELDS = ("role", "model", "template", "temperature", "seed", "repeat", "schema", "messages")
"""Fields an entry records that must equal the call's (what the key was computed from)."""
DIGESTS = ("digest", "keyed_digest")
KEY_ENV = "SEMANTICTEST_CACHE_KEY"
"""The environment variable holding the optional key of entries' keyed digests (never printed)."""
RECORD = "--semantictest-llm-cache=write"
MAX_ENTRY_BYTES = 16 * 2**20
"""An entry is one call's messages and answer; a larger file is no entry of ours."""


class CorruptEntry(LLMError):
    """A cache entry that cannot be used (not JSON, no response, an unusable answer)."""


class EntryMismatch(LLMError):
    """A cache entry that records another call than the one its file name is for."""


class TamperedEntry(LLMError):
    """A cache entry whose digest is missing or does not match what it records."""


class CacheWriteWarning(SemanticTestWarning):
    """An entry that could not be written (the first of them: each further one is counted)."""


class CorruptEntryWarning(SemanticTestWarning):
    """An unusable answer found in a mode that records: it is recorded again."""


def _material(entry: Mapping[str, JSONValue]) -> bytes:
    content = {k: v for k, v in entry.items() if k not in DIGESTS}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def entry_digest(entry: Mapping[str, JSONValue]) -> str:
    """The sha256 of everything an entry records but its digests (as stored: secrets masked)."""
    return hashlib.sha256(_material(entry)).hexdigest()


def keyed_digest(entry: Mapping[str, JSONValue], key: str) -> str:
    """The HMAC-SHA256 of the same, with ``key``: only who holds the key can make one."""
    return hmac.new(key.encode("utf-8"), _material(entry), hashlib.sha256).hexdigest()


def sealed(entry: Mapping[str, JSONValue], key: str | None = None) -> dict[str, JSONValue]:
    """``entry`` with its digest (and its keyed digest when there is a key)."""
    out = {k: v for k, v in entry.items() if k not in DIGESTS}
    out["digest"] = entry_digest(out)
    if key:
        out["keyed_digest"] = keyed_digest(out, key)
    return out


def _shape_problem(entry: JSONValue) -> str | None:
    if not isinstance(entry, dict):
        return f"a JSON {type(entry).__name__}, not an object"
    response = entry.get("response")
    if not isinstance(response, dict):
        return "it has no 'response' object"
    if not isinstance(response.get("content"), str):
        return "its response has no 'content' text"
    return None


def _seal_problem(entry: Mapping[str, JSONValue], key: str | None) -> str | None:
    digest = entry.get("digest")
    if digest is None:
        return (
            "it has no digest (recorded by an earlier version, or the digest was removed); "
            "an entry without one is never replayed"
        )
    if not isinstance(digest, str) or not hmac.compare_digest(digest, entry_digest(entry)):
        return (
            "its digest does not match what it records: it was edited after it was recorded "
            "(its verdict, score, reasoning or request?)"
        )
    if key is None:
        return None
    signed = entry.get("keyed_digest")
    if signed is None:
        return f"it has no keyed digest, and {KEY_ENV} is set: every entry must be recorded with the key set"
    if not isinstance(signed, str) or not hmac.compare_digest(signed, keyed_digest(entry, key)):
        return (
            f"its keyed digest does not match ({KEY_ENV}): it was made without the key, "
            "with another key, or edited since"
        )
    return None


def _mismatch(entry: Mapping[str, JSONValue], key: str, expect: Mapping[str, JSONValue]) -> str | None:
    stored = entry.get("key")
    if stored != key:
        return (
            f"it records key {stored!r}, its file name is for key {key!r}" if stored else "it records no key"
        )
    for name in CHECKED_FIELDS:
        if name in expect and entry.get(name) != expect[name]:
            if name == "messages":
                return "it records other messages than the call sends"
            return f"it records {name} {entry.get(name)!r}, the call has {expect[name]!r}"
    return None


def cache_key(
    *,
    role: str,
    model: str,
    template: str,
    messages: list[dict[str, JSONValue]],
    temperature: float | None,
    seed: int | None,
    repeat: int,
    schema: dict[str, JSONValue] | None,
    sample: int = 0,
) -> str:
    """The hex sha256 naming one call's entry (``sample``: which of a judged check's repeated
    samples, from 0; only a later sample adds it, so a first sample keeps its recorded key)."""
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
        **({"sample": sample} if sample else {}),
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReplayCache:
    """Entries under ``<directory>/<role>/<key>.json``; a directory you can commit.

    ``signing_key`` (from ``SEMANTICTEST_CACHE_KEY``): entries are written with a keyed digest too,
    and an entry read without a matching one is an error."""

    def __init__(
        self,
        directory: Path,
        mode: str = "read-write",
        scrub: Callable[[JSONValue], JSONValue] | None = None,
        signing_key: str | None = None,
    ) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"LLM cache mode {mode!r} is not one of {', '.join(CACHE_MODES)}")
        self.directory = Path(directory)
        self.mode = mode
        self.scrub = scrub
        """Applied to an entry before it is stored (the session masks secrets: entries get committed)."""
        self._signing_key = signing_key or None
        self._memo: dict[str, dict[str, JSONValue]] = {}
        self.misses = 0
        self.unwritable = 0
        """Entries that could not be written (the first one warned)."""
        """Calls that found no entry in ``replay`` mode (each raised as a ``ReplayMiss``): how a mutation run
        tells a mutant whose judged check cannot be answered offline from one that failed."""

    def __repr__(self) -> str:
        return f"ReplayCache({str(self.directory)!r}, {self.mode!r}, keyed={self._signing_key is not None})"

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

    def get(
        self, role: str, key: str, expect: Mapping[str, JSONValue] | None = None
    ) -> dict[str, JSONValue] | None:
        """The stored entry, or None when there is none.

        The entry is checked whole, in every mode that reads: one that cannot be read or parsed
        raises :class:`CorruptEntry`, one whose digest is missing or wrong :class:`TamperedEntry`,
        one that belongs to another call (its recorded key, or a field of ``expect``, as stored:
        scrubbed) :class:`EntryMismatch`.
        """
        if not self.reads:
            return None
        entry = self._memo.get(key)
        if entry is not None:
            return entry
        path = self.path(role, key)
        text = self._entry_text(path)
        if text is None:
            return None
        checked = self._entry(path, text)
        self._check_seal(path, checked)
        self._check_belongs(path, key, checked, expect)
        self._memo[key] = checked
        return checked

    def _entry_text(self, path: Path) -> str | None:
        """The entry file's text; None when there is no such file."""
        try:  # a regular file of bounded size: a link to /dev/zero or a FIFO is refused unread
            return read_regular(path, MAX_ENTRY_BYTES).decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except UnreadableFile as exc:
            raise self._corrupt(path, f"cannot be read ({exc.detail})") from None
        except UnicodeDecodeError as exc:
            raise self._corrupt(path, f"cannot be read (not UTF-8 at byte {exc.start})") from None

    def _entry(self, path: Path, text: str) -> dict[str, JSONValue]:
        """The entry parsed, an object of an entry's shape (else :class:`CorruptEntry`)."""
        try:
            loaded = json_value(text)
        except ValueError as exc:
            why = str(exc)
            why = (
                f"{why.removesuffix(')')}; truncated?)"
                if why.startswith("not JSON (")
                else f"not an entry: {why}"
            )
            raise self._corrupt(path, why) from None
        problem = _shape_problem(loaded)
        if problem:
            raise self._corrupt(path, problem)
        checked: dict[str, JSONValue] = loaded  # an object with a response: the shape checked above
        return checked

    def _check_seal(self, path: Path, checked: dict[str, JSONValue]) -> None:
        """:class:`TamperedEntry` unless the entry's digest (or signature) holds."""
        try:
            seal = _seal_problem(checked, self._signing_key)
        except ValueError as exc:  # a value JSON cannot hold canonically (NaN)
            seal = f"it holds a value no recorded entry has ({exc})"
        if seal:
            raise TamperedEntry(
                f"replay cache entry {path} cannot be trusted: {seal}. Review how it changed (git diff); "
                f"delete it and record it again with {RECORD}"
            )

    def _check_belongs(
        self, path: Path, key: str, checked: dict[str, JSONValue], expect: Mapping[str, JSONValue] | None
    ) -> None:
        """:class:`EntryMismatch` when the entry was recorded for another call (its key, or a field of
        ``expect`` as stored: scrubbed)."""
        expected = dict(expect or {})
        if "messages" in expected:  # as the entry stores them: scrubbed, through JSON
            scrubbed = self.scrub(expected["messages"]) if self.scrub is not None else expected["messages"]
            expected["messages"] = json.loads(json.dumps(scrubbed, ensure_ascii=False, default=str))
        mismatch = _mismatch(checked, key, expected)
        if mismatch:
            raise EntryMismatch(
                f"replay cache entry {path} does not belong to this call: {mismatch} (was the file copied, "
                f"renamed or edited?); delete it and record it again with {RECORD}"
            )

    def forget(self, key: str) -> None:
        """Drop a remembered entry (it turned out unusable)."""
        self._memo.pop(key, None)

    def _corrupt(self, path: Path, why: str) -> CorruptEntry:
        return CorruptEntry(f"corrupt entry {path}: {why}; delete it and record it again with {RECORD}")

    def corrupt(self, path: Path, why: str) -> None:
        """A sound entry whose answer this role cannot use (its parser changed since it was recorded):
        an error when this mode cannot record it again, else a warning."""
        if not self.writes:
            raise self._corrupt(path, why)
        message = f"corrupt entry {path}: {why}; recording it again"
        warnings.warn_explicit(CorruptEntryWarning(message), CorruptEntryWarning, str(path), 1)

    def put(self, role: str, key: str, entry: dict[str, JSONValue]) -> None:
        """Store an entry atomically; a cache that cannot be written never fails a test."""
        if not self.writes:
            return
        if self.scrub is not None:
            entry = self.scrub(entry)
        entry = sealed(entry, self._signing_key)
        target = self.path(role, key)
        try:
            write_atomic(target, json.dumps(entry, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
        except (OSError, ValueError) as exc:  # the folder was checked at start: it changed since
            if not self.unwritable:  # said once, naming the place; the test keeps its answer
                why = getattr(exc, "strerror", None) or exc
                warnings.warn(
                    CacheWriteWarning(
                        f"replay cache entry {target} cannot be written ({why}): "
                        "this run's LLM answers are not recorded"
                    ),
                    stacklevel=2,
                )
            self.unwritable += 1
            return
        self._memo[key] = entry

    def miss_message(self, role: str, key: str, model: str, which: str = "") -> str:
        return (
            f"replay cache miss for the {role} call{which} (model {model}, key {key}): no entry "
            f"{self.path(role, key)}. Record it by running once with a reachable LLM endpoint "
            f"and --semantictest-llm-cache=read-write (the default), then commit {self.directory}."
        )
