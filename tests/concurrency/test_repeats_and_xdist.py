"""Repeats stop once decided (``--semantictest-no-early-stop`` keeps them all); xdist workers look ahead too."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_semantictest.engine.repeat import decided
from pytest_semantictest.model import Outcome, Verdict
from tests.concurrency.conftest import sleeping, stats, write
from tests.helpers import run_pytest

P, F, E, S = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED


def _runs(*outcomes: Outcome) -> list[Verdict]:
    return [Verdict(o) for o in outcomes]


@pytest.mark.parametrize(
    ("done", "expected"),
    [
        ([P] * 8, True),  # 8 of 10 passed
        ([P] * 7, False),
        ([F] * 3, True),  # 3 failed: at most 7 can pass
        ([F, F], False),
        ([F, F, E], False),  # with errors it may still end ERROR or FAILED
        ([F, F, F, E], True),
        ([S, S, S], False),  # all skipped so far: may end SKIPPED or not
        ([P, F, F, F], True),
    ],
)
def test_decided_with_runs_10_min_pass_8(done: list[Outcome], expected: bool) -> None:
    assert decided(_runs(*done), 10, 8) is expected


def test_a_decided_repeat_stops_and_says_so(pytester: pytest.Pytester, latency: str) -> None:
    """runs: 10, min_pass: 8: stops after 8 passed, or after 3 failed; with all runs, makes 10."""
    write(
        pytester,
        "rep",
        [
            sleeping(latency, "always", 0.05, runs=10, minPass=8),
            sleeping(latency, "never", 0.05, status=201, runs=10, minPass=8),
        ],
    )
    # one run at a time (--semantictest-runs-at-once=1): exactly the runs it takes to decide
    result = run_pytest(
        pytester, "-p", "no:cacheprovider", "--junitxml=j.xml", "--semantictest-runs-at-once=1"
    )
    result.assert_outcomes(passed=1, failed=1)
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(str(pytester.path / "j.xml")).getroot().iter("testcase")
    }
    assert (props["always"]["runs"], props["always"]["runs_planned"]) == ("8/8", "10")
    assert (props["never"]["runs"], props["never"]["runs_planned"]) == ("0/3", "10")
    assert (
        "stopped after" in result.stdout.str()
        and "of 10 runs, the outcome was decided" in result.stdout.str()
    )
    every = run_pytest(pytester, "-p", "no:cacheprovider", "--junitxml=j.xml", "--semantictest-no-early-stop")
    every.assert_outcomes(passed=1, failed=1)
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(str(pytester.path / "j.xml")).getroot().iter("testcase")
    }
    assert (props["always"]["runs"], props["never"]["runs"]) == ("10/10", "0/10")
    assert "runs_planned" not in props["always"]


def test_xdist_workers_run_their_items_at_once(pytester: pytest.Pytester, latency: str) -> None:
    for name in ("a", "b"):
        write(
            pytester,
            name,
            [sleeping(latency, f"{name}{i}", 0.4, status=200 if i != 2 else 500) for i in range(6)],
        )
    fast = run_pytest(pytester, "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider", "-rA")
    fast.assert_outcomes(passed=10, failed=2)
    assert stats(latency)["max_in_flight"] > 2  # more than one item per worker at a time
    # one by one
    slow = run_pytest(pytester, "-p", "no:cacheprovider", "-rA", "--semantictest-items-at-once=1")
    slow.assert_outcomes(passed=10, failed=2)
    summary = sorted(line for line in fast.outlines if line.startswith(("PASSED ", "FAILED ")))
    assert summary == sorted(line for line in slow.outlines if line.startswith(("PASSED ", "FAILED ")))
