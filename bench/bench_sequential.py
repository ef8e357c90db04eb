"""The sequential pass-rate test against a simulated agent with a known pass probability.

For each true pass rate, 10,000 simulated tests (seeded) run the decision procedure exactly as the
engine does (``PassRateTest.decide`` after each batch) and the bench prints how often it passed,
failed or was inconclusive, and the mean number of runs it needed, next to the runs a fixed-size
test with the same error rates needs (``stats.fixed_runs``). Usage::

    python bench/bench_sequential.py [--tests 10000] [--batch 1] [--seed 7] [--check]

``--check`` exits 1 unless: the wrong-pass rate at 0.75 is at most alpha, and the mean runs at 0.95
and at 0.5 are below half the fixed-size design's.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_semantictest.stats import PassRateTest, fixed_runs, simulate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument(
        "--batch", type=int, default=1, help="runs per batch (the engine uses its concurrency)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    test = PassRateTest(threshold=0.8, alpha=0.05, beta=0.05, margin=0.05, max_runs=200)
    fixed = fixed_runs(test)
    rng = random.Random(args.seed)
    print(f"{test.describe()}; batch {args.batch}; {args.tests:,} simulated tests per row")
    print(f"a fixed-size test with the same errors needs {fixed} runs per test")
    print(f"{'true rate':>9}  {'pass':>7}  {'fail':>7}  {'inconcl.':>8}  {'mean runs':>9}  {'vs fixed':>8}")
    rows = {}
    for rate in (0.5, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
        row = simulate(test, rate, args.tests, args.batch, rng)
        rows[rate] = row
        print(
            f"{rate:>9.2f}  {row['pass']:>7.2%}  {row['fail']:>7.2%}  {row['inconclusive']:>8.2%}  "
            f"{row['mean_runs']:>9.1f}  {row['mean_runs'] / fixed:>8.2f}"
        )
    wrong_pass = rows[0.75]["pass"]
    print(
        f"wrong pass at 0.75: {wrong_pass:.2%} (alpha {test.alpha:.0%}); mean runs at 0.95: "
        f"{rows[0.95]['mean_runs']:.1f}, at 0.5: {rows[0.5]['mean_runs']:.1f} (fixed: {fixed})"
    )
    ok = wrong_pass <= test.alpha and max(rows[0.95]["mean_runs"], rows[0.5]["mean_runs"]) < fixed / 2
    if args.check and not ok:
        print("check failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
