"""highbar expectations over one turn: function calls (matched one-to-one), order,
exclusivity, forbidden tools and the response text."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.databus import MISSING
from ..model import CheckResult, Failure
from .matchers import condition_holds, explain_response, subset_matches, value_matches


@dataclass(frozen=True)
class Call:
    """An actual tool call as the checks see it."""

    fn: str
    args: Any = None
    result: Any = None
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None

    @classmethod
    def of(cls, value: Any) -> Call:
        if isinstance(value, Call):
            return value
        if isinstance(value, Mapping):
            return cls(str(value.get("fn") or value.get("name") or ""), value.get("args"), value.get("result"),
                       value.get("error") or None, value.get("started_at"), value.get("ended_at"))
        return cls(str(getattr(value, "fn", "")), getattr(value, "args", None), getattr(value, "result", None),
                   getattr(value, "error", None) or None, getattr(value, "started_at", None),
                   getattr(value, "ended_at", None))


def _names(spec: Any) -> tuple[str, ...]:
    name = spec.name
    return (name,) if isinstance(name, str) else tuple(name)


def _error_ok(expected: Any, actual: str | None) -> bool:
    if expected is False:
        return actual is None
    if actual is None:
        return False
    return expected is True or value_matches(expected, actual)


def fits(spec: Any, call: Call) -> bool:
    """The call has an accepted name, the expected params/result and the expected outcome."""
    return (
        call.fn in _names(spec)
        and subset_matches(spec.params, call.args)
        and subset_matches(spec.result, call.result)
        and _error_ok(spec.error, call.error)
    )


def assign(specs: Sequence[Any], calls: Sequence[Call]) -> list[int | None]:
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


def ordered_assignment(specs: Sequence[Any], calls: Sequence[Call]) -> list[int] | None:
    """Calls serving the expectations one after another in time, or None."""
    taken: set[int] = set()
    last_end = float("-inf")
    chosen: list[int] = []
    for spec in specs:
        options = [
            c for c, call in enumerate(calls)
            if c not in taken and (call.started_at if call.started_at is not None else c) >= last_end and fits(spec, call)
        ]
        if not options:
            return None
        best = min(options, key=lambda c: (calls[c].ended_at if calls[c].ended_at is not None else c, c))
        taken.add(best)
        end = calls[best].ended_at
        last_end = end if end is not None else best
        chosen.append(best)
    return chosen


def _label(spec: Any) -> str:
    names = _names(spec)
    return f"'{names[0]}'" if len(names) == 1 else "one of (" + " or ".join(f"'{n}'" for n in names) + ")"


def _why_unmet(spec: Any, calls: Sequence[Call], taken: set[int]) -> str:
    names = _names(spec)
    same = [(c, call) for c, call in enumerate(calls) if call.fn in names]
    if not same:
        called = ", ".join(call.fn for call in calls) or "nothing"
        return f"expected a call to {_label(spec)}, but the agent called: {called}"
    if spec.error is False and all(call.error is not None for _, call in same):
        return f"'{same[0][1].fn}' was called but failed: {same[0][1].error}"
    if any(fits(spec, call) for _, call in same):
        return f"{_label(spec)} was called, but every fitting call is needed by another expected call"
    _, call = next(((c, x) for c, x in same if c not in taken), same[0])
    parts = []
    if spec.params and not subset_matches(spec.params, call.args):
        parts.append(f"params: expected {dict(spec.params)}, got {call.args}")
    if spec.result and not subset_matches(spec.result, call.result):
        parts.append(f"result: expected {dict(spec.result)}, got {call.result}")
    if not _error_ok(spec.error, call.error):
        want = "a failure" if spec.error is True else "no failure" if spec.error is False else f"a failure matching {dict(spec.error)}"
        parts.append(f"error: expected {want}, got {call.error or 'none'}")
    return f"'{call.fn}' was called but did not match: " + "; ".join(parts)


def evaluate_expect(expect: Any, calls: Sequence[Call], response: str, line: int | None = None) -> list[Failure]:
    """Every failed condition of one ``expect`` block, as failures."""
    out: list[Failure] = []

    def fail(check: str, message: str, expected: Any = None, actual: Any = None) -> None:
        out.append(Failure(check=check, message=message, line=line, expected=expected, actual=actual))

    for name in expect.forbid:
        if any(call.fn == name for call in calls):
            fail("forbid", f"forbidden tool '{name}' was called")
    specs = expect.function_calls
    if specs is not None:
        if not specs and calls:
            fail("function_calls", "expected no function calls, but got: " + ", ".join(c.fn for c in calls))
        elif specs:
            chosen = assign(specs, calls)
            if None in chosen:
                taken = {c for c in chosen if c is not None}
                seen: set[str] = set()
                for spec, c in zip(specs, chosen):
                    if c is None:
                        message = _why_unmet(spec, calls, taken)
                        if message not in seen:
                            seen.add(message)
                            fail("function_calls", message)
            else:
                if expect.ordered:
                    in_time = ordered_assignment(specs, calls)
                    if in_time is None:
                        got = [calls[c].fn for c in sorted(x for x in chosen if x is not None)]
                        want = ["/".join(_names(s)) for s in specs]
                        fail("ordered", f"calls matched but out of order: expected {', '.join(want)}; got {', '.join(got)}",
                             want, got)
                    else:
                        chosen = list(in_time)
                if expect.exclusive:
                    extra = [call.fn for c, call in enumerate(calls) if c not in set(chosen)]
                    if extra:
                        fail("exclusive", "unexpected calls: " + ", ".join(extra))
    if expect.response is not None:
        patterns = getattr(expect.response, "patterns", None)
        for key, operand in expect.response.items():
            if not condition_holds(key, operand, response, patterns):
                fail(f"response.{key}", explain_response(key, operand, response), operand, response)
    return out


def unknown_tools(expect: Any, inventory: frozenset[str] | None, calls: Sequence[Call]) -> list[str]:
    """Names the expectation uses that the agent neither declared nor called, with a suggestion."""
    if inventory is None:
        return []
    known = set(inventory) | {call.fn for call in calls}
    names = list(expect.forbid) + [n for spec in (expect.function_calls or []) for n in _names(spec)]
    problems = []
    for name in dict.fromkeys(names):
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" — did you mean '{close[0]}'?" if close else ""
            problems.append(f"tool '{name}' is neither declared by the agent nor called{hint}")
    return problems


@dataclass(slots=True)
class TurnExpectation:
    """A check on one agent turn's DataBus slot (``{response, calls, inventory, problems}``)."""

    slot: str
    expect: Any
    line: int | None = None
    label: str = ""

    @property
    def reads(self) -> frozenset[str]:
        return frozenset([self.slot])

    def describe(self) -> str:
        return self.label or f"expectations of {self.slot}"

    async def evaluate(self, bus: Any, ctx: Any) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: Any) -> CheckResult:
        turn = bus.get(self.slot)
        if turn is MISSING or not isinstance(turn, Mapping):
            return CheckResult(error=f"{self.describe()}: the turn produced nothing to check")
        if turn.get("error"):
            return CheckResult(error=str(turn["error"]))
        if self.expect is None:  # a scene-setting turn: it only has to get an answer
            return CheckResult()
        calls = [Call.of(c) for c in turn.get("calls") or []]
        failures = evaluate_expect(self.expect, calls, str(turn.get("response") or ""), self.line)
        if failures:
            return CheckResult(failures=failures)
        unknown = unknown_tools(self.expect, turn.get("inventory"), calls)
        if unknown:
            return CheckResult(error="; ".join(unknown))
        return CheckResult()
