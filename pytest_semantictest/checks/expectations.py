"""highbar expectations over one turn: function calls (matched one-to-one), order,
exclusivity, forbidden tools and the response text."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..json_types import JSONValue
from ..model import CheckResult, Failure
from ..paths import MISSING
from .expectation_types import CallExpectation, Expectation
from .matchers import condition_holds, explain_response, subset_matches, value_matches

if TYPE_CHECKING:
    from ..databus import DataBus
    from ..run_context import RunningAgent
    from .run import CheckRun


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


def _names(spec: CallExpectation) -> tuple[str, ...]:
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
        call.fn in _names(spec)
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
    names = _names(spec)
    return f"'{names[0]}'" if len(names) == 1 else "one of (" + " or ".join(f"'{n}'" for n in names) + ")"


def _why_unmet(spec: CallExpectation, calls: Sequence[Call], taken: set[int]) -> str:
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
        want = (
            "a failure"
            if spec.error is True
            else "no failure"
            if spec.error is False
            else f"a failure matching {dict(spec.error)}"
        )
        parts.append(f"error: expected {want}, got {call.error or 'none'}")
    return f"'{call.fn}' was called but did not match: " + "; ".join(parts)


def evaluate_expect(  # noqa: C901
    expect: Expectation, calls: Sequence[Call], response: str, line: int | None = None
) -> list[Failure]:
    """Every failed condition of one ``expect`` block, as failures."""
    out: list[Failure] = []

    def fail(check: str, message: str, expected: JSONValue = None, actual: JSONValue = None) -> None:
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
                        fail(
                            "ordered",
                            f"calls matched but out of order: expected {', '.join(want)}; got {', '.join(got)}",
                            want,
                            got,
                        )
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


def unobservable(
    expect: Expectation, inventory: frozenset[str] | None, seen: Sequence[str]
) -> tuple[str, Expectation] | None:
    """Why calls the expectation names cannot be seen, and the expectation without them; or None.

    highbar's rule: each forbidden name, and each expected call (any of its names: one group), must
    be one the agent declared or one seen in its records. Nothing declared: nothing to tell (None).
    """
    if inventory is None:
        return None
    known = sorted(set(inventory) | set(seen))
    groups = [(name,) for name in expect.forbid] + [_names(spec) for spec in expect.function_calls or []]
    missing: list[str] = []
    hidden: set[str] = set()
    for group in groups:
        if any(name in known for name in group):
            continue
        hidden.update(group)
        listed = " or ".join(f"'{name}'" for name in group)
        close = next((m[0] for name in group if (m := difflib.get_close_matches(name, known, n=1))), None)
        missing.append(f"{listed} (did you mean '{close}'?)" if close else listed)
    if not missing:
        return None
    message = (
        f"cannot see calls to {', '.join(dict.fromkeys(missing))}: the agent records {', '.join(known) or 'no tools'}. "
        "If the agent has no such tool, remove it from the spec; if it has, record it (declare it in the trace file)"
    )
    calls = [spec for spec in expect.function_calls or [] if not set(_names(spec)) <= hidden]
    observable = replace(
        expect,
        forbid=tuple(name for name in expect.forbid if name not in hidden),
        # entries dropped from a list must not leave [], which means "no call at all"
        function_calls=calls if calls or expect.function_calls == [] else None,
    )
    return message, observable


def _fns(calls: Sequence[Call]) -> str:
    return ", ".join(dict.fromkeys(call.fn for call in calls))


def _messages(failures: Sequence[Failure]) -> str:
    return "; ".join(f.message for f in failures)


@dataclass(slots=True)
class TurnExpectation:
    """A check on one agent turn's DataBus slot (``{response, calls, untagged, inventory, seen, ...}``).

    ``late`` (the last turn of a test that checks tool calls): when the turn passes, the agent's trace
    is read once more after another ``settle_time``; a call of this execution recorded then re-judges
    the test, as highbar's read after a test's window does.
    """

    slot: str
    expect: Expectation | None
    line: int | None = None
    label: str = ""
    agent: str = ""
    late: bool = False

    @property
    def reads(self) -> frozenset[str]:
        return frozenset([self.slot])

    def describe(self) -> str:
        return self.label or f"expectations of {self.slot}"

    async def evaluate(self, bus: DataBus, ctx: CheckRun) -> CheckResult:
        turn = bus.get(self.slot)
        result = self.judge(turn)
        agents = ctx.agents
        if (
            agents is not None
            and self.expect is not None
            and self.expect.forbid
            and isinstance(turn, Mapping)
            and turn.get("inventory") is None
            and not turn.get("error")
        ):
            agents.get(self.agent).note_undeclared(self.expect.forbid)
        if (
            result.failures
            or result.error
            or not self.late
            or agents is None
            or not isinstance(turn, Mapping)
        ):
            return result
        if self.expect is None or "read_to" not in turn:
            return result
        live = agents.get(self.agent)
        late, untagged = await live.late_window(int(turn["read_to"]), str(turn.get("test_id")))
        calls = [Call.of(c) for c in late]
        result = self.rejudge(turn, calls, [Call.of(c) for c in untagged], live)
        if not result.failures and result.error is None and hasattr(live, "judge_late_calls"):
            live.judge_late_calls(str(turn.get("test_id")), LateJudge(self, turn, calls, self._settle(live)))
        return result

    @staticmethod
    def _settle(live: RunningAgent) -> int:
        return int(live.config.settle_time_ms or 0)

    def rejudge(
        self, turn: Mapping[str, JSONValue], late: list[Call], untagged: list[Call], live: RunningAgent
    ) -> CheckResult:
        """The passed turn judged again with the calls recorded after its window."""
        expect = self.expect
        if expect is None:  # a scene-setting turn: nothing to judge again
            return CheckResult()
        calls = [Call.of(c) for c in turn.get("calls") or []]
        response = str(turn.get("response") or "")
        if late:
            failures = evaluate_expect(expect, [*calls, *late], response, self.line)
            if failures:
                message = late_message(late, failures, self._settle(live))
                return CheckResult(failures=[Failure(check="late call", message=message, line=self.line)])
        if untagged:
            failures = evaluate_expect(expect, [*calls, *late, *untagged], response, self.line)
            if failures:
                return CheckResult(error=untagged_message(untagged, failures))
        return CheckResult()

    def judge(self, turn: JSONValue) -> CheckResult:
        """The turn's verdict on what was read in its window (highbar's order: untagged calls, then
        names that cannot be seen, then the expectation)."""
        if turn is MISSING or not isinstance(turn, Mapping):
            return CheckResult(error=f"{self.describe()}: the turn produced nothing to check")
        if turn.get("error"):
            return CheckResult(error=str(turn["error"]))
        if self.expect is None:  # a scene-setting turn: it only has to get an answer
            return CheckResult()
        calls = [Call.of(c) for c in turn.get("calls") or []]
        untagged = [Call.of(c) for c in turn.get("untagged") or []]
        response = str(turn.get("response") or "")
        failures = evaluate_expect(self.expect, calls, response, self.line)
        if untagged and bool(failures) != bool(evaluate_expect(self.expect, [*calls, *untagged], response)):
            keys = ", ".join(turn.get("correlate_keys") or ["test"])  # highbar names agent.correlate's keys
            return CheckResult(
                error=(
                    f"cannot tell which test made {_fns(untagged)}: no {keys} in its context, and this test "
                    f"{'passes' if failures else 'fails'} with it and {'fails' if failures else 'passes'} without it. "
                    "A call the agent makes off the request needs contextvars.copy_context() to keep the tag; "
                    "hb.record() can also be given it"
                )
            )
        unseen = unobservable(
            self.expect, turn.get("inventory"), [*(turn.get("seen") or ()), *(c.fn for c in calls)]
        )
        if unseen is not None:
            message, observable = unseen
            real = evaluate_expect(observable, calls, response, self.line)
            if not real:
                return CheckResult(error=message)
            return CheckResult(
                failures=[*real, Failure(check="function_calls", message=message, line=self.line)]
            )
        return CheckResult(failures=failures)


def late_message(late: Sequence[Call], failures: Sequence[Failure], settle_ms: int) -> str:
    """highbar's words for a passed test that calls recorded after its window fail."""
    return (
        f"{_fns(late)} was recorded after the test's window closed (settle_time {settle_ms} ms): "
        f"{_messages(failures)}. Raise agent.settle_time to read it in time"
    )


