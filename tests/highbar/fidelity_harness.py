"""Run the fidelity specs (``fidelity/*.highbar.yaml``) with highbar or with pytest; per-test verdicts.

Shared by ``test_highbar_fidelity.py`` (ours against the recorded verdicts in ``fidelity/verdicts.json``)
and ``bench/highbar_side_by_side.py`` (both tools side by side, and ``--record``). Each spec reads
``${FIDELITY_PORT}``, ``${FIDELITY_PYTHON}``, ``${FIDELITY_AGENT}`` (and for attach mode, files whose
name starts with ``attach_``, ``${FIDELITY_TRACES}`` and ``${FIDELITY_HOOK}``; the agent is started here).
A verdict is ``passed``, ``failed`` or ``error`` per test name, after highbar's late re-judging.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests import forked
from tests.helpers import without_unused_plugins

HERE = Path(__file__).resolve().parent
SPECS = HERE / "fidelity"
AGENT = HERE / "fidelity_agent.py"
HOOK = SPECS / "session_hook.py"
VERDICTS = SPECS / "verdicts.json"
# Command-line runs per spec: highbar's --runs N is --semantictest-runs N.
RUNS = {"p11_min_pass_cli_runs.highbar.yaml": 5}
_MARKS = {"✓": "passed", "✗": "failed", "!": "error"}
_RESULT = re.compile(r"^    ([✓✗!]) (.+?)(?: \d+/\d+(?: \(min \d+\))?)?  \S+ms$")
_LATE = re.compile(r"^  ! (.+?): (now fails|is now unverified)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spec_files() -> list[Path]:
    return sorted(SPECS.glob("*.highbar.yaml"))


@contextmanager
def environment(spec: Path, work: Path) -> Iterator[dict[str, str]]:
    """The spec's ``${FIDELITY_*}`` values; an attach-mode spec's agent runs meanwhile."""
    port = free_port()
    env = {**os.environ, "FIDELITY_PORT": str(port), "FIDELITY_PYTHON": sys.executable,
           "FIDELITY_AGENT": str(AGENT), "FIDELITY_HOOK": str(HOOK), "COLUMNS": "400", "NO_COLOR": "1"}
    for name in ("PYTEST_ADDOPTS", "HIGHBAR_TRACES_URL"):
        env.pop(name, None)
    agent = None
    if spec.name.startswith("attach_"):
        traces = work / "traces.jsonl"
        traces.write_text("")
        env["FIDELITY_TRACES"] = str(traces)
        agent = subprocess.Popen([sys.executable, str(AGENT), "--port", str(port), "--traces", str(traces)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(port)
    try:
        yield env
    finally:
        if agent is not None:
            agent.terminate()
            agent.wait(10)


def _wait_port(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"the fidelity agent did not listen on port {port}")


def highbar_command(highbar: str, spec: Path) -> list[str]:
    runs = RUNS.get(spec.name)
    return [highbar, "run", str(spec), *(["--runs", str(runs)] if runs else [])]


def pytest_args(spec: Path, junit: Path) -> list[str]:
    """pytest's arguments for one spec (the test suite runs them in-process, ``run_ours`` in a subprocess)."""
    runs = RUNS.get(spec.name)
    return [str(spec), "-p", "no:cacheprovider", "-q", f"--junitxml={junit}",
            *(["--semantictest-runs", str(runs)] if runs else [])]


def pytest_command(spec: Path, junit: Path) -> list[str]:
    return [sys.executable, "-m", "pytest", *without_unused_plugins(()), *pytest_args(spec, junit)]


def run_highbar(highbar: str, spec: Path) -> tuple[int, dict[str, str], str]:
    """highbar's exit code, verdict per test name (late re-judging applied) and its output."""
    with tempfile.TemporaryDirectory() as tmp, environment(spec, Path(tmp)) as env:
        done = subprocess.run(highbar_command(highbar, spec), cwd=tmp, env=env, capture_output=True,
                              text=True, timeout=300)
    return done.returncode, parse_highbar(done.stdout), done.stdout + done.stderr


def parse_highbar(out: str) -> dict[str, str]:
    verdicts: dict[str, str] = {}
    for line in out.splitlines():
        if found := _RESULT.match(line):
            verdicts[found.group(2)] = _MARKS[found.group(1)]
        elif (late := _LATE.match(line)) and late.group(1) in verdicts:
            verdicts[late.group(1)] = "failed" if late.group(2) == "now fails" else "error"
    return verdicts


def run_ours(spec: Path) -> tuple[int, dict[str, str], str]:
    """pytest's exit code, verdict per test name and its output."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        copy = work / spec.name
        shutil.copy(spec, copy)
        (work / "pytest.ini").write_text("[pytest]\n")
        junit = work / "junit.xml"
        with environment(spec, work) as env:
            done = forked.run(pytest_command(copy, junit), cwd=work, env=env, text=True, timeout=300)
        verdicts = parse_junit(junit) if junit.exists() else {}
    return done.returncode, verdicts, done.stdout + done.stderr


def parse_junit(path: Path) -> dict[str, str]:
    verdicts: dict[str, str] = {}
    for case in ET.parse(path).iter("testcase"):
        kinds = {child.tag for child in case}
        status = next((word for tag, word in (("error", "error"), ("failure", "failed"), ("skipped", "skipped"))
                       if tag in kinds), "passed")
        verdicts[case.get("name", "")] = status
    return verdicts
