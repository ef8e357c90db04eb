"""The sequential pass-rate decision, end to end: a local agent that passes with a known probability
(seeded), specs that ask for the decision, and the outcomes and run counts the simulation predicts;
plus the rule's own edges (never a pass for an inconclusive run, the spellings and their mistakes)."""

from __future__ import annotations

import json
import math
import random
import statistics
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pytest_semantictest.stats import Decision, PassRateTest, fixed_runs, simulate, wilson
from tests.helpers import loopback_server, run_pytest

pytest_plugins = ["pytester"]


class _Coin(BaseHTTPRequestHandler):
    """``GET /<p>``: 200 with probability ``p``, else 500 (one seeded generator for the server)."""

    protocol_version = "HTTP/1.1"  # keep-alive: a few thousand requests

    rng = random.Random(11)
    lock = threading.Lock()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        with self.lock:
            ok = self.rng.random() < float(self.path.strip("/").split("?")[0])
        self.send_response(200 if ok else 500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def coin() -> Iterator[str]:
    with loopback_server(_Coin) as url:
        yield url


def _suite(url: str, rate: float, count: int, **extra: object) -> str:
    return json.dumps(
        {
            "name": f"coin {rate}",
            "tests": [
                {
                    "id": f"t{i}",
                    "passRate": {"atLeast": 0.8, **extra},
                    "pipeline": [
                        {
                            "block": "HttpRequest",
                            "input": {"url": f"{url}/{rate}?i={i}", "method": "GET"},
                            "output": "r",
                        }
                    ],
                    "assertions": {"r.status": 200},
                }
                for i in range(count)
            ],
        }
    )


def _simulated(rate: float, batch: int, tests: int) -> tuple[float, float]:
    """(pass share, mean runs) of the same procedure, simulated."""
    found = simulate(PassRateTest(0.8), rate, tests, batch, random.Random(5))
    return found["pass"], found["mean_runs"]


@pytest.mark.parametrize(("rate", "count"), [(0.5, 60), (0.95, 30)])
def test_a_local_agent_gets_the_simulated_outcomes_and_run_counts(
    pytester: pytest.Pytester, coin: str, rate: float, count: int
) -> None:
    (pytester.path / "coin.json").write_text(_suite(coin, rate, count))
    # One item at a time: the runs of one test in batches of 5, as simulated. With the look-ahead's 16
    # items at once, 80 requests overlapped and the client's keep-alive pool (20) dropped most
    # connections: a new connection (and server thread) nearly every run, and each request scanned
    # some 80 pooled connections; twice this test's CPU. (Look-ahead items with sequential decisions:
    # tests/stats/test_execution_independence.py.)
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-results=r.jsonl",
        "--semantictest-runs-at-once=5",
        "--semantictest-items-at-once=1",
    )
    records = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
    assert len(records) == count, result.stdout.str()[-2000:]
    passed = sum(r["outcome"] == "passed" for r in records) / count
    mean_runs = statistics.mean(len(r["runs"]) for r in records)
    expected_pass, expected_runs = _simulated(rate, 5, 4000)
    assert abs(passed - expected_pass) <= 0.05, (passed, expected_pass)
    assert abs(mean_runs - expected_runs) <= 0.25 * expected_runs, (mean_runs, expected_runs)
    assert mean_runs < fixed_runs(PassRateTest(0.8)) / 2


def test_an_exhausted_budget_is_an_inconclusive_failure_never_a_pass(
    pytester: pytest.Pytester, coin: str
) -> None:
    """10 of 12 runs passed: a 12-run budget cannot decide (between 8/12 and 11/12): it FAILS, saying
    so and why. The runs' outcomes are fixed (the first twelve of a coin that fails runs 3 and 7)."""
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
    (pytester.path / "coin.json").write_text(_suite(coin, 0.8, 1, maxRuns=12))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*pass rate: inconclusive: 10/12 runs passed (95% CS *); pass rate >= 0.8 (SPRT: "
            "wrong pass <= 0.05 at p <= 0.75, wrong fail <= 0.05 at p >= 0.85, at most 12 runs; "
            "inconclusive possible: 176 runs would decide every test): "
            "the budget of runs was spent before the pass rate was shown to be above or below "
            "the threshold*"
        ]
    )
    result.stdout.fnmatch_lines(
        ["*t0: pass rate: a budget of 12 runs is too small *: at least 176 runs are needed*"]
    )


