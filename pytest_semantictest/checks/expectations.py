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
from .call_matching import Call, assign, call_names, ordered_assignment, why_unmet
from .expectation_types import CallExpectation, Expectation
from .matchers import condition_holds, explain_response

if TYPE_CHECKING:
    from ..databus import DataBus
    from ..run_context import RunningAgent
    from .run import CheckRun


def evaluate_expect(
    expect: Expectation, calls: Sequence[Call], response: str, line: int | None = None
) -> list[Failure]:
    """Every failed condition of one ``expect`` block, as failures."""
    return [
        *_forbidden(expect.forbid, calls, line),
        *_function_call_failures(expect, calls, line),
        *_response_failures(expect.response, response, line),
    ]


def _forbidden(forbid: Sequence[str], calls: Sequence[Call], line: int | None) -> list[Failure]:
    called = {call.fn for call in calls}
    return [
        Failure(check="forbid", message=f"forbidden tool '{name}' was called", line=line)
        for name in forbid
        if name in called
    ]


def _function_call_failures(expect: Expectation, calls: Sequence[Call], line: int | None) -> list[Failure]:
    """``function_calls``: each matched by a call of its own, then ``ordered`` and ``exclusive``."""
    specs = expect.function_calls
    if specs is None:
        return []
    if not specs:
        if not calls:
            return []
        message = "expected no function calls, but got: " + ", ".join(c.fn for c in calls)
        return [Failure(check="function_calls", message=message, line=line)]
    chosen: Sequence[int | None] = assign(specs, calls)
    if None in chosen:
        return _unmet(specs, calls, chosen, line)
    failures = []
    if expect.ordered:
        in_time = ordered_assignment(specs, calls)
        if in_time is None:
            failures.append(_out_of_order(specs, calls, chosen, line))
        else:
            chosen = in_time
    if expect.exclusive:
        failures += _extra_calls(calls, chosen, line)
    return failures


def _unmet(
    specs: Sequence[CallExpectation], calls: Sequence[Call], chosen: Sequence[int | None], line: int | None
) -> list[Failure]:
    """A failure for each expected call no call serves (one per distinct reason)."""
    taken = {c for c in chosen if c is not None}
    reasons = [why_unmet(spec, calls, taken) for spec, c in zip(specs, chosen) if c is None]
    return [Failure(check="function_calls", message=reason, line=line) for reason in dict.fromkeys(reasons)]


def _out_of_order(
    specs: Sequence[CallExpectation], calls: Sequence[Call], chosen: Sequence[int | None], line: int | None
) -> Failure:
    got = [calls[c].fn for c in sorted(x for x in chosen if x is not None)]
    want = ["/".join(call_names(s)) for s in specs]
    message = f"calls matched but out of order: expected {', '.join(want)}; got {', '.join(got)}"
    return Failure(check="ordered", message=message, line=line, expected=want, actual=got)


def _extra_calls(calls: Sequence[Call], chosen: Sequence[int | None], line: int | None) -> list[Failure]:
    """``exclusive``: every call not serving an expectation."""
    extra = [call.fn for c, call in enumerate(calls) if c not in set(chosen)]
    return (
        [Failure(check="exclusive", message="unexpected calls: " + ", ".join(extra), line=line)]
        if extra
        else []
    )


def _response_failures(
    expected: Mapping[str, JSONValue] | None, response: str, line: int | None
) -> list[Failure]:
    if expected is None:
        return []
    patterns = getattr(expected, "patterns", None)
    return [
        Failure(
            check=f"response.{key}",
            message=explain_response(key, operand, response),
            line=line,
            expected=operand,
            actual=response,
        )
        for key, operand in expected.items()
        if not condition_holds(key, operand, response, patterns)
    ]


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
    unseen = [group for group in _name_groups(expect) if not any(name in known for name in group)]
    if not unseen:
        return None
    missing = [_unseen_label(group, known) for group in unseen]
    message = (
        f"cannot see calls to {', '.join(dict.fromkeys(missing))}: the agent records {', '.join(known) or 'no tools'}. "
        "If the agent has no such tool, remove it from the spec; if it has, record it (declare it in the trace file)"
    )
    return message, _without_names(expect, {name for group in unseen for name in group})


