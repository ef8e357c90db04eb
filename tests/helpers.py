"""Small helpers shared by the plugin's tests."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_semantictest.api import SuiteResult, run_suite
from pytest_semantictest.databus import DataBus
from pytest_semantictest.resolve import Resolver
from pytest_semantictest.run_context import RunContext
from pytest_semantictest.step import StepContext

T = TypeVar("T")


PATIENCE = max(1.0, float(os.environ.get("SEMANTICTEST_TEST_PATIENCE") or 0))
"""How much longer than on an idle machine the suite waits for an event before it gives up
(``SEMANTICTEST_TEST_PATIENCE``, default 1, at least 1). The waits are deadlines, not timings: a
test goes on as soon as what it waits for happens, so only a test that would fail anyway waits
longer."""


def patience(seconds: float) -> float:
    """A deadline for waiting on an event (an agent started, a worker up, a process ended), scaled for
    a loaded machine (:data:`PATIENCE`)."""
    return seconds * PATIENCE


def bus_of(slots: dict[str, Any]) -> DataBus:
    """A real DataBus holding ``slots``, as a pipeline left it for the checks."""
    bus = DataBus()
    for slot, value in slots.items():
        bus.set(slot, value)
    return bus


def step_context(
    run_context: RunContext | None = None,
    bus: DataBus | None = None,
    *,
    repeat: int = 0,
    execution_id: str = "t",
) -> StepContext:
    """A real step context, as the engine builds it (a block reads its typed fields, never a stand-in's):
    a fresh run context (no LLM, no agents; the caller closes its HTTP pool) unless one is given."""
    run_context = run_context or RunContext(env={})
    bus = bus if bus is not None else DataBus()
    resolver = Resolver(bus, {}, run_context.env, run_context.secret_env)
    return StepContext(run_context, bus, resolver, repeat=repeat, execution_id=execution_id)


def suite(*tests: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"name": "t", **top, "tests": list(tests)}


def test_case(pipeline: list[dict[str, Any]], assertions: dict[str, Any], id: str = "t") -> dict[str, Any]:  # noqa: A002
    return {"id": id, "pipeline": pipeline, "assertions": assertions}


def mock(data: Any, output: str = "d", **extra: Any) -> dict[str, Any]:
    return {"block": "MockData", "config": {"data": data}, "output": output, **extra}


def run_one(pipeline: list[dict[str, Any]], assertions: dict[str, Any], **top: Any) -> Any:
    """Run one test and return its Verdict."""
    result: SuiteResult = run_suite(suite(test_case(pipeline, assertions), **top))
    return result.verdict


def run_pytest(pytester: pytest.Pytester, *args: str, own_process: bool = False) -> pytest.RunResult:
    """pytest on the pytester folder: in-process (the root conftest isolates the runs; under ``-n`` the
    controller runs here and its workers are their own interpreters, as always), unless
    ``own_process``: a check that nothing (a secret) is printed must see what reaches the file
    descriptors, not only ``sys.stdout``."""
    if own_process:
        return pytester.runpytest_subprocess(*args, timeout=240)
    return pytester.runpytest_inprocess(*args)


# Installed pytest plugins that inner pytest runs do not use: runs in their own interpreter leave them
# out. hypothesis and anyio cost ~0.2 s of CPU per inner pytest and per xdist worker, pytest-asyncio
# ~0.06 s; pytest's unraisableexception ends each process with full garbage collections (~0.08 s
# there; without it an unraisable exception goes to Python's own hook, into the test's captured
# stderr); pytest-benchmark ~0.02 s, and it left a ``.benchmarks/`` folder in each run's folder. A run that needs one of them (an ``async def`` test; a user's run, warnings and all:
# ``tests/reports/test_user_run.py``) passes ``-p asyncio`` or ``-p unraisableexception``, which
# pytest reads after these and which loads it again.
UNUSED_PLUGINS = ("hypothesispytest", "anyio", "asyncio", "unraisableexception", "benchmark")
WITHOUT_UNUSED_PLUGINS = tuple(arg for plugin in UNUSED_PLUGINS for arg in ("-p", f"no:{plugin}"))
HTML_PLUGINS = ("html", "html_fixtures", "metadata")
"""pytest-html and what it needs: only a run that writes an HTML report (``--html``) uses them."""


def writes_html_report(args: Sequence[object]) -> bool:
    """Whether a run with ``args`` writes an HTML report (``--html``): it needs :data:`HTML_PLUGINS`."""
    return any(str(arg).startswith("--html") for arg in args)


def without_unused_plugins(args: Sequence[str]) -> tuple[str, ...]:
    """The ``-p no:...`` arguments for an inner run with ``args``: :data:`UNUSED_PLUGINS` but those
    ``args`` load (``-p asyncio``), and :data:`HTML_PLUGINS` unless it writes an HTML report."""
    loaded = {str(args[i + 1]) for i in range(len(args) - 1) if args[i] == "-p"}
    unused = [p for p in UNUSED_PLUGINS if p not in loaded] + (
        [] if writes_html_report(args) else list(HTML_PLUGINS)
    )
    return tuple(a for p in unused for a in ("-p", f"no:{p}"))


def env_number(name: str, default: float) -> float:
    """A positive number from the environment variable ``name`` (a test-suite knob), ``default`` if unset."""
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise pytest.UsageError(f"{name} must be a positive number, got {raw!r}")
    return value


FUZZ_SCALE = env_number("SEMANTICTEST_FUZZ_SCALE", 1)
"""Scales every property campaign's examples (``SEMANTICTEST_FUZZ_SCALE=10`` for a long hunt)."""


def fuzz_examples(n: int) -> int:
    """A property campaign's number of examples: ``n`` in the suite's run, times :data:`FUZZ_SCALE`."""
    return max(1, round(n * FUZZ_SCALE))


def pytest_process(cwd: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``python -m pytest *args`` in ``cwd`` in its own process, with none
    of this session's pytest or xdist variables (a shared run that several tests then check, where
    pytester is one test's)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_XDIST", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST"))
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", *without_unused_plugins(args), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def xdist_outcomes(output: str) -> dict[str, str]:
    """node id -> outcome word (PASSED, FAILED, ...) from the ``[gw0] [ 50%] PASSED id`` lines of a
    ``-v`` run under xdist."""
    return {m[2]: m[1] for m in re.finditer(r"^\[gw\d+\] \[\s*\d+%\] ([A-Z]+) (\S+)", output, re.M)}


def once_per_session(
    request: pytest.FixtureRequest,
    name: str,
    produce: Callable[[Path], T],
    dump: Callable[[T], Any],
    load: Callable[[Any], T],
) -> T:
    """``produce(folder)`` once for the whole session, also under xdist: the first worker that needs
    it makes it (the others wait on a lock) and leaves ``dump(result)`` as JSON for them to ``load``
    (xdist's recipe for a session fixture that runs once). Many tests checking one expensive run."""
    factory = request.getfixturevalue("tmp_path_factory")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return produce(factory.mktemp(name))
    shared = factory.getbasetemp().parent / f"shared-{name}"  # the session's, beside each worker's
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "result.json"
        if done.exists():
            return load(json.loads(done.read_text()))
        result = produce(shared / "run")
        done.write_text(json.dumps(dump(result)))
        return result


SIGBLK = "print([line.split()[1] for line in open('/proc/self/status') if line.startswith('SigBlk')][0])"
"""A ``python -c`` script that prints the signal mask its process started with (``SigBlk``, hex)."""


def signal_set(mask_hex: str) -> set[int]:
    """The signal numbers of a ``/proc`` ``SigBlk``/``SigIgn`` mask (hex)."""
    mask = int(mask_hex, 16)
    return {n for n in range(1, 65) if mask & (1 << (n - 1))}


@contextlib.contextmanager
def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threading HTTP server on 127.0.0.1 with ``handler``, for as long as the block runs: its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
