"""The baseline comparison's error rates, simulated (seeded): how often a suite with no real change
is said to have regressed (the false-alarm rate, at most 5% by design), and how often one test whose
pass rate drops from 0.9 to 0.5 is flagged, with 10 and 20 runs a side. Usage::

    python bench/bench_baseline.py [--suites 2000] [--tests 20] [--seed 3] [--check]

It runs ``report.baseline.compare`` itself on simulated results records, as a run would.
``--check`` exits 1 when the false-alarm rate is above 5%.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_semantictest.report.baseline import compare  # noqa: E402


def _record(nodeid: str, rate: float, runs: int, rng: random.Random) -> dict[str, object]:
    outcomes = ["passed" if rng.random() < rate else "failed" for _ in range(runs)]
    return {"id": nodeid, "file": "suite.json", "outcome": "passed", "runs": outcomes, "results_version": 1}


def suite(rates: list[float], new_rates: list[float], runs: int, rng: random.Random) -> tuple[dict, dict]:
    old = {f"suite.json::t{i}": _record(f"suite.json::t{i}", r, runs, rng) for i, r in enumerate(rates)}
    new = {f"suite.json::t{i}": _record(f"suite.json::t{i}", r, runs, rng) for i, r in enumerate(new_rates)}
    return old, new


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=2000)
    parser.add_argument("--tests", type=int, default=20)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rates = [0.9] * args.tests
    alarms = 0
    for _ in range(args.suites):
        old, new = suite(rates, rates, 10, rng)
        alarms += bool(compare(old, new, "baseline", ["suite.json"]).regressed)
    false_alarm = alarms / args.suites
    print(
        f"{args.tests} tests x 10 runs a side, pass rate 0.9 on both sides, {args.suites:,} simulated suites:"
    )
    print(f"  suites with a regression reported (false alarms): {false_alarm:.2%} (at most 5% by design)")
    dropped = [0.5] + rates[1:]
    for runs in (10, 20):
        found = wrong = 0
        for _ in range(args.suites):
            old, new = suite(rates, dropped, runs, rng)
            regressed = {c.nodeid for c in compare(old, new, "baseline", ["suite.json"]).regressed}
            found += "suite.json::t0" in regressed
            wrong += bool(regressed - {"suite.json::t0"})
        print(
            f"  one test 0.9 -> 0.5, {runs} runs a side: flagged in {found / args.suites:.1%} of suites "
            f"(another test flagged too in {wrong / args.suites:.1%})"
        )
    if args.check and false_alarm > 0.05:
        print("check failed: the false-alarm rate is above 5%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
