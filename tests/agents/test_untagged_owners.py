"""Who an untagged late call may belong to (``LiveAgent._owners_before``), whatever the order in which tests
running at once started and read: highbar's "the test before the one whose window reads it"."""

from __future__ import annotations

from pytest_semantictest.agents.config import AgentConfig
from pytest_semantictest.agents.live import LiveAgent
from pytest_semantictest.agents.shared import AgentHandle
from pytest_semantictest.agents.traces import ToolCall, TraceBatch


class Judge:
    """A passed test's late judge: records the untagged calls it is shown; ``fails`` says whether they fail it."""

    def __init__(self, fails: bool) -> None:
        self.fails = fails
        self.shown: list[ToolCall] = []

    def __call__(self, calls: list[ToolCall]) -> str | None:
        return None

    def suspect(self, calls: list[ToolCall]) -> str | None:
        self.shown += calls
        return "would fail it" if self.fails else None


def _agent() -> LiveAgent:
    config = AgentConfig(endpoint="http://127.0.0.1:9/chat")
    return LiveAgent(config, AgentHandle(config.endpoint, None, None, None, False))


def _start(live: LiveAgent, test: str) -> None:
    """``test``'s turn begins: registered (its "test before" fixed now) and in progress."""
    live._open[test] += 1
    live._correlation(f"message of {test}", test, test, None, False)


def _close(live: LiveAgent, test: str, judge: Judge) -> None:
    live._open[test] -= 1
    live.judge_late_calls(test, judge)


UNTAGGED = ToolCall(fn="get_order", args={"order_id": "late"}, started_at=1.0, ended_at=1.0)


def test_one_by_one_the_call_goes_to_the_test_before_the_reader() -> None:
    live, first, second = _agent(), Judge(fails=True), Judge(fails=True)
    _start(live, "t1")
    _close(live, "t1", first)
    _start(live, "t2")
    _close(live, "t2", second)
    _start(live, "t3")
    live._suspect(TraceBatch(tools=[UNTAGGED]), "t3")
    assert (first.shown, second.shown) == ([], [UNTAGGED])
    assert [(test, outcome) for test, outcome, _ in live.late_failures] == [("t2", "error")]


def test_a_test_that_started_late_reads_first_and_the_first_test_still_gets_the_call() -> None:
    """t2 and t3 start once t1's turn is over; t4 only after t3 closed (no slot was free). t4 reads the
    untagged call first: t1 (before t2, still in its turn) is judged with it as well as t3, and the ERROR is
    t1's, as when t2 reads first."""
    for reader in ("t4", "t2"):
        live, judges = _agent(), {name: Judge(fails=name == "t1") for name in ("t1", "t3")}
        _start(live, "t1")
        _close(live, "t1", judges["t1"])
        _start(live, "t2")
        _start(live, "t3")
        _close(live, "t3", judges["t3"])
        _start(live, "t4")
        live._suspect(TraceBatch(tools=[UNTAGGED]), reader)
        assert judges["t1"].shown == [UNTAGGED], reader
        assert [(test, outcome) for test, outcome, _ in live.late_failures] == [("t1", "error")], reader
        live._suspect(TraceBatch(tools=[UNTAGGED]), "t2" if reader == "t4" else "t4")  # the other reader:
        assert len(live.late_failures) == 1 and judges["t3"].shown in ([], [UNTAGGED])  # looked at once
