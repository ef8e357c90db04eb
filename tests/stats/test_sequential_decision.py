"""The sequential pass-rate decision, end to end: a local agent that passes with a known probability
(seeded), specs that ask for the decision, and the outcomes and run counts the simulation predicts;
plus the rule's own edges (never a pass for an inconclusive run, the spellings and their mistakes)."""

from __future__ import annotations

import json
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
    result = run_pytest(
        pytester, "-p", "no:cacheprovider", "--semantictest-results=r.jsonl", "--semantictest-runs-at-once=5"
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
    """At the threshold itself the test cannot decide in 12 runs: it FAILS, saying so and why."""
    (pytester.path / "coin.json").write_text(_suite(coin, 0.8, 1, maxRuns=12))
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*pass rate: inconclusive: */12 runs passed (95% CI *); pass rate >= 0.8 (SPRT: "
            "wrong pass <= 0.05 at p <= 0.75, wrong fail <= 0.05 at p >= 0.85, at most 12 runs): "
            "the budget of runs was spent before the pass rate was shown to be above or below "
            "the threshold*"
        ]
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
    assert len(runs["good"]) == -(-first // 10) * 10  # whole batches of the concurrency (10)
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
    # six failures in a row
    assert test.decide(0, 5) is Decision.UNDECIDED and test.decide(0, 6) is Decision.FAIL
    assert test.decide(23, 23) is Decision.UNDECIDED and test.decide(24, 24) is Decision.PASS
    assert wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    with pytest.raises(ValueError):
        PassRateTest(0.99)
