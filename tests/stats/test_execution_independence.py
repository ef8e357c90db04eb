"""A verdict depends on the runs' outcomes only: the same outcome sequence gives the same outcome, k
and n at concurrency 1 and 10, whichever order the runs finish in (each run here sleeps a random
time, so at concurrency 10 later runs often finish first). Both stopping rules: ``runs``/``minPass``
stopping early, and the sequential pass-rate decision."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping

import pytest

from pytest_semantictest.engine import repeat
from pytest_semantictest.json_types import JSONValue
from pytest_semantictest.model import Case, Outcome, Repetition, Verdict
from pytest_semantictest.run_context import RunContext
from pytest_semantictest.stats import PassRateTest


def _fake_runs(monkeypatch: pytest.MonkeyPatch, outcomes: list[Outcome], rng: random.Random) -> list[int]:
    """``run_case`` replaced: run ``i`` gets ``outcomes[i]`` after a random short sleep; returns the
    list of run indices that were started."""
    started: list[int] = []

    async def run_case(
        case: Case, ctx: RunContext, context: Mapping[str, JSONValue], parent: object, index: int
    ) -> Verdict:
        started.append(index)
        await asyncio.sleep(rng.random() * 0.002)
        return Verdict(outcomes[index], duration_ms=1.0)

    monkeypatch.setattr(repeat, "run_case", run_case)
    return started


def _verdict(case: Case, concurrency: int) -> Verdict:
    return asyncio.run(repeat.run_repeated(case, RunContext(), {}, None, concurrency))


def _summary(verdict: Verdict) -> tuple[str, int, int, str | None]:
    runs = verdict.runs
    return verdict.outcome.value, sum(r.outcome is Outcome.PASSED for r in runs), len(runs), verdict.decision


@pytest.mark.parametrize("seed", range(40))
def test_runs_and_min_pass_stop_on_the_first_runs_at_any_concurrency(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    outcomes = [Outcome.PASSED if rng.random() < 0.75 else Outcome.FAILED for _ in range(10)]
    case = Case("t", "t", [], [], repetition=Repetition(runs=10, min_pass=8))
    seen = set()
    for concurrency in (1, 10, 1, 10):
        _fake_runs(monkeypatch, outcomes, random.Random(seed * 7 + concurrency))
        verdict = _verdict(case, concurrency)
        seen.add(_summary(verdict))
        counted = len(verdict.runs)
        assert [r.outcome for r in verdict.runs] == outcomes[:counted]
        assert all(r.outcome is o for r, o in zip(verdict.beyond, outcomes[counted:]))
    assert len(seen) == 1, seen
    outcome, passed, n, _ = seen.pop()
    # the shortest prefix that decides: 8 passes or 3 failures among the first n
    failed = n - passed
    assert passed == 8 or failed == 3
    assert outcome == ("passed" if passed == 8 else "failed")


@pytest.mark.parametrize("rate", [0.7, 0.8, 0.9])
def test_the_sequential_decision_is_the_same_at_concurrency_1_and_10(
    monkeypatch: pytest.MonkeyPatch, rate: float
) -> None:
    test = PassRateTest(0.8, max_runs=60)
    case = Case("t", "t", [], [], repetition=Repetition(60, decision=test))
    rng = random.Random(int(rate * 100))
    for trial in range(15):
        outcomes = [Outcome.PASSED if rng.random() < rate else Outcome.FAILED for _ in range(60)]
        found = []
        for concurrency in (1, 10):
            _fake_runs(monkeypatch, outcomes, random.Random(trial + concurrency))
            verdict = _verdict(case, concurrency)
            found.append(_summary(verdict))
            passed, n = found[-1][1], found[-1][2]
            assert test.decide(passed, n).value in verdict.decision  # type: ignore[operator]
        # the decision text names the runs made beyond the decision at 10, so compare the rest
        assert found[0][:3] == found[1][:3], (trial, found)
