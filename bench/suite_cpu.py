"""Where the test suite's CPU goes, test by test: a pytest plugin and its report.

Each test's CPU is the worker's own (user + system, every thread) plus that of the processes it started
and waited for (pytest runs, agents it stopped), read from ``getrusage`` around the test's whole
protocol (setup, call, teardown). Under xdist each worker writes its own file; a module-scoped fixture
that every worker builds again shows up once per worker. Not counted: processes nobody waits for
before the session ends (agents a worker keeps for its whole session), and the xdist controller.

    PYTHONPATH=bench SUITE_CPU_DIR=/tmp/suite-cpu python -m pytest -n auto -p suite_cpu   # record
    python bench/suite_cpu.py /tmp/suite-cpu [N]                                           # the N costliest files

The figures in docs/development.md ("Where the time goes") come from it.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import IO

import pytest

_out: list[IO[str]] = []


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime


def _file() -> IO[str]:
    if not _out:
        folder = Path(os.environ.get("SUITE_CPU_DIR", "suite-cpu"))
        folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out.append((folder / f"{worker}.tsv").open("w", encoding="utf-8"))
        own, waited = _cpu()
        _out[0].write(f"START\t{own:.3f}\t{waited:.3f}\t0\n")
    return _out[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    out = _file()
    own, waited, started = *_cpu(), time.monotonic()
    try:
        return (yield)
    finally:
        own_after, waited_after = _cpu()
        out.write(
            f"{item.nodeid}\t{own_after - own:.3f}\t{waited_after - waited:.3f}\t{time.monotonic() - started:.3f}\n"
        )
        out.flush()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _out:
        own, waited = _cpu()
        _out[0].write(f"END\t{own:.3f}\t{waited:.3f}\t0\n")
        _out[0].close()


def report(folder: Path, most: int) -> str:
    """The ``most`` costliest test files: CPU seconds, seconds held a worker, and the total."""
    cpu: dict[str, float] = defaultdict(float)
    held: dict[str, float] = defaultdict(float)
    startup = 0.0
    for path in sorted(folder.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            name, own, waited, seconds = line.split("\t")
            if name == "START":
                startup += float(own)
            elif name != "END":
                cpu[name.split("::")[0]] += float(own) + float(waited)
                held[name.split("::")[0]] += float(seconds)
    lines = [f"{'CPU s':>8} {'held s':>8}  file"]
    for name in sorted(cpu, key=lambda n: -cpu[n])[:most]:
        lines.append(f"{cpu[name]:8.1f} {held[name]:8.1f}  {name}")
    lines.append(f"{sum(cpu.values()):8.1f} {sum(held.values()):8.1f}  all tests")
    lines.append(f"{startup:8.1f} {'':8}  the workers' start and collection")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 25))
