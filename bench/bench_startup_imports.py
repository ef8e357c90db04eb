#!/usr/bin/env python3
"""Where the start-up of one offline SemanticTest file goes: the CPU time of each import.

``bench_startup.py`` gives the whole run's cost side by side with bare pytest; this script says which
imports make it up, so a change that defers one can be checked on a busy machine. The file and the
command are ``bench_startup.py``'s (plugin autoload off, one ``MockData`` test, bytecode cached under
a temp folder). Each run is a fresh interpreter that records the thread CPU time every module's
import took (its own code and the imports it made), so other load on the machine, which stretches
wall times, changes these little; each module's figure is its minimum over the runs.

Printed: the modules the plugin's run imports beyond bare pytest's, each with its own time (without
what it imported) and the total, grouped by top-level package, the biggest first; with ``--tree``
also the import tree. ``--compare DIR`` runs the package found in ``DIR`` (a checkout's root) in
alternation with this one and prints both totals.

Usage::

    python bench/bench_startup_imports.py [--repeat 7] [--tree] [--compare /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_startup import CLEAN_ENV, SUITE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RECORDER = """
import importlib._bootstrap as bootstrap, json, runpy, sys, time
load, records, depth = bootstrap._load_unlocked, [], [0]
def timed(spec):
    start = time.thread_time()
    depth[0] += 1
    try:
        return load(spec)
    finally:
        depth[0] -= 1
        records.append((spec.name, (time.thread_time() - start) * 1000, depth[0]))
bootstrap._load_unlocked = timed
out = sys.argv.pop(1)
try:
    sys.argv[0] = "pytest"
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)
finally:
    with open(out, "w") as f:
        json.dump(records, f)
"""
"""Runs pytest as ``python -m pytest`` does, timing every module load (post-order: a module's record
comes after its imports' records, one level deeper)."""

Record = tuple[str, float, int]


def one_run(folder: Path, root: Path, plugin: bool, out: Path) -> list[Record]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    env.update(PYTHONPYCACHEPREFIX=str(folder / "pycache"), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])
    args = ["-q", "-p", "no:cacheprovider"] + (["-p", "pytest_semantictest.plugin"] if plugin else [])
    cwd = folder / ("one" if plugin else "empty")
    proc = subprocess.run(
        [sys.executable, "-c", RECORDER, str(out), *args], cwd=cwd, env=env, capture_output=True
    )
    if proc.returncode != 0:
        sys.exit(
            f"bench_startup_imports: the run in {cwd} exited {proc.returncode}:\n{proc.stdout[-2000:]!r}"
        )
    return [(name, ms, depth) for name, ms, depth in json.loads(out.read_text())]


def own_times(records: list[Record]) -> dict[str, float]:
    """Each module's time without its imports' (a record's children are the deeper ones just before it)."""
    own: dict[str, float] = {}
    children: dict[int, float] = collections.defaultdict(float)
    for name, ms, depth in records:
        own[name] = ms - children.pop(depth + 1, 0.0)
        children[depth] += ms
    return own


def minimum(runs: list[dict[str, float]]) -> dict[str, float]:
    return {name: min(r.get(name, float("inf")) for r in runs) for name in runs[0]}


def tree(records: list[Record], total: dict[str, float], extra: set[str], floor: float = 1.0) -> None:
    """The import tree of the modules bare pytest does not import, parents before their imports."""
    pending: dict[int, list[tuple[str, int, list]]] = collections.defaultdict(list)
    for name, _, depth in records:
        pending[depth].append((name, depth, pending.pop(depth + 1, [])))

    def show(node: tuple[str, int, list]) -> None:
        name, depth, kids = node
        if name in extra and total[name] >= floor:
            print(f"  {total[name]:7.1f} ms  {'  ' * depth}{name}")
        for kid in kids:
            show(kid)

    for node in pending[0]:
        show(node)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tree", action="store_true", help="print the import tree too")
    parser.add_argument("--compare", type=Path, help="another checkout's root, run in alternation")
    args = parser.parse_args()
    roots = {"this checkout": ROOT, **({f"{args.compare}": args.compare.resolve()} if args.compare else {})}
    with tempfile.TemporaryDirectory(prefix="bench-imports-") as tmp:
        folder = Path(tmp)
        for name in ("one", "empty"):
            (folder / name).mkdir()
            (folder / name / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (folder / "one" / "one.json").write_text(json.dumps(SUITE), encoding="utf-8")
        (folder / "empty" / "test_empty.py").write_text("def test_empty():\n    pass\n", encoding="utf-8")
        out = folder / "records.json"
        bare = {n for n, _, _ in one_run(folder, ROOT, False, out)}
        runs: dict[str, list[list[Record]]] = {k: [] for k in roots}
        for _ in range(args.repeat + 1):  # the first round writes the bytecode: not counted
            for label, root in roots.items():
                runs[label].append(one_run(folder, root, True, out))
        for label in roots:
            measured = runs[label][1:]
            own = minimum([own_times(r) for r in measured])
            total = minimum([{n: ms for n, ms, _ in r} for r in measured])
            extra = {n for n in own if n not in bare}
            groups: dict[str, float] = collections.defaultdict(float)
            for name in extra:
                groups[name.split(".")[0]] += own[name]
            print(f"\n{label}: {len(extra)} modules beyond bare pytest's, {sum(groups.values()):.1f} ms CPU")
            for group, ms in sorted(groups.items(), key=lambda g: -g[1]):
                print(f"  {ms:7.1f} ms  {group}")
            ours = sorted((n for n in extra if n.startswith("pytest_semantictest")), key=lambda n: -own[n])
            print("  the plugin's own modules, each without its imports:")
            for name in ours[:25]:
                print(f"  {own[name]:7.1f} ms  {name}")
            if args.tree:
                print("  the import tree (each with its imports, at least 1 ms):")
                tree(measured[0], total, extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
