"""The baseline gate's error rates, simulated (seeded) through ``report.baseline.compare`` on results
records shaped as a run writes them (``runs``, ``run_durations_ms``, ``run_scores``). Usage::

    python bench/bench_baseline.py [--suites 1000] [--seed 3] [--check]

Rows:
- false alarms: 20 tests x 20 runs, pass rate 0.8 on both sides, the new runs' latency 60 ms higher
  and noisier (load), judge scores unchanged: the share of suites the gate fails (at most 5%);
  the same with ``--semantictest-fail-on-slower=1.5`` and latency unchanged.
- power: one test of 20 falls 0.9 -> 0.6 (20 runs a side), and every test falls 0.9 -> 0.6.
- single-run tests: 20 tests of one run a side at 0.8; then against a baseline history of 20 runs
  (several results files pooled) at pass rates 0.8, 0.95, 0.99 and 1.0 -> 0.5 (a real break).
``--check`` exits 1 when a false-alarm rate is above 5%.

What it does not cover: tests whose runs are not independent (an agent that remembers earlier runs),
and sides whose number of runs depended on their outcomes (a sequential decision): Fisher's test
conditions on both sides' run counts.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_semantictest.report.baseline import compare  # noqa: E402

Record = dict[str, object]


def _record(i: int, rate: float, runs: int, rng: random.Random, latency: float = 200.0) -> Record:
    outcomes = ["passed" if rng.random() < rate else "failed" for _ in range(runs)]
    record: Record = {"id": f"s.json::t{i}", "file": "s.json", "results_version": 1}
    record["outcome"] = "passed" if outcomes.count("passed") >= runs * 0.8 else "failed"
    if runs > 1:
        record["runs"] = outcomes
        record["run_durations_ms"] = [latency + rng.gauss(0, latency / 10) for _ in range(runs)]
        record["run_scores"] = [min(1.0, max(0.0, rng.gauss(0.8, 0.1))) for _ in range(runs)]
    else:
        record["outcome"] = outcomes[0]
        record["latency_ms"] = latency + rng.gauss(0, latency / 10)
    return record


def _history(i: int, rate: float, runs: int, rng: random.Random) -> Record:
    """A baseline of ``runs`` single-run results files, pooled as the baseline reader pools them."""
    return {
        "id": f"s.json::t{i}",
        "file": "s.json",
        "results_version": 1,
        "outcome": "passed",
        "runs": ["passed" if rng.random() < rate else "failed" for _ in range(runs)],
    }


def _rate(suites: int, make: object, **options: float) -> tuple[float, float]:
    """(share of suites the gate fails, share where test 0 is flagged)."""
    fails = first = 0
    for _ in range(suites):
        old, new = make()  # type: ignore[operator]
        found = compare(old, new, "b", ["s.json"], **options)  # type: ignore[arg-type]
        fails += bool(found.failing)
        first += found.changes["s.json::t0"].kind == "regressed"
    return fails / suites, first / suites


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    n = args.suites

    def both(old_rate: float, new_rates: list[float], runs: int = 20, slow: float = 0.0) -> tuple[dict, dict]:
        old = {f"s.json::t{i}": _record(i, old_rate, runs, rng) for i in range(20)}
        new = {f"s.json::t{i}": _record(i, r, runs, rng, 200.0 + slow) for i, r in enumerate(new_rates)}
        return old, new

    print(f"seed {args.seed}, {n:,} simulated suites a row, 20 tests a suite, family-wise level 5%")
    alarm, _ = _rate(n, lambda: both(0.8, [0.8] * 20, slow=60.0))
    print(f"  unchanged 0.8, 20 runs a side, new runs 60 ms slower: gate failed {alarm:.1%}")
    alarm_slower, _ = _rate(n, lambda: both(0.8, [0.8] * 20), slower=1.5)
    print(f"  unchanged 0.8, latency unchanged, --fail-on-slower 1.5: gate failed {alarm_slower:.1%}")
    flagged_slow, _ = _rate(n, lambda: both(0.8, [0.8] * 20, slow=200.0), slower=1.5)
    print(f"  unchanged 0.8, every test 2x slower, --fail-on-slower 1.5: gate failed {flagged_slow:.1%}")
    _, power_one = _rate(n, lambda: both(0.9, [0.6] + [0.9] * 19))
    print(f"  one test 0.9 -> 0.6, 20 runs a side: flagged in {power_one:.1%} of suites")
    power_all, _ = _rate(n, lambda: both(0.9, [0.6] * 20))
    print(f"  every test 0.9 -> 0.6, 20 runs a side: gate failed {power_all:.1%}")
    fixed = compare(
        {"s.json::t0": {**_record(0, 1, 20, rng), "runs": ["passed"] * 18 + ["failed"] * 2}},
        {"s.json::t0": {**_record(0, 1, 20, rng), "runs": ["passed"] * 5 + ["failed"] * 15}},
        "b",
        ["s.json"],
    ).changes["s.json::t0"]
    print(f"  18/20 -> 5/20: {fixed.kind} ({'; '.join(fixed.reasons)})")
    single, _ = _rate(n, lambda: both(0.8, [0.8] * 20, runs=1))
    print(f"  single-run tests at 0.8, one run a side: gate failed {single:.1%}")
    rows = {}
    for rate, now in ((0.8, 0.8), (0.95, 0.95), (0.99, 0.99), (1.0, 0.5)):

        def history(rate: float = rate, now: float = now) -> tuple[dict, dict]:
            old = {f"s.json::t{i}": _history(i, rate, 20, rng) for i in range(20)}
            new = {f"s.json::t{i}": _record(i, now if i == 0 else rate, 1, rng) for i in range(20)}
            return old, new

        rows[rate], first = _rate(n, history)
        print(
            f"  single-run tests, baseline history of 20 runs at {rate}, now {now} for t0: gate failed "
            f"{rows[rate]:.1%} (t0 flagged {first:.1%})"
        )
    worst = max(alarm, alarm_slower, single, rows[0.8], rows[0.95], rows[0.99])
    ok = worst <= 0.05 and fixed.kind == "regressed"
    if args.check and not ok:
        print(
            f"check failed: a false-alarm rate of {worst:.1%} is above 5% (or 18/20 -> 5/20 not a regression)"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