def untagged_message(untagged: Sequence[Call], failures: Sequence[Failure]) -> str:
    """highbar's words for a passed test that untagged calls read after its window would fail."""
    return (
        f"{_fns(untagged)} arrived after this test's window with no context saying which test made it, and "
        f"would fail it ({_messages(failures)}). A call the agent makes off the request needs "
        "contextvars.copy_context() to keep the tag"
    )


@dataclass
class LateJudge:
    """A passed execution judged again on the calls tagged with it that are read later still, while
    another test runs or at the end (highbar's "now fails"): what it was judged on, plus them."""

    check: TurnExpectation
    turn: Mapping[str, JSONValue]
    late: list[Call]
    settle_ms: int

    def __call__(self, calls: Sequence[object]) -> str | None:
        """Its own late calls: the failure's message, or None while the execution still passes."""
        new = [Call.of(c) for c in calls]
        self.late += new
        failures = self._failures([])
        return late_message(new, failures, self.settle_ms) if failures else None

    def suspect(self, calls: Sequence[object]) -> str | None:
        """Untagged calls that may be its own: the error's message if they would fail it, else None."""
        untagged = [Call.of(c) for c in calls]
        failures = self._failures(untagged)
        return untagged_message(untagged, failures) if failures else None

    def _failures(self, extra: list[Call]) -> list[Failure]:
        if self.check.expect is None:  # never made for a scene-setting turn
            return []
        judged = [Call.of(c) for c in self.turn.get("calls") or []] + self.late + extra
        return evaluate_expect(
            self.check.expect, judged, str(self.turn.get("response") or ""), self.check.line
        )
