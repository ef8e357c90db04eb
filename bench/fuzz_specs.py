#!/usr/bin/env python3
"""A long fuzzing campaign over the four spec formats (the CI test runs a small fixed one).

Mutates every seed of ``tests/hardening/mutants.py`` (the examples, the compliance corpus, small
valid files) ``--per-seed`` times and loads each mutant as collection does, in this process.
Prints one line per distinct crash (an exception, a traceback or plugin path in the message, a
load slower than ``--time-limit``) with a reproducer written under ``--out``, then a summary
(mutants, crashes, slowest load in CPU seconds). Exit status 1 when anything crashed.

``--folder-runs N`` then makes N mutants of each format and puts each next to a valid sibling of its
format in a folder of its own; batches of such folders are collected by a real pytest process and
checked by ``semantictest validate`` (``fuzz_folder_runs.py``): tracebacks, hangs, silent skips (a
file that looks like a spec file but is neither collected nor a collection error), processes left and
validate disagreeing with collection are counted, reproducers kept under ``--out``.

    python bench/fuzz_specs.py --per-seed 200 --seed 1 --out /tmp/fuzz
    python bench/fuzz_specs.py --per-seed 0 --folder-runs 400 --seed 1 --out /tmp/fuzz
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hardening.mutants import MutantCrash, check, collect_context, mutate_text, seeds  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-seed", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "semantictest-fuzz")
    parser.add_argument("--only", default="", help="only seeds whose file name contains this")
    parser.add_argument("--folder-runs", type=int, default=0, help="mutants per format run in folders")
    parser.add_argument("--batch", type=int, default=100, help="mutant folders per pytest run")
    parser.add_argument("--batch-timeout", type=float, default=600.0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="fuzz-"))
    ctx = collect_context(work)
    crashes: dict[str, str] = {}
    count, slowest = 0, (0.0, "")
    try:
        for seed in seeds():
            if args.only not in seed.name:
                continue
            for name, text in seed.companions.items():
                (work / name).write_text(text, "utf-8")
            for i in range(args.per_seed):
                rng = random.Random(f"{args.seed}:{seed.name}:{i}")
                text, what = mutate_text(seed, rng)
                path = work / seed.name
                path.write_text(text, "utf-8", errors="surrogatepass")
                count += 1
                try:
                    _, took = check(path, ctx, args.time_limit)
                except MutantCrash as crash:
                    key = _signature(str(crash))
                    if key not in crashes:
                        keep = args.out / f"{len(crashes):03d}-{seed.name}"
                        shutil.copy(path, keep)
                        crashes[key] = f"{keep}  ({what})\n    {str(crash).strip().splitlines()[-1][:300]}"
                        print(f"CRASH {crashes[key]}", flush=True)
                    continue
                if took > slowest[0]:
                    slowest = (took, f"{seed.name} ({what})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{count} mutants, {len(crashes)} distinct crashes, slowest load {slowest[0]:.3f} s of CPU: {slowest[1]}"
    )
    status = 1 if crashes else 0
    if args.folder_runs:
        from fuzz_folder_runs import folder_runs, report

        tally = folder_runs(args.folder_runs, args.seed, args.batch, args.batch_timeout, args.out)
        status = max(status, report(tally, args.folder_runs))
    return status


def _signature(text: str) -> str:
    """Crashes that end in the same exception line at the same place are one crash."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    where = [line for line in lines if line.startswith("File ")]
    return (where[-1] if where else "") + "|" + (lines[-1].split(":")[0] if lines else "")


if __name__ == "__main__":
    sys.exit(main())
