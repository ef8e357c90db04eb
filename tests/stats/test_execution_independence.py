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
        return Verdict(outcomes[index], duration_ms=index + 1.0)  # (the index, for the checks below)

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
        # the runs that finished after the decision, in planned order (those cancelled are gaps): each
        # with its own outcome (the fake run's duration is its index + 1)
        beyond = [int(r.duration_ms) - 1 for r in verdict.beyond]
        assert beyond == sorted(beyond) and all(i >= counted for i in beyond)
        assert [r.outcome for r in verdict.beyond] == [outcomes[i] for i in beyond]
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
            assert verdict.decision is not None and test.decide(passed, n).value in verdict.decision
        # the decision text names the runs made beyond the decision at 10, so compare the rest
        assert found[0][:3] == found[1][:3], (trial, found)


CONFTEST = '''
import asyncio, random
import pytest_semantictest.engine.repeat as repeat
from pytest_semantictest.model import Outcome, Verdict

async def run_case(case, ctx, context, parent, index):
    """Run ``index`` of a case: an outcome fixed by (case, index), after a random wait."""
    await asyncio.sleep(random.random() * 0.003)
    rate = int(case.id[1:]) / 20
    passed = random.Random(f"{case.id}:{index}").random() < 0.55 + rate
    return Verdict(Outcome.PASSED if passed else Outcome.FAILED, duration_ms=1.0)

_before = repeat.run_case

def pytest_configure(config):
    repeat.run_case = run_case

def pytest_unconfigure(config):  # the run may be in this process: leave the engine as it was
    repeat.run_case = _before
'''


def test_the_same_outcomes_give_the_same_results_file_at_concurrency_1_and_under_xdist(
    pytester: pytest.Pytester,
) -> None:
    """Through pytest: 16 tests (8 sequential decisions, 8 ``runs``/``minPass``), each run's outcome a
    function of the test and the run's index; one process one run at a time, and two xdist workers
    ten runs at a time, write the same verdicts, k and n."""
    import json

    from tests.helpers import run_pytest

    pytester.makeconftest(CONFTEST)
    tests = [
        {
            "id": f"t{i}",
            **({"passRate": {"atLeast": 0.8, "maxRuns": 60}} if i % 2 else {"runs": 10, "minPass": 8}),
            "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "d"}],
            "assertions": {"d": 1},
        }
        for i in range(16)
    ]
    pytester.makefile(".json", s=json.dumps({"name": "s", "tests": tests}))

    def verdicts(*args: str) -> dict[str, tuple[str, list[str], str]]:
        run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-results=r.jsonl", *args)
        records = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
        return {
            r["id"]: (r["outcome"], r["runs"], (r["pass_rate"].get("decision") or "").split(";")[0])
            for r in records
        }

    alone = verdicts("-p", "no:xdist", "--semantictest-concurrency=1")
    spread = verdicts("-n", "2", "--semantictest-concurrency=10")
    records = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
    assert any(r.get("runs_not_counted") for r in records)  # batches of 10 finish past the decision
    assert len(alone) == 16 and {o for o, _, _ in alone.values()} == {"passed", "failed"}, alone
    assert alone == spread


def test_an_inconclusive_decision_follows_the_asked_policy(pytester: pytest.Pytester) -> None:
    """10 of 12 runs passed, a budget of 12: inconclusive (between 8/12 and 11/12). Red by default;
    skipped, saying why, with --semantictest-inconclusive=skip; a warning at collection either way."""
    import json

    from tests.helpers import run_pytest

    pytester.makeconftest(
        "import pytest_semantictest.engine.repeat as repeat\n"
        "from pytest_semantictest.model import Outcome, Verdict\n"
        "async def run_case(case, ctx, context, parent, index):\n"
        "    return Verdict(Outcome.FAILED if index in (3, 7) else Outcome.PASSED)\n"
        "_before = repeat.run_case\n"
        "def pytest_configure(config):\n"
        "    repeat.run_case = run_case\n"
        "def pytest_unconfigure(config):  # an in-process run: leave the engine as it was\n"
        "    repeat.run_case = _before\n"
    )
    test = {
        "id": "t",
        "passRate": {"atLeast": 0.8, "maxRuns": 12},
        "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "d"}],
        "assertions": {"d": 1},
    }
    pytester.makefile(".json", s=json.dumps({"name": "s", "tests": [test]}))
    red = run_pytest(pytester, "-p", "no:cacheprovider", "-p", "no:xdist")
    red.assert_outcomes(failed=1)
    red.stdout.fnmatch_lines(
        ["*pass rate: inconclusive: 10/12 runs passed*", "*at least 176 runs are needed*"]
    )
    skipped = run_pytest(
        pytester, "-p", "no:cacheprovider", "-p", "no:xdist", "-rs", "--semantictest-inconclusive=skip"
    )
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(
        ["*pass rate: inconclusive: 10/12 runs passed*(--semantictest-inconclusive=skip)*"]
    )
    bad = run_pytest(pytester, "-p", "no:cacheprovider", "-p", "no:xdist", "--semantictest-inconclusive=pass")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
