"""Span assertions, one core for every format (``docs/traces.md``): which spans match an entry (name,
kind, service, status, attributes, duration), how many must, and what to say when they do not.

A format compiles its own spelling into a :class:`SpanEntry`: each field a :data:`ValueTest` (the
format's operators: compliance expressions, plain values, globs) and durations and counts as
:class:`Bound`. :func:`entry_failure` says why an entry is not satisfied, naming the closest span and
what differed; an attribute that no span carries gets a did-you-mean drawn from the attribute names
the spans do carry and the semantic conventions' names (:data:`CONVENTION_NAMES`), so
``gen_ai.tool.nme`` reads "did you mean 'gen_ai.tool.name'?".
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..json_types import JSONValue
from .model import Span

ValueTest = Callable[[bool, JSONValue], "str | None"]
"""(found, value) -> None when it holds, else why not."""

CONVENTION_NAMES: tuple[str, ...] = (
    # OpenTelemetry GenAI semantic conventions
    "gen_ai.operation.name",
    "gen_ai.system",
    "gen_ai.provider.name",
    "gen_ai.agent.name",
    "gen_ai.agent.id",
    "gen_ai.conversation.id",
    "gen_ai.request.model",
    "gen_ai.request.temperature",
    "gen_ai.request.max_tokens",
    "gen_ai.response.model",
    "gen_ai.response.id",
    "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.description",
    "gen_ai.tool.type",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "error.type",
    # OpenInference
    "openinference.span.kind",
    "tool.name",
    "tool.parameters",
    "input.value",
    "output.value",
    "llm.model_name",
    "llm.token_count.prompt",
    "llm.token_count.completion",
    # pydantic-ai's earlier names
    "tool_arguments",
    "tool_response",
)
"""Attribute names the conventions define (the ones this plugin reads, and their neighbours)."""

FIELDS = ("name", "kind", "service", "status", "attributes", "duration_ms", "count")
"""What a span entry may say (formats spell them their own way and map to these)."""


@dataclass(frozen=True)
class Bound:
    """``min`` <= a number <= ``max`` (either may be absent)."""

    min: float | None = None
    max: float | None = None

    def describe(self) -> str:
        if self.min is not None and self.min == self.max:
            return f"{self.min:g}"
        parts = [
            f">= {self.min:g}" if self.min is not None else "",
            f"<= {self.max:g}" if self.max is not None else "",
        ]
        return " and ".join(p for p in parts if p) or "any"

    def test(self, value: float) -> str | None:
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            return f"expected {self.describe()}, got {value:g}"
        return None


def bound_of(value: JSONValue) -> Bound | str:
    """A number (exactly it) or ``{min, max}``; else why it is not one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return Bound(value, value)
    if isinstance(value, Mapping) and value and set(value) <= {"min", "max"}:
        ends = [value.get("min"), value.get("max")]
        if all(e is None or (isinstance(e, (int, float)) and not isinstance(e, bool)) for e in ends):
            low, high = (float(e) if e is not None else None for e in ends)
            if low is None or high is None or low <= high:
                return Bound(low, high)
            return f"min {low:g} is above max {high:g}"
    return f"expected a number or {{min: N, max: N}}, got {json.dumps(value, default=str)[:60]}"


@dataclass
class SpanEntry:
    """What spans an entry asks for, and how many (at least one unless ``count`` says otherwise)."""

    label: str
    name: ValueTest | None = None
    kind: ValueTest | None = None
    service: ValueTest | None = None
    status: ValueTest | None = None
    attributes: dict[str, ValueTest] = field(default_factory=dict)
    duration_ms: Bound | None = None
    count: Bound = field(default_factory=lambda: Bound(1, None))
    line: int | None = None

    def mismatches(self, span: Span) -> list[str]:
        """What of ``span`` does not hold, one phrase each."""
        out = []
        for label, test, value in (
            ("name", self.name, span.name),
            ("kind", self.kind, span.kind),
            ("service", self.service, span.service),
            ("status", self.status, span.status),
        ):
            why = test(True, value) if test is not None else None
            if why is not None:
                out.append(f"{label}: {why}")
        for name, test in self.attributes.items():
            found = name in span.attributes
            why = test(found, span.attributes.get(name))
            if why is not None:
                out.append(f"attribute {name}: {why}")
        if self.duration_ms is not None and (why := self.duration_ms.test(span.duration_ms)) is not None:
            out.append(f"duration_ms: {why}")
        return out


def attribute_hints(names: Sequence[str], spans: Sequence[Span]) -> list[str]:
    """For each of ``names`` that no span carries: "no span carries attribute 'x' — did you mean 'y'?"
    (the spans' own names first, then the conventions')."""
    carried = sorted({k for s in spans for k in s.attributes})
    hints = []
    for name in names:
        if name in carried:
            continue
        close = difflib.get_close_matches(name, carried, n=1, cutoff=0.75) or difflib.get_close_matches(
            name, CONVENTION_NAMES, n=1, cutoff=0.75
        )
        hint = f"no span carries attribute '{name}'"
        hints.append(hint + (f" — did you mean '{close[0]}'?" if close else ""))
    return hints


def entry_failure(entry: SpanEntry, spans: Sequence[Span]) -> str | None:
    """Why ``spans`` do not satisfy ``entry`` (None when they do): how many matched, the closest span
    and what differed, and a did-you-mean for attribute names no span carries."""
    matched = [s for s in spans if not entry.mismatches(s)]
    why = entry.count.test(len(matched))
    if why is None:
        return None
    message = f"spans matching {entry.label}: {why}"
    if not matched and spans:
        closest = min(spans, key=lambda s: len(entry.mismatches(s)))
        message += f"; closest: '{closest.name}' ({'; '.join(entry.mismatches(closest))})"
    elif not spans:
        message += "; no spans at all"
    hints = attribute_hints(list(entry.attributes), spans)
    return "; ".join([message, *hints])


def counted(spans: Sequence[Span], label: str, bound: Bound) -> str | None:
    """Why the number of ``spans`` is not within ``bound``."""
    why = bound.test(len(spans))
    return None if why is None else f"{label}: {why}"
