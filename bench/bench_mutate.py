#!/usr/bin/env python3
"""The time figure of the mutation phase of ``python -m pytest examples --semantictest-mutate``
against its normal phase (each test run against the example agents while its replies are recorded),
both from one run's terminal section (``normal phase ...: X s; mutation phase (replayed, N mutants):
Y s``); target: the mutation phase takes less time than the normal one.

Each repeat is one fresh ``python -m pytest examples -q -p no:cacheprovider --semantictest-mutate``
from the repository (the examples replay their recorded judge answers; the LLM endpoint is a dead
loopback port, so a call would fail). Also printed, for scale: a plain ``python -m pytest examples``
run alternating with it (the look-ahead on): its session time as pytest prints it, and both runs'
whole process wall times. Medians over the repeats.

Usage::

    python bench/bench_mutate.py [--repeat 5] [--check]    # --check: exit 1 unless mutation < normal
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSION = re.compile(r"passed in ([0-9.]+)s")
PHASES = re.compile(
    r"normal phase \(against the agent, recording\): ([0-9.]+)s; "
    r"mutation phase \(replayed, (\d+) mutants\): ([0-9.]+)s"
)


def environment() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "PYTEST_", "BASE_URL", "COMPLIANCE_", "EXAMPLE_AGENT_"))
    }
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    return env


def run(*args: str) -> tuple[float, str]:
    """(wall s, output) of one examples run, which must pass."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "examples", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(
            f"examples run {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return wall, done.stdout


def run_plain(sessions: list[float]) -> float:
    """A plain examples run: its wall time; pytest's own session time is added to ``sessions``."""
    wall, out = run()
    found = SESSION.search(out)
    sessions.append(float(found[1]) if found else float("nan"))
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 unless the mutation phase is the shorter"
    )
    args = parser.parse_args()
    normal, mutation, walls, plain, plain_session = [], [], [], [], []
    mutants = 0
    for n in range(args.repeat):
        if n % 2:
            plain.append(run_plain(plain_session))
        wall, out = run("--semantictest-mutate")
        found = PHASES.search(out)
        if found is None:
            sys.exit(f"no phase line in the mutation run's output:\n{out[-3000:]}")
        normal.append(float(found[1]))
        mutants = int(found[2])
        mutation.append(float(found[3]))
        walls.append(wall)
        if not n % 2:
            plain.append(run_plain(plain_session))
        print(
            f"run {n + 1}: normal phase {normal[-1]:.3f} s, mutation phase {mutation[-1]:.3f} s "
            f"({mutants} mutants), ratio {mutation[-1] / normal[-1]:.2f}"
        )
    med_normal, med_mutation = statistics.median(normal), statistics.median(mutation)
    print(f"\nexamples, {args.repeat} runs, medians:")
    print(f"  normal phase (against the agents, recording): {med_normal:.3f} s")
    print(
        f"  mutation phase (replayed, {mutants} mutants):  {med_mutation:.3f} s "
        f"({1000 * med_mutation / max(mutants, 1):.2f} ms a mutant)"
    )
    print(f"  mutation / normal: {med_mutation / med_normal:.2f} (target: below 1)")
    print(f"  a plain run's session (pytest's 'passed in'): {statistics.median(plain_session):.3f} s")
    print(
        f"  whole process: --semantictest-mutate {statistics.median(walls):.2f} s, "
        f"plain {statistics.median(plain):.2f} s"
    )
    return 1 if args.check and med_mutation >= med_normal else 0


if __name__ == "__main__":
    sys.exit(main())
