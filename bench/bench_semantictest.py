#!/usr/bin/env python3
"""Benchmark: N SemanticTest tests vs N plain pytest tests (wall time and peak RSS).

Target: "1000 SemanticTest tests taking at most 1.3x the wall time and
memory of 1000 plain pytest tests in the same run".

Both suites run in fresh ``python -m pytest -q -p no:cacheprovider`` subprocesses from one
temp dir holding an empty ``pytest.ini`` (so the project's ini does not apply), with the same
plugins loaded (pytest-semantictest auto-loads via its entry point in both runs). The order
alternates across repeats. Wall time is ``time.perf_counter`` around the child; peak RSS is
that child's own ``ru_maxrss`` from ``os.wait4`` (KiB on Linux). The wall-time ratio compares the
fastest run of each kind (the medians are printed too: on a shared 2-core machine they move by 10-20 %
from one whole run to the next, the fastest runs by a few percent).

Each run is what a user's run is. So the plain suite is a session with Python tests, which the
plugin leaves alone, and the spec suite is a spec-only session, where the plugin keeps the garbage
collector off what collection built (``pytest_semantictest/gc_freeze.py``). The spec run
therefore skips the full collections at interpreter exit that the plain run pays: about 0.1 s of
the plain run here. That is why the ratio can be below 1.

A third figure shows the plugin's idle cost: a run with one trivial test, with and without
``-p no:semantictest``.

Stdlib + pytest only.  Usage::

    python bench/bench_semantictest.py [--n 1000] [--repeat 5] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TARGET = 1.3
PLUGIN = "semantictest"  # entry point name in the pytest11 group
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


# --------------------------------------------------------------------------- generation


def semantic_suite(n: int) -> dict:
    tests = []
    for i in range(n):
        tests.append(
            {
                "id": f"t{i}",
                "pipeline": [
                    {
                        "block": "MockData",
                        "config": {"data": {"id": i, "name": f"user {i}", "tags": ["a", "b"]}},
                        "output": "user",
                    }
                ],
                "assertions": {
                    "user.id": i,
                    "user.name": {"contains": "user"},
                    "user.tags": {"minLength": 2},
                },
            }
        )
    return {"name": "bench", "tests": tests}


def plain_module(n: int) -> str:
    parts = ['"""Generated: plain pytest equivalent of the SemanticTest bench suite."""\n']
    for i in range(n):
        parts.append(
            f"\n\ndef test_{i}():\n"
            f"    user = {{'id': {i}, 'name': 'user {i}', 'tags': ['a', 'b']}}\n"
            f"    assert user['id'] == {i}\n"
            f"    assert 'user' in user['name']\n"
            f"    assert len(user['tags']) >= 2\n"
        )
    return "".join(parts)


def generate(root: Path, n: int) -> dict[str, Path]:
    (root / "pytest.ini").write_text("[pytest]\n")
    dirs = {name: root / name for name in ("semantic", "plain", "idle")}
    for d in dirs.values():
        d.mkdir()
    (dirs["semantic"] / "bench_suite.json").write_text(json.dumps(semantic_suite(n), indent=2))
    (dirs["plain"] / "test_plain.py").write_text(plain_module(n))
    (dirs["idle"] / "test_idle.py").write_text("def test_idle():\n    pass\n")
    return dirs


# --------------------------------------------------------------------------- running


@dataclass
class Run:
    wall: float  # seconds
    cpu: float  # child's user + system CPU seconds (less sensitive to machine load than wall)
    rss_kib: int  # child's ru_maxrss


# Set by main(): where the children write bytecode (None: they write none).
PYCACHE_PREFIX: Path | None = None


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    # Nothing from the caller's environment may change which plugins load or which options apply.
    for key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        env.pop(key, None)
    # Bytecode: by default every child caches .pyc files (including pytest's assertion-rewritten
    # test modules) under the temp dir, as an everyday setup would; nothing is written outside it.
    # With PYTHONDONTWRITEBYTECODE every run recompiles the 1000-function plain test module and
    # every imported package from source, which is a different (and unfair) measurement.
    if PYCACHE_PREFIX is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE_PREFIX)
    return env


def run_pytest(cwd: Path, args: list[str], expect_passed: int, label: str) -> Run:
    cmd = PYTEST + args
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=child_env(), stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        out = proc.stdout.read()  # drain before waiting so a full pipe cannot block the child
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.stdout.close()
        proc.returncode = os.waitstatus_to_exitcode(status)  # tell Popen the child is reaped
        err.seek(0)
        err_text = err.read().decode("utf-8", "replace")
    text = out.decode("utf-8", "replace")
    summary = text.strip().splitlines()[-1] if text.strip() else "(no output)"
    m = re.search(r"\b(\d+) passed\b", summary)
    bad = re.search(r"\b\d+ (failed|errors?|skipped|xfailed|xpassed|warnings?)\b", summary)
    if proc.returncode != 0 or not m or int(m.group(1)) != expect_passed or bad:
        sys.stderr.write(
            f"\nBENCH RUN FAILED: {label}\n  cmd: {' '.join(cmd)}\n  cwd: {cwd}\n"
            f"  exit code: {proc.returncode}, expected '{expect_passed} passed' only, got: {summary!r}\n"
            f"---- stdout (last 60 lines) ----\n" + "\n".join(text.splitlines()[-60:]) + "\n"
            "---- stderr (last 30 lines) ----\n" + "\n".join(err_text.splitlines()[-30:]) + "\n"
        )
        raise SystemExit(2)
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


def plugin_import_ms(cwd: Path) -> float:
    """Cumulative ``-X importtime`` of the plugin module, imported after pytest (so only what
    the plugin itself adds is counted), in ms."""
    cmd = [sys.executable, "-X", "importtime", "-c", "import pytest; import pytest_semantictest.plugin"]
    proc = subprocess.run(cmd, cwd=cwd, env=child_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(f"\nBENCH RUN FAILED: {' '.join(cmd)}\n{proc.stderr[-3000:]}\n")
        raise SystemExit(2)
    m = re.search(r"^import time:\s*\d+\s*\|\s*(\d+)\s*\|\s?pytest_semantictest\.plugin$", proc.stderr, re.M)
    if not m:
        sys.stderr.write("\nBENCH: pytest_semantictest.plugin not found in -X importtime output\n")
        raise SystemExit(2)
    return int(m.group(1)) / 1000


# --------------------------------------------------------------------------- report


def med_wall(runs: list[Run]) -> float:
    return statistics.median(r.wall for r in runs)


def best_wall(runs: list[Run]) -> float:
    """The fastest run: what the code costs with the least disturbance from whatever else the machine
    does (timeit's estimator; the medians move by 10-20 % between whole runs on a busy 2-core box)."""
    return min(r.wall for r in runs)


def med_cpu(runs: list[Run]) -> float:
    return statistics.median(r.cpu for r in runs)


def med_rss_mib(runs: list[Run]) -> float:
    return statistics.median(r.rss_kib for r in runs) / 1024


def verdict(ratio: float) -> str:
    return "PASS" if ratio <= TARGET else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="tests per suite (default 1000)")
    ap.add_argument("--repeat", type=int, default=5, help="measured runs of each kind (default 5)")
    ap.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="unmeasured runs of each kind first (default 1;"
        " lets the plain file's rewritten .pyc be cached, as in everyday use)",
    )
    ap.add_argument("--idle-repeat", type=int, default=7, help="runs for the idle-cost figure (default 7)")
    ap.add_argument(
        "--no-pyc",
        action="store_true",
        help="children write no bytecode (PYTHONDONTWRITEBYTECODE=1):"
        " every run compiles everything from source",
    )
    ap.add_argument("--check", action="store_true", help=f"exit 1 if either ratio is over {TARGET}")
    ap.add_argument("--keep", action="store_true", help="keep the generated temp dir and print its path")
    args = ap.parse_args(argv)
    if args.n < 1 or args.repeat < 1:
        ap.error("--n and --repeat must be >= 1")

    tmp = tempfile.mkdtemp(prefix="bench-semantictest-")
    root = Path(tmp)
    global PYCACHE_PREFIX
    PYCACHE_PREFIX = None if args.no_pyc else root / "pycache"
    try:
        dirs = generate(root, args.n)
        n = args.n
        kinds = {
            "semantictest": lambda: run_pytest(root, [str(dirs["semantic"])], n, "semantictest"),
            "plain": lambda: run_pytest(root, [str(dirs["plain"])], n, "plain"),
        }
        idle_kinds = {
            "idle, plugin on": lambda: run_pytest(root, [str(dirs["idle"])], 1, "idle, plugin on"),
            "idle, plugin off": lambda: run_pytest(
                root, ["-p", f"no:{PLUGIN}", str(dirs["idle"])], 1, "idle, plugin off"
            ),
        }

        print(f"python {sys.version.split()[0]}  {sys.executable}")
        print(
            f"temp dir {root}  N={n}  repeat={args.repeat}  warmup={args.warmup}"
            f"  bytecode={'none (--no-pyc)' if args.no_pyc else 'cached in temp dir'}",
            flush=True,
        )
        for _ in range(args.warmup):
            for run in (*kinds.values(), *idle_kinds.values()):
                run()

        results: dict[str, list[Run]] = {k: [] for k in (*kinds, *idle_kinds)}
        for r in range(args.repeat):
            order = list(kinds) if r % 2 == 0 else list(reversed(kinds))
            for name in order:
                res = kinds[name]()
                results[name].append(res)
                print(
                    f"  repeat {r + 1}: {name:<13} {res.wall:7.3f} s wall  {res.cpu:7.3f} s cpu"
                    f"  {res.rss_kib / 1024:7.1f} MiB",
                    flush=True,
                )
        for r in range(args.idle_repeat):
            order = list(idle_kinds) if r % 2 == 0 else list(reversed(idle_kinds))
            for name in order:
                results[name].append(idle_kinds[name]())
        import_ms = statistics.median(plugin_import_ms(root) for _ in range(args.idle_repeat))
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    sem, plain = results["semantictest"], results["plain"]
    on, off = results["idle, plugin on"], results["idle, plugin off"]
    wall_ratio = best_wall(sem) / best_wall(plain)
    median_ratio = med_wall(sem) / med_wall(plain)
    rss_ratio = med_rss_mib(sem) / med_rss_mib(plain)

    cpu_ratio = med_cpu(sem) / med_cpu(plain)
    print()
    print(f"{'':<28}{'wall s (fastest)':>17}{'(median)':>10}{'peak RSS MiB':>14}{'cpu s (info)':>14}")
    for name, runs in ((f"semantictest ({n} tests)", sem), (f"plain pytest ({n} tests)", plain)):
        print(
            f"{name:<28}{best_wall(runs):>17.3f}{med_wall(runs):>10.3f}{med_rss_mib(runs):>14.1f}{med_cpu(runs):>14.3f}"
        )
    print(
        f"{'ratio semantictest/plain':<28}{wall_ratio:>17.2f}{median_ratio:>10.2f}{rss_ratio:>14.2f}{cpu_ratio:>14.2f}"
    )
    print(f"{f'target <= {TARGET}':<28}{verdict(wall_ratio):>17}{'':>10}{verdict(rss_ratio):>14}")

    # Per-test marginal cost, i.e. with the fixed interpreter/pytest start-up (the idle run,
    # plugin on) subtracted. Informational: the target is the plain ratio above.
    base_w, base_m = med_wall(on), med_rss_mib(on)
    sw, pw = med_wall(sem) - base_w, med_wall(plain) - base_w
    sm, pm = med_rss_mib(sem) - base_m, med_rss_mib(plain) - base_m
    print()
    print("marginal cost over the idle run (informational):")
    print(f"  semantictest {sw / n * 1e3:7.3f} ms/test  {sm * 1024 / n:6.1f} KiB/test")
    print(f"  plain        {pw / n * 1e3:7.3f} ms/test  {pm * 1024 / n:6.1f} KiB/test")
    if pw > 0 and pm > 0:
        print(f"  ratio        {sw / pw:7.2f}            {sm / pm:6.2f}")

    idle_ms = (med_wall(on) - med_wall(off)) * 1e3
    min_ms = (min(r.wall for r in on) - min(r.wall for r in off)) * 1e3
    idle_mib = med_rss_mib(on) - med_rss_mib(off)
    print()
    idle_cpu_ms = (med_cpu(on) - med_cpu(off)) * 1e3
    print(f"idle cost of the plugin (1 trivial test, median of {args.idle_repeat}):")
    print(
        f"  plugin on   {med_wall(on) * 1e3:8.1f} ms wall  {med_cpu(on) * 1e3:8.1f} ms cpu  {med_rss_mib(on):7.1f} MiB"
    )
    print(
        f"  plugin off  {med_wall(off) * 1e3:8.1f} ms wall  {med_cpu(off) * 1e3:8.1f} ms cpu"
        f"  {med_rss_mib(off):7.1f} MiB  (-p no:{PLUGIN})"
    )
    print(
        f"  overhead    {idle_ms:8.1f} ms wall  {idle_cpu_ms:8.1f} ms cpu  {idle_mib:7.1f} MiB"
        f"  (difference of the fastest runs: {min_ms:.1f} ms wall)"
    )
    print(f"  plugin import alone (-X importtime, after pytest): {import_ms:.1f} ms")
    spread = max(max(r.wall for r in v) - min(r.wall for r in v) for v in (on, off)) * 1e3
    print(
        f"  run-to-run spread of one kind: up to {spread:.0f} ms wall; a whole-run difference smaller"
        " than that is noise, the import figure is the precise one"
    )

    over = wall_ratio > TARGET or rss_ratio > TARGET
    if over:
        print(f"\nover target: wall {wall_ratio:.2f}x, RSS {rss_ratio:.2f}x (target {TARGET}x)")
    if args.check and over:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
