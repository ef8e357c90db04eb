#!/usr/bin/env python3
"""Benchmark: what file detection costs a session that holds JSON fixtures which are not suites.

Generates into a temp folder ``--n`` (default 100) non-spec ``*.json`` fixture files that contain
``"tests"`` (a test-report-like document, ``results[*].tests`` nested, about ``--kb`` KB each), plus
one SemanticTest suite, one compliance file, one Yao file, a README.md and a data ``*.jsonl``.
Prints, as medians over ``--repeat`` runs:

- in-process: the time of every format's detector over all the folder's files (what
  ``pytest_collect_file`` asks per file), in ms in total and per fixture file, next to the rule
  detection used before the sniff (read, then ``json.loads`` every ``*.json`` that contains
  ``"tests"``), measured the same way, interleaved;
- whole runs: ``pytest --co -q`` of a folder with only the fixtures, the README and the data file
  (no spec file, so no loader is imported), with the plugin and with ``-p no:semantictest`` (fresh
  interpreters, from the folder, which has its own empty ``pytest.ini``): wall time and the child's
  CPU time; the difference is the plugin's idle cost plus detection for these files (wall time is
  noisy on a busy machine: compare CPU, and the in-process figure).

Usage::

    python bench/bench_detect.py [--n 100] [--kb 70] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLEAN_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")


def fixture(i: int, kb: int) -> str:
    """A JSON report with ``tests`` arrays nested inside ``results``: not a suite."""
    per = 1850  # bytes of one indented result entry
    results = [
        {
            "id": j,
            "tests": [{"name": f"t{k}", "ok": True, "ms": k * 1.5} for k in range(20)],
            "meta": {"x": "y" * 20},
        }
        for j in range(max(1, kb * 1024 // per))
    ]
    return json.dumps({"name": f"fixture {i}", "results": results}, indent=2)


def populate(folder: Path, n: int, kb: int, specs: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    for i in range(n):
        (folder / f"report_{i}.json").write_text(fixture(i, kb))
    (folder / "README.md").write_text("# Fixtures\n\nNothing to see.\n")
    (folder / "data.jsonl").write_text('{"input": "a", "output": "b"}\n' * 100)
    if not specs:
        return
    (folder / "suite.json").write_text(
        json.dumps(
            {
                "name": "s",
                "tests": [
                    {
                        "id": "t",
                        "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "x"}],
                        "assertions": {"x": 1},
                    }
                ],
            }
        )
    )
    (folder / "hello.md").write_text(
        "---\nname: h\nversion: 1\ntransport: completions\n---\n\n## Test Cases\n\n"
        "### 1. Hi\n\n**Request:**\nGET `/x`\n"
    )
    (folder / "agent_test.jsonl").write_text(
        '{"id": "a", "input": "hi", "assert": {"type": "contains", "value": "x"}}\n'
    )


def detect_ms(folder: Path) -> float:
    """All detectors over all files, in-process (the context is built once, as in a session)."""
    from pytest_semantictest.formats.detect import FORMATS, CollectContext

    ctx = CollectContext(folder, folder, {}, lambda name: None, ())
    files = sorted(p for p in folder.iterdir() if p.is_file())
    start = time.perf_counter()
    for path in files:
        for _name, detect, _module in FORMATS:
            needs = getattr(detect, "needs_context", None)
            if detect(path, ctx if needs is not None and needs(path) else None):
                break
    return (time.perf_counter() - start) * 1000


def full_parse_ms(folder: Path) -> float:
    """The former SemanticTest rule over the same files: a full ``json.loads`` of every candidate."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".json")
    start = time.perf_counter()
    for path in files:
        raw = path.read_bytes()
        if b'"tests"' in raw:
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            isinstance(data, dict) and isinstance(data.get("tests"), list)
    return (time.perf_counter() - start) * 1000


def run_ms(folder: Path, *extra: str) -> tuple[float, float]:
    """(wall ms, the child's CPU ms: user + sys, less sensitive to other load) of one ``pytest --co``."""
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    argv = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    took = (time.perf_counter() - start) * 1000
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 5):
        sys.exit(f"bench_detect: {' '.join(argv)} exited {code}:\n{out}")
    return took, (usage.ru_utime + usage.ru_stime) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--kb", type=int, default=70)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-detect-") as tmp:
        folder, idle = Path(tmp) / "all", Path(tmp) / "fixtures"
        populate(folder, args.n, args.kb)
        populate(idle, args.n, args.kb, specs=False)
        size = sum(p.stat().st_size for p in folder.glob("report_*.json")) / args.n / 1024
        detect_ms(folder)  # warm the file cache and imports
        now, before = [], []
        for _ in range(args.repeat):
            now.append(detect_ms(folder))
            before.append(full_parse_ms(folder))
        inproc, parsed = statistics.median(now), statistics.median(before)
        with_plugin, without = [], []
        for _ in range(args.repeat):
            with_plugin.append(run_ms(idle))
            without.append(run_ms(idle, "-p", "no:semantictest"))
        on, off = statistics.median(w for w, _ in with_plugin), statistics.median(w for w, _ in without)
        on_cpu, off_cpu = (
            statistics.median(c for _, c in with_plugin),
            statistics.median(c for _, c in without),
        )
    print(
        f'{args.n} non-spec fixture files with "tests" ({size:.0f} KB each) + 5 other files, '
        f"median of {args.repeat}"
    )
    print(
        f"  detection in-process, all formats:        {inproc:8.2f} ms total, "
        f"{inproc / args.n:6.3f} ms per fixture file"
    )
    print(
        f"  former rule (json.loads), .json only:     {parsed:8.2f} ms total, "
        f"{parsed / args.n:6.3f} ms per fixture file"
    )
    print(f"  pytest --co of the fixtures, plugin:      wall {on:8.1f} ms   cpu {on_cpu:8.1f} ms")
    print(f"  pytest --co of the fixtures, no plugin:   wall {off:8.1f} ms   cpu {off_cpu:8.1f} ms")
    print(
        f"  difference (idle cost + detection):       wall {on - off:+8.1f} ms   cpu {on_cpu - off_cpu:+8.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
