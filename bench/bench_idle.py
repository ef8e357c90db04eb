#!/usr/bin/env python3
"""Benchmark: the plugin's idle cost, one trivial test with the plugin and with ``-p no:semantictest``.

Both kinds run in the same invocation, alternating, each in a fresh ``python -m pytest -q -p
no:cacheprovider`` from a temp folder holding one ``test_one.py`` and an empty ``pytest.ini`` (the
project's own ini does not apply). Printed: the medians of wall time and of the child's CPU time
(user + sys, from ``os.wait4``: less sensitive to other load on the machine), their difference and
ratio, and the plugin's import time from ``-X importtime``. Target: under 20 ms.

Usage::

    python bench/bench_idle.py [--repeat 15] [--check]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 20.0
CLEAN_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTHONDONTWRITEBYTECODE")


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env


def run_once(folder: Path, *extra: str) -> tuple[float, float]:
    """(wall ms, CPU ms) of one pytest run that must report exactly one passed test."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, "test_one.py"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=folder, env=_env(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or not re.search(r"\b1 passed\b", out):
        sys.exit(f"bench_idle: the run {' '.join(argv)} did not pass one test:\n{out}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def import_ms(folder: Path) -> float:
    """The plugin package's own cumulative import time (``-X importtime``; pytest, which a run has
    imported anyway, is imported first), in ms."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import pytest; import pytest_semantictest.plugin"],
        cwd=folder,
        env=_env(folder),
        capture_output=True,
        text=True,
        check=True,
    )
    found = [
        int(m.group(1))
        for m in re.finditer(r"\|\s*(\d+) \| +pytest_semantictest\.plugin$", proc.stderr, re.M)
    ]
    return found[-1] / 1000 if found else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15, help="measured runs of each kind (default 15)")
    parser.add_argument(
        "--warmup", type=int, default=2, help="unmeasured runs of each kind first (default 2)"
    )
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 if the CPU difference is over {TARGET_MS:g} ms"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (folder / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n", encoding="utf-8")
        kinds = {"plugin": (), "no plugin": ("-p", "no:semantictest")}
        for _ in range(args.warmup):
            for extra in kinds.values():
                run_once(folder, *extra)
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
        for n in range(args.repeat):
            order = list(kinds) if n % 2 == 0 else list(reversed(kinds))
            for kind in order:
                results[kind].append(run_once(folder, *kinds[kind]))
        imported = import_ms(folder)
    med = {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for k, v in results.items()
    }
    print(f"one trivial test, {args.repeat} runs of each kind (medians)")
    for kind, (wall, cpu) in med.items():
        print(f"  {kind:<10} wall {wall:7.1f} ms   cpu {cpu:7.1f} ms")
    wall_diff = med["plugin"][0] - med["no plugin"][0]
    cpu_diff = med["plugin"][1] - med["no plugin"][1]
    print(
        f"idle cost: wall {wall_diff:+.1f} ms (ratio {med['plugin'][0] / med['no plugin'][0]:.3f}), "
        f"cpu {cpu_diff:+.1f} ms (ratio {med['plugin'][1] / med['no plugin'][1]:.3f})"
    )
    print(f"import pytest_semantictest.plugin: {imported:.1f} ms")
    ok = cpu_diff < TARGET_MS
    print(f"target idle cost < {TARGET_MS:g} ms (cpu): {'PASS' if ok else 'FAIL'}")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    raise SystemExit(main())
