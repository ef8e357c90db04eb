"""LLM usage counters, summed across xdist workers for the terminal summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields


@dataclass
class Usage:
    """Counters for the terminal summary. ``calls`` counts requests sent (retries included)."""

    calls: int = 0
    cache_hits: int = 0
    tokens: int = 0
    retries: int = 0
    errors: int = 0

    def as_dict(self) -> dict[str, int]:
        # read before and after every test: a plain dict beats dataclasses.asdict's deep copy
        return {name: getattr(self, name) for name in _FIELDS}

    def add(self, other: Mapping[str, int]) -> None:
        for name in self.as_dict():
            setattr(self, name, getattr(self, name) + int(other.get(name, 0) or 0))


_FIELDS = tuple(f.name for f in fields(Usage))
