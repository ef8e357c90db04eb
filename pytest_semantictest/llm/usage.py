"""LLM usage counters, summed across xdist workers for the terminal summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Protocol

from ..json_types import JSONValue

MODEL_SEP = "@"
"""Per-model counters travel flat (``prompt_tokens@gpt-4o-mini``) so that every sum and difference
of the counters (per test, per worker) covers them too."""


@dataclass
class Usage:
    """Counters for the terminal summary. ``calls`` counts requests sent (retries included);
    ``rate_waits`` and ``rate_wait_ms`` the waits for the run's rate limit; ``models`` the prompt
    and completion tokens of each model."""

    calls: int = 0
    cache_hits: int = 0
    tokens: int = 0
    retries: int = 0
    errors: int = 0
    rate_waits: int = 0
    rate_wait_ms: int = 0
    models: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        # read before and after every test: a plain dict beats dataclasses.asdict's deep copy
        return {**{name: getattr(self, name) for name in COUNTERS}, **self.models}

    def add(self, other: Mapping[str, int]) -> None:
        for name, count in other.items():
            if name in COUNTERS:
                setattr(self, name, getattr(self, name) + int(count or 0))
            elif MODEL_SEP in name:
                self.count_model(name, int(count or 0))

    def waited(self, seconds: float, why: str) -> None:
        """A request waited ``seconds`` for the run's rate limit (``why``)."""
        self.rate_waits += 1
        self.rate_wait_ms += round(seconds * 1000)

    def answered(self, model: str, prompt: int, completion: int) -> None:
        """One answer of ``model``: its prompt and completion tokens."""
        self.tokens += prompt + completion
        for kind, count in (("prompt_tokens", prompt), ("completion_tokens", completion)):
            self.count_model(f"{kind}{MODEL_SEP}{model}", count)

    def count_model(self, key: str, delta: int) -> None:
        """Add ``delta`` to one per-model counter (``kind@model``)."""
        self.models[key] = self.models.get(key, 0) + delta


def by_model(usage: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """``{model: (prompt tokens, completion tokens)}`` from flat counters."""
    models: dict[str, tuple[int, int]] = {}
    for name, count in usage.items():
        kind, sep, model = name.partition(MODEL_SEP)
        if not sep:
            continue
        prompt, completion = models.get(model, (0, 0))
        models[model] = (
            (prompt + count, completion) if kind == "prompt_tokens" else (prompt, completion + count)
        )
    return models


class Price(Protocol):
    """A model's price (``--semantictest-llm-price``): what a number of tokens in and out cost."""

    def cost(self, prompt: int, completion: int) -> float: ...


def records_usage(records: Sequence[Mapping[str, JSONValue]]) -> dict[str, int]:
    """The LLM usage counters of results records (their ``llm_usage``), added up."""
    total: Counter[str] = Counter()
    for record in records:
        usage = record.get("llm_usage")
        if isinstance(usage, Mapping):
            total.update({k: int(v) for k, v in usage.items() if isinstance(v, int)})
    return dict(total)


def usage_lines(usage: Mapping[str, int], prices: Mapping[str, Price]) -> list[str]:
    """The summary's lines for each model (tokens in and out, and the cost where ``prices`` has the
    model: an object with ``cost(prompt, completion)``) and the rate limit's waits."""
    lines = []
    for model, (prompt, completion) in sorted(by_model(usage).items()):
        price = prices.get(model)
        cost = (
            f", cost {price.cost(prompt, completion):.4f}"
            if price is not None
            else ", cost unknown (no llm-price)"
        )
        lines.append(f"LLM {model}: {prompt + completion} tokens ({prompt} in, {completion} out){cost}")
    if usage.get("rate_waits"):
        lines.append(
            f"LLM rate limit: {usage['rate_waits']} request(s) waited, "
            f"{usage.get('rate_wait_ms', 0) / 1000:.1f} s in all"
        )
    return lines


COUNTERS = tuple(f.name for f in fields(Usage) if f.name != "models")
"""The counters that are plain attributes (the per-model ones are in ``models``)."""
