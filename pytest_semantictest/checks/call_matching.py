"""Which actual tool calls serve a turn's expected calls: each expectation its own call (a bipartite
matching), one after another in time when the order matters, and why an expectation found none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..json_types import JSONValue
from .expectation_types import CallExpectation
from .matchers import subset_matches, value_matches


@dataclass(frozen=True)
class Call:
    """An actual tool call as the checks see it."""

    fn: str
    args: JSONValue = None
    result: JSONValue = None
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None

    @classmethod
    def of(cls, value: object) -> Call:
        if isinstance(value, Call):
            return value
        if isinstance(value, Mapping):
            return cls(
                str(value.get("fn") or value.get("name") or ""),
                value.get("args"),
                value.get("result"),
                value.get("error") or None,
                value.get("started_at"),
                value.get("ended_at"),
            )
        return cls(
            str(getattr(value, "fn", "")),
            getattr(value, "args", None),
            getattr(value, "result", None),
            getattr(value, "error", None) or None,
            getattr(value, "started_at", None),
            getattr(value, "ended_at", None),
        )


def call_names(spec: CallExpectation) -> tuple[str, ...]:
    name = spec.name
    return (name,) if isinstance(name, str) else tuple(name)


def _error_ok(expected: JSONValue, actual: str | None) -> bool:
    if expected is False:
        return actual is None
    if actual is None:
        return False
    return expected is True or value_matches(expected, actual)


def fits(spec: CallExpectation, call: Call) -> bool:
    """The call has an accepted name, the expected params/result and the expected outcome."""
    return (
        call.fn in call_names(spec)
        and subset_matches(spec.params, call.args)
        and subset_matches(spec.result, call.result)
        and _error_ok(spec.error, call.error)
    )


def assign(specs: Sequence[CallExpectation], calls: Sequence[Call]) -> list[int | None]:
    """Each expectation's serving call, every call serving at most one (bipartite matching)."""
    edges = [[c for c, call in enumerate(calls) if fits(spec, call)] for spec in specs]
    holder: dict[int, int] = {}

    def claim(e: int, visited: set[int]) -> bool:
        for c in edges[e]:
            if c in visited:
                continue
            visited.add(c)
            if c not in holder or claim(holder[c], visited):
                holder[c] = e
                return True
        return False

    for e in range(len(specs)):
        claim(e, set())
    result: list[int | None] = [None] * len(specs)
    for c, e in holder.items():
        result[e] = c
    return result


def ordered_assignment(specs: Sequence[CallExpectation], calls: Sequence[Call]) -> list[int] | None:
    """Calls serving the expectations one after another in time, or None."""
    taken: set[int] = set()
    last_end = float("-inf")
    chosen: list[int] = []
    for spec in specs:
        options = [
            c
            for c, call in enumerate(calls)
            if c not in taken
            and (call.started_at if call.started_at is not None else c) >= last_end
            and fits(spec, call)
        ]
        if not options:
            return None
        best = min(options, key=lambda c: (calls[c].ended_at if calls[c].ended_at is not None else c, c))
        taken.add(best)
        end = calls[best].ended_at
        last_end = end if end is not None else best
        chosen.append(best)
    return chosen


def _label(spec: CallExpectation) -> str:
    names = call_names(spec)
    return f"'{names[0]}'" if len(names) == 1 else "one of (" + " or ".join(f"'{n}'" for n in names) + ")"


def why_unmet(spec: CallExpectation, calls: Sequence[Call], taken: set[int]) -> str:
    """Why no call could serve ``spec``, for the failure line."""
    same = [(c, call) for c, call in enumerate(calls) if call.fn in call_names(spec)]
    if not same:
        return _not_called(spec, calls)
    if spec.error is False and all(call.error is not None for _, call in same):
        return f"'{same[0][1].fn}' was called but failed: {same[0][1].error}"
    if any(fits(spec, call) for _, call in same):
        return f"{_label(spec)} was called, but every fitting call is needed by another expected call"
    call = _first_free(same, taken)
    return f"'{call.fn}' was called but did not match: " + "; ".join(_mismatches(spec, call))


def _not_called(spec: CallExpectation, calls: Sequence[Call]) -> str:
    called = ", ".join(call.fn for call in calls) or "nothing"
    return f"expected a call to {_label(spec)}, but the agent called: {called}"


def _first_free(same: Sequence[tuple[int, Call]], taken: set[int]) -> Call:
    """The first of the same-named calls no other expectation holds (else the first): the one explained."""
    return next((call for c, call in same if c not in taken), same[0][1])


def _mismatches(spec: CallExpectation, call: Call) -> list[str]:
    """What of ``spec`` the call does not meet: params, result, outcome."""
    parts = []
    if spec.params and not subset_matches(spec.params, call.args):
        parts.append(f"params: expected {dict(spec.params)}, got {call.args}")
    if spec.result and not subset_matches(spec.result, call.result):
        parts.append(f"result: expected {dict(spec.result)}, got {call.result}")
    if not _error_ok(spec.error, call.error):
        parts.append(f"error: expected {_wanted_outcome(spec.error)}, got {call.error or 'none'}")
    return parts


def _wanted_outcome(error: bool | Mapping[str, JSONValue]) -> str:
    if error is True:
        return "a failure"
    if error is False:
        return "no failure"
    return f"a failure matching {dict(error)}"
