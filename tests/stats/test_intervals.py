"""The intervals the reports print: Wilson's after a fixed number of runs, the confidence sequence
where the number of runs depended on their outcomes; each covers at its stated level (exactly, over
every outcome sequence of a stopping rule)."""

from __future__ import annotations

import itertools
import json

import pytest

from pytest_semantictest.stats import PassRateTest, confidence_sequence, wilson
from tests.helpers import run_pytest

pytest_plugins = ["pytester"]


def _stops_at_8_of_10() -> dict[tuple[int, ...], tuple[int, int]]:
    """Every prefix where ``runs: 10, minPass: 8`` stops: (passed, runs)."""
    found = {}
    for bits in itertools.product((1, 0), repeat=10):
        k = n = 0
        for n, bit in enumerate(bits, 1):
            k += bit
            if k >= 8 or n - k > 2:
                break
        found[bits[:n]] = (k, n)
    return found


@pytest.mark.parametrize("p", [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95])
def test_after_an_early_stop_the_confidence_sequence_covers_and_wilson_does_not(p: float) -> None:
    wilson_cover = sequence_cover = 0.0
    for _, (k, n) in _stops_at_8_of_10().items():
        chance = p**k * (1 - p) ** (n - k)
        low, high = wilson(k, n)
        wilson_cover += chance * (low <= p <= high)
        low, high = confidence_sequence(k, n)
        sequence_cover += chance * (low <= p <= high)
    assert sequence_cover >= 0.95
    if p in (0.6, 0.7):
        assert wilson_cover < 0.93  # the problem the confidence sequence is for


def test_the_confidence_sequence_is_wider_than_wilson_and_holds_the_estimate() -> None:
    for n in (1, 5, 20, 200):
        for k in range(n + 1):
            low, high = confidence_sequence(k, n)
            w_low, w_high = wilson(k, n)
            assert low <= w_low + 1e-9 and high >= w_high - 1e-9 and low <= k / n <= high


def test_after_a_sequential_decision_the_interval_covers(p: float = 0.8) -> None:
    """Exactly, over every path of a 30-run truncated SPRT at its indifference point."""
    test = PassRateTest(0.8, max_runs=30)
    cover = 0.0
    paths: dict[tuple[int, int], float] = {(0, 0): 1.0}
    for n in range(1, 31):
        step: dict[tuple[int, int], float] = {}
        for (k, _), mass in paths.items():
            for bit, chance in ((1, p), (0, 1 - p)):
                step[(k + bit, n)] = step.get((k + bit, n), 0.0) + mass * chance
        paths = {}
        for (k, m), mass in step.items():
            if test.decide(k, m).value == "undecided":
                paths[(k, m)] = mass
            else:
                low, high = confidence_sequence(k, m)
                cover += mass * (low <= p <= high)
    assert not paths and cover >= 0.95


def test_the_failure_text_names_the_interval_it_prints(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".json",
        rate=json.dumps(
            {
                "name": "rate",
                "tests": [
                    {
                        "id": "never",
                        "runs": 3,
                        "minPass": 1,
                        "pipeline": [{"block": "MockData", "config": {"data": {"ok": False}}, "output": "d"}],
                        "assertions": {"d.ok": True},
                    }
                ],
            }
        ),
    )
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    assert "runs: 0/3 passed, 95% CS 0-75% (failed, failed, failed)" in result.stdout.str()
    every = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-all-runs")
    assert "runs: 0/3 passed, 95% CI 0-56% (failed, failed, failed)" in every.stdout.str()
