"""Paraphrases of a trigger, made while the test runs: highbar's committed cache first, then the LLM
client's paraphraser role (cached), whose answer is saved to highbar's cache as ``highbar run`` does
(not in replay mode).

Not a block of a pipeline but the case's source of phrasings (``Case.variants``): the highbar
compiler builds a :class:`Variations` (``formats/highbar/compile.py``, which runs nothing), the
engine resolves it before the runs (``engine/repeat.py``) and each phrasing reaches the case's
``AgentTurn`` step through its ``phrasing`` key (:data:`PHRASING_KEY`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..run_context import RunContext

from ..checks.run import llm_client
from ..files import write_atomic
from ..json_types import JSONObject, JSONValue

PHRASING_KEY = "__highbar_phrasing__"
_TEMPLATE = "paraphrase-1"


def cache_key(trigger: str, count: int) -> str:
    """highbar's key for ``.highbar/variations.json``."""
    return hashlib.sha256(
        json.dumps({"trigger": trigger, "count": count}, sort_keys=True).encode()
    ).hexdigest()[:16]


def find_cache(start: Path) -> Path | None:
    """``.highbar/variations.json`` in ``start`` or the nearest parent that has one."""
    for folder in (start, *start.parents):
        candidate = folder / ".highbar" / "variations.json"
        if candidate.is_file():
            return candidate
    return None


def save_entry(start: Path, trigger: str, count: int, model: str, variations: list[str]) -> Path | None:
    """Add one entry to highbar's cache (the nearest one, else ``start/.highbar/variations.json``).

    Written as highbar writes it (sorted keys, indented, UTF-8), atomically, merged with what the
    file holds now. A file that is not a JSON object (a bad merge) is left alone; a cache that
    cannot be written never fails a test. Returns the path written, or None.
    """
    path = find_cache(start) or start / ".highbar" / "variations.json"
    try:
        entries: JSONValue = json.loads(path.read_text(encoding="utf-8") or "{}") if path.is_file() else {}
    except (OSError, ValueError):
        return None
    if not isinstance(entries, dict):
        return None
    entries[cache_key(trigger, count)] = {
        "trigger": trigger,
        "count": count,
        "model": model,
        "variations": variations,
    }
    text = json.dumps(entries, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        write_atomic(path, text)
    except OSError:
        return None
    return path


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def dedupe(trigger: str, texts: list[JSONValue], count: int) -> list[str]:
    """Distinct paraphrases (casefold, whitespace-normalised, not the trigger), at most ``count``."""
    seen = {_normal(trigger)}
    out: list[str] = []
    for text in texts:
        if isinstance(text, str) and text.strip() and _normal(text) not in seen:
            seen.add(_normal(text))
            out.append(text.strip())
    return out[:count]


@dataclass
class Variations:
    """The phrasings of one single-turn test: the trigger, then its paraphrases (``count`` asked for).

    A committed ``.highbar/variations.json`` entry is used as highbar uses it: every sentence it holds,
    as written (more or fewer than ``count`` too); only generated ones are deduplicated and trimmed."""

    trigger: str
    count: int
    cwd: Path

    async def resolve(self, run_context: RunContext) -> list[tuple[str, JSONObject]]:
        texts = self._from_highbar_cache()
        if texts is None:
            texts = await self._generate(run_context)
        if not texts:  # highbar: running only the trigger would report N phrasings that tested one
            raise RuntimeError(f"no variations available (0 of {self.count})")
        phrasings = [("trigger", {PHRASING_KEY: self.trigger})]
        phrasings += [(f"variation {i + 1}: {t!r}", {PHRASING_KEY: t}) for i, t in enumerate(texts)]
        return phrasings

    def tested(self, paraphrases: int) -> str:
        """highbar's words for what was tested: ``3 variations``, or ``4 of 3 variations``."""
        return (
            f"{self.count} variations"
            if paraphrases == self.count
            else f"{paraphrases} of {self.count} variations"
        )

    def _from_highbar_cache(self) -> list[str] | None:
        """The committed entry's sentences, all of them; None when there is no entry. A cache highbar
        cannot use (not JSON, not an object, an entry without a list of strings) is an error, as there."""
        path = find_cache(self.cwd)
        if path is None:
            return None
        entries = _cache_entries(path)
        if entries is None:
            return None
        key = cache_key(self.trigger, self.count)
        entry = entries.get(key)
        if entry is None:
            return None
        variations = entry.get("variations") if isinstance(entry, dict) else None
        if not isinstance(variations, list) or not all(isinstance(v, str) for v in variations):
            raise RuntimeError(f"{path}: entry {key!r} has no valid 'variations' list")
        return list(variations)

    async def _generate(self, run_context: RunContext) -> list[str]:
        if run_context.llm is None or not run_context.llm.configured("paraphraser"):
            raise RuntimeError(
                f"no paraphrases of {self.trigger!r} in .highbar/variations.json and no LLM is configured "
                "to write them (set highbar's HIGHBAR_LLM_API_KEY, or --semantictest-llm-base-url / OPENAI_API_KEY, "
                "or commit the cache)"
            )
        llm = llm_client(run_context)
        prompt = (
            f"Write {self.count} different ways a user might phrase this message to an assistant, keeping its "
            f"meaning and every concrete detail (names, numbers, ids). Answer with a JSON array of "
            f"{self.count} strings and nothing else.\n\nMessage: {self.trigger}"
        )
        completion = await llm.complete(
            "paraphraser", [{"role": "user", "content": prompt}], parse=_parse_list, template=_TEMPLATE
        )
        texts = dedupe(self.trigger, completion.parsed, self.count)
        if not texts:
            raise RuntimeError(f"the paraphraser returned no usable paraphrase of {self.trigger!r}")
        if not llm.cache.replay:  # as highbar: generated once, saved
            save_entry(self.cwd, self.trigger, self.count, llm.config.model_for("paraphraser"), texts)
        return texts


def _parse_list(text: str) -> list[str]:
    start, end = text.find("["), text.rfind("]")
    if start == -1 or end <= start:
        raise ValueError("expected a JSON array of strings")
    value = json.loads(text[start : end + 1])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a JSON array of strings")
    return value


def _cache_entries(path: Path) -> JSONObject | None:
    """The cache's entries (None when the file is empty); one highbar cannot read is an error, as there."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise RuntimeError(f"{path} cannot be read: {exc}") from None
    if not text:
        return None
    try:
        entries = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise RuntimeError(
            f"{path} is not valid JSON{f' (line {line})' if line else ''}. Leftover merge conflict markers? "
            "Fix the file, or delete it to have the variations written again"
        ) from None
    if not isinstance(entries, dict):
        raise RuntimeError(f"{path} must contain a JSON object, got {type(entries).__name__}")
    return entries