def _name_groups(expect: Expectation) -> list[tuple[str, ...]]:
    """Each forbidden name alone, and each expected call's names as one group (any of them will do)."""
    return [(name,) for name in expect.forbid] + [call_names(spec) for spec in expect.function_calls or []]


def _unseen_label(group: Sequence[str], known: list[str]) -> str:
    """The names of one group that cannot be seen, with the closest name that can, if one is close."""
    listed = " or ".join(f"'{name}'" for name in group)
    close = next((m[0] for name in group if (m := difflib.get_close_matches(name, known, n=1))), None)
    return f"{listed} (did you mean '{close}'?)" if close else listed


def _without_names(expect: Expectation, hidden: set[str]) -> Expectation:
    """``expect`` without the forbidden names and expected calls that cannot be seen."""
    calls = [spec for spec in expect.function_calls or [] if not set(call_names(spec)) <= hidden]
    return replace(
        expect,
        forbid=tuple(name for name in expect.forbid if name not in hidden),
        # entries dropped from a list must not leave [], which means "no call at all"
        function_calls=calls if calls or expect.function_calls == [] else None,
    )


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
        if agents is None or not isinstance(turn, Mapping):
            return result
        undeclared = self._forbidden_undeclared(turn)
        if undeclared:
            agents.get(self.agent).note_undeclared(undeclared)
        if result.failures or result.error or not self.late or self.expect is None or "read_to" not in turn:
            return result
        return await self._judge_late(turn, agents.get(self.agent))

    def _forbidden_undeclared(self, turn: Mapping[str, JSONValue]) -> tuple[str, ...]:
        """The forbidden names of a turn whose agent declared no tools (to tell at the end of the run)."""
        if self.expect is None or turn.get("inventory") is not None or turn.get("error"):
            return ()
        return self.expect.forbid

    async def _judge_late(self, turn: Mapping[str, JSONValue], live: RunningAgent) -> CheckResult:
        """The passed last turn judged again with the calls read after one more ``settle_time``; when it
        still passes, the agent judges it again on calls read later still (:class:`LateJudge`)."""
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
        calls = _calls(turn, "calls")
        response = _response(turn)
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
        calls = _calls(turn, "calls")
        untagged = _calls(turn, "untagged")
        response = _response(turn)
        failures = evaluate_expect(self.expect, calls, response, self.line)
        if untagged and bool(failures) != bool(evaluate_expect(self.expect, [*calls, *untagged], response)):
            return CheckResult(error=_untold_message(turn, untagged, failures))
        unseen = unobservable(self.expect, turn.get("inventory"), _seen_names(turn, calls))
        if unseen is None:
            return CheckResult(failures=failures)
        message, observable = unseen
        real = evaluate_expect(observable, calls, response, self.line)
        if not real:
            return CheckResult(error=message)
        return CheckResult(failures=[*real, Failure(check="function_calls", message=message, line=self.line)])


def _calls(turn: Mapping[str, JSONValue], key: str) -> list[Call]:
    """The turn's calls under ``key`` (``calls``, ``untagged``), as the checks see them."""
    return [Call.of(c) for c in turn.get(key) or []]


def _seen_names(turn: Mapping[str, JSONValue], calls: Sequence[Call]) -> list[str]:
    """The tool names seen in the agent's records: those it listed, and this turn's calls."""
    return [*(turn.get("seen") or ()), *(c.fn for c in calls)]


def _response(turn: Mapping[str, JSONValue]) -> str:
    return str(turn.get("response") or "")


def _untold_message(
    turn: Mapping[str, JSONValue], untagged: Sequence[Call], failures: Sequence[Failure]
) -> str:
    """highbar's words for untagged calls that decide the verdict: with them it flips."""
    keys = ", ".join(turn.get("correlate_keys") or ["test"])  # highbar names agent.correlate's keys
    return (
        f"cannot tell which test made {_fns(untagged)}: no {keys} in its context, and this test "
        f"{'passes' if failures else 'fails'} with it and {'fails' if failures else 'passes'} without it. "
        "A call the agent makes off the request needs contextvars.copy_context() to keep the tag; "
        "hb.record() can also be given it"
    )


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
        judged = _calls(self.turn, "calls") + self.late + extra
        return evaluate_expect(self.check.expect, judged, _response(self.turn), self.check.line)
