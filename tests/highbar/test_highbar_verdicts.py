"""highbar's verdict rules on one turn, without an agent: names that cannot be seen, untagged
calls next to tagged records, late calls, and when repeated runs may overlap."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from pytest_semantictest.agents.correlate import RUNS_MAY_OVERLAP
from pytest_semantictest.checks.expectations import TurnExpectation, unobservable
from pytest_semantictest.engine.batching import runs_may_overlap
from pytest_semantictest.formats.highbar import load_highbar_text
from pytest_semantictest.formats.highbar.spec import ExpectSpec
from pytest_semantictest.model import Outcome, Verdict
from pytest_semantictest.run_context import AgentPoolView, RunContext
from tests.helpers import bus_of

INVENTORY = frozenset({"get_order", "cancel_order"})


def expect(yaml: str) -> ExpectSpec:
    text = (
        'agent:\n  start: "python a.py"\n  endpoint: "http://127.0.0.1:9/chat"\n'
        f"suites:\n  - tests:\n      - trigger: hi\n        expect: {yaml}\n"
    )
    found = load_highbar_text(text, Path("x.highbar.yaml"), {}).suites[0].tests[0].expect
    assert found is not None
    return found


def call(fn: str, **args: Any) -> dict[str, Any]:
    return {
        "fn": fn,
        "args": args,
        "result": None,
        "error": None,
        "started_at": 1.0,
        "ended_at": 1.0,
        "context": {},
    }


def judge(spec: ExpectSpec, calls: list[dict[str, Any]], **turn: Any) -> Any:
    slot = {"response": "ok", "calls": calls, "inventory": INVENTORY, "seen": [], **turn}
    return TurnExpectation("turn1", spec).judge(slot)


def test_names_of_one_expected_call_are_one_group() -> None:
    assert (
        unobservable(expect("{function_calls: [{name: [get_order, search_products]}]}"), INVENTORY, [])
        is None
    )
    result = judge(expect("{function_calls: [{name: [lookup_order, get_order]}]}"), [call("get_order")])
    assert not result.failures and not result.error


def test_a_name_never_declared_nor_called_is_an_error_unless_the_rest_fails() -> None:
    typo = judge(expect("{function_calls: [{name: get_ordr}]}"), [call("get_order")])
    assert not typo.failures
    assert typo.error.startswith("cannot see calls to 'get_ordr' (did you mean 'get_order'?)")
    with_failure = judge(
        expect("{function_calls: [{name: get_ordr}, {name: cancel_order}]}"), [call("get_order")]
    )
    assert [f.check for f in with_failure.failures] == ["function_calls", "function_calls"]
    seen = judge(expect("{forbid: [refund]}"), [], seen=["refund"])  # seen in an earlier test's records
    assert seen.failures == [] and seen.error is None
    assert unobservable(expect("{forbid: [refund]}"), None, []) is None  # nothing declared: nothing to tell


def test_an_untagged_call_that_decides_the_verdict_is_an_error() -> None:
    untagged = [call("get_order")]
    result = judge(expect("{function_calls: [{name: get_order}]}"), [], untagged=untagged)
    assert result.error.startswith(
        "cannot tell which test made get_order: no test in its context, "
        "and this test passes with it and fails without it"
    )
    guardrail = judge(expect("{function_calls: []}"), [], untagged=untagged)
    assert "fails with it and passes without it" in guardrail.error
    reply_only = judge(expect('{response: {contains: "ok"}}'), [], untagged=untagged)
    assert not reply_only.failures and reply_only.error is None


class _Live:
    class config:  # noqa: N801
        settle_time_ms = 250

    def __init__(self, late: list[dict[str, Any]], untagged: list[dict[str, Any]]) -> None:
        self.result = (late, untagged)
        self.asked: list[tuple[int, str]] = []

    async def late_window(self, read_to: int, test_id: str) -> Any:
        self.asked.append((read_to, test_id))
        return self.result


class _Pool:
    """The agent pool, holding one agent whose late trace records the test sets."""

    def __init__(self, live: _Live) -> None:
        self.live = live

    def get(self, key: str) -> _Live:
        assert key == "agent-key"
        return self.live


def _with_agent(live: _Live) -> RunContext:
    return RunContext(env={}, agents=cast(AgentPoolView, _Pool(live)))


def late_verdict(
    spec: ExpectSpec,
    late: list[dict[str, Any]],
    untagged: list[dict[str, Any]] | None = None,
    calls: list[dict[str, Any]] | None = None,
) -> Any:
    live = _Live(late, untagged or [])
    check = TurnExpectation("turn1", spec, agent="agent-key", late=True)
    bus = {
        "turn1": {
            "response": "ok",
            "calls": calls or [],
            "inventory": INVENTORY,
            "seen": [],
            "read_to": 42,
            "test_id": "t1",
        }
    }
    result = asyncio.run(check.evaluate(bus_of(bus), _with_agent(live)))
    assert live.asked == [(42, "t1")]  # read once more only because the turn passed
    return result


def test_a_late_tagged_call_fails_the_test_and_a_late_untagged_one_makes_it_an_error() -> None:
    failed = late_verdict(expect("{function_calls: []}"), [call("get_order")])
    assert failed.failures[0].message.startswith(
        "get_order was recorded after the test's window closed (settle_time 250 ms): expected no function calls"
    )
    unverified = late_verdict(expect("{function_calls: []}"), [], [call("cancel_order")])
    assert unverified.error.startswith("cancel_order arrived after this test's window with no context")
    harmless = late_verdict(
        expect("{function_calls: [{name: get_order}]}"), [call("get_order")], calls=[call("get_order")]
    )
    assert not harmless.failures and harmless.error is None


def test_runs_overlap_only_when_every_record_was_attributed() -> None:
    tagged = Verdict(Outcome.PASSED, bus={"turn1": {RUNS_MAY_OVERLAP: True}, "x": 1})
    untagged = Verdict(
        Outcome.PASSED, bus={"turn1": {RUNS_MAY_OVERLAP: True}, "turn2": {RUNS_MAY_OVERLAP: False}}
    )
    assert runs_may_overlap(tagged) and runs_may_overlap(Verdict(Outcome.PASSED))
    assert not runs_may_overlap(untagged) and not runs_may_overlap(tagged, untagged)


def test_a_failed_turn_is_not_read_again() -> None:
    live = _Live([call("get_order")], [])
    check = TurnExpectation(
        "turn1", expect("{function_calls: [{name: cancel_order}]}"), agent="agent-key", late=True
    )
    bus = {
        "turn1": {
            "response": "ok",
            "calls": [],
            "inventory": INVENTORY,
            "seen": [],
            "read_to": 1,
            "test_id": "t",
        }
    }
    assert asyncio.run(check.evaluate(bus_of(bus), _with_agent(live))).failures and live.asked == []