def test_the_run_can_ask_for_the_decision_on_every_test(pytester: pytest.Pytester, coin: str) -> None:
    (pytester.path / "coin.json").write_text(
        json.dumps(
            {
                "name": "c",
                "tests": [
                    {
                        "id": "good",
                        "pipeline": [
                            {
                                "block": "HttpRequest",
                                "input": {"url": f"{coin}/1.0", "method": "GET"},
                                "output": "r",
                            }
                        ],
                        "assertions": {"r.status": 200},
                    },
                    {
                        "id": "bad",
                        "pipeline": [
                            {
                                "block": "HttpRequest",
                                "input": {"url": f"{coin}/0.0", "method": "GET"},
                                "output": "r",
                            }
                        ],
                        "assertions": {"r.status": 200},
                    },
                ],
            }
        )
    )
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-pass-rate=0.9",
        "--semantictest-pass-rate-confidence=0.9",
        "--semantictest-results=r.jsonl",
    )
    result.assert_outcomes(passed=1, failed=1)
    runs = {
        r["name"]: r["runs"] for r in map(json.loads, (pytester.path / "r.jsonl").read_text().splitlines())
    }
    good = PassRateTest(0.9, 0.1, 0.1)
    first = next(n for n in range(1, 200) if good.decide(n, n) is Decision.PASS)
    assert len(runs["good"]) == first  # counted run by run; the rest of the batch is not counted
    assert set(runs["bad"]) == {"failed"}


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        ({"atLeast": 0.8, "confidence": 1.5}, "passRate.confidence: must be < 1.0, got 1.5"),
        ({"atLeast": 0.97}, "0 < threshold - margin and threshold + margin < 1"),
        ({"atleast": 0.8}, "did you mean 'atLeast'"),
    ],
)
def test_a_bad_pass_rate_is_that_tests_error(
    pytester: pytest.Pytester, rate: dict[str, object], message: str
) -> None:
    (pytester.path / "s.json").write_text(
        json.dumps(
            {
                "name": "s",
                "tests": [
                    {
                        "id": "t",
                        "passRate": rate,
                        "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "d"}],
                        "assertions": {"d": 1},
                    }
                ],
            }
        )
    )
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert message in result.stdout.str(), result.stdout.str()


def test_runs_next_to_pass_rate_is_a_mistake(tmp_path: Path) -> None:
    from pytest_semantictest.formats.semantictest.loader import load_file

    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "name": "s",
                "tests": [
                    {
                        "id": "t",
                        "runs": 5,
                        "passRate": {"atLeast": 0.8},
                        "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "d"}],
                        "assertions": {"d": 1},
                    }
                ],
            }
        )
    )
    (case,) = load_file(path).cases
    assert (
        case.error is not None
        and "passRate: decides how many runs pass and are made: leave out runs" in case.error
    )


def test_the_bounds_hold_at_their_edges() -> None:
    test = PassRateTest(0.8)
    assert test.decide(0, 0) is Decision.UNDECIDED
    # the default budget leaves the looks before the last half of each error (bounds log 40)
    assert test.design.upper == pytest.approx(math.log(40)) and test.design.lower == pytest.approx(
        math.log(1 / 40)
    )
    assert test.decide(0, 7) is Decision.UNDECIDED and test.decide(0, 8) is Decision.FAIL
    assert test.decide(29, 29) is Decision.UNDECIDED and test.decide(30, 30) is Decision.PASS
    # the last look is the exact test: pass or fail, never inconclusive
    assert test.decide(160, 200) is Decision.FAIL and test.decide(161, 200) is Decision.PASS
    assert test.design.complete and test.shortfall() is None
    assert wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    with pytest.raises(ValueError):
        PassRateTest(0.99)


def test_the_exact_designs_hold_their_errors_checked_with_scipy() -> None:
    """The exact fixed-size test needs 176 runs (pass at >= 142), not the normal approximation's 169;
    the truncated design's stated errors are its real ones (checked by summing scipy's binomial over
    every path, independently of the dynamic programme)."""
    import numpy as np

    # scipy's binomial tail functions: bdtrc(k, n, p) is binom.sf(k, n, p) (more than k of n), bdtr
    # binom.cdf; scipy.special without scipy.stats' import (~0.6 s of CPU), and over whole arrays
    from scipy.special import bdtr, bdtrc

    from pytest_semantictest.stats.binomial import fixed_design
    from pytest_semantictest.stats.sequential import operating

    n, cut = fixed_design(0.75, 0.85, 0.05, 0.05)
    assert (n, cut) == (176, 142)
    assert bdtrc(cut - 1, n, 0.75) <= 0.05 and bdtr(cut - 1, n, 0.85) <= 0.05
    sizes = np.arange(100, 176)[:, None]
    marks = np.arange(1, 176)[None, :]  # (mark 0 passes every agent: a wrong pass of 1)
    holds = (
        (marks <= sizes) & (bdtrc(marks - 1, sizes, 0.75) <= 0.05) & (bdtr(marks - 1, sizes, 0.85) <= 0.05)
    )
    assert not holds.any(), np.argwhere(holds)[:5]
    small = PassRateTest(0.8, max_runs=12)  # every path of 12 runs, through decide() itself
    decided = {(k, n): small.decide(k, n) for n in range(1, 13) for k in range(n + 1)}  # (once each)
    for p in (0.75, 0.85):
        shares = dict.fromkeys(("pass", "fail", "inconclusive"), 0.0)
        for bits in range(2**12):
            outcomes = [bool(bits >> i & 1) for i in range(12)]
            n = next(n for n in range(1, 13) if decided[sum(outcomes[:n]), n] is not Decision.UNDECIDED)
            k = sum(outcomes[:n])
            shares[decided[k, n].value] += p**k * (1 - p) ** (n - k) / 2 ** (12 - n)
        exact = operating(small, p)
        assert all(shares[key] == pytest.approx(exact[key], abs=1e-9) for key in shares), (shares, exact)
    for budget in (12, 60, 176, 200, 400):
        test = PassRateTest(0.8, max_runs=budget)
        wrong_pass, wrong_fail = operating(test, 0.75)["pass"], operating(test, 0.85)["fail"]
        assert wrong_pass <= 0.05 + 1e-12 and wrong_fail <= 0.05 + 1e-12
        assert test.design.complete is (budget >= 176)
        assert (test.shortfall() is None) is (budget >= 176)
