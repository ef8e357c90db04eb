"""The suite's forked pytest processes (``tests/forked.py``) behave as fresh ``python -m pytest`` ones."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import forked

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]

pytestmark = pytest.mark.skipif(not forked.ENABLED, reason="SEMANTICTEST_TEST_FORK=0: nothing is forked")

FOLDER = {
    "pytest.ini": "[pytest]\n",
    "tests/__init__.py": "",
    "tests/helpers.py": "WHO = 'the run'\n",
    "tests/test_env.py": """
import os, sys, warnings
from tests.helpers import WHO
import onpath

def test_what_the_run_sees():
    print("cwd", os.getcwd())
    print("var", os.environ.get("FORKED_CHECK"))
    print("who", WHO, onpath.NAME)
    print("argv0", os.path.basename(sys.argv[0]), sys.path[0] == os.getcwd())
    print("stdin", repr(sys.stdin.read()))
    sys.stderr.write("to stderr\\n")

def test_fails():
    assert 1 == 2
""",
}


def _stage(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    for name, text in FOLDER.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "onpath.py").write_text("NAME = 'from PYTHONPATH'\n")
    env = {**os.environ, "FORKED_CHECK": "set for this run", "PYTHONPATH": str(lib)}
    return tmp_path, env


def _normal(output: str) -> str:
    return re.sub(r"in \d+\.\d+s", "in Ns", output)


def test_a_forked_run_prints_and_exits_as_a_fresh_one(tmp_path: Path) -> None:
    folder, env = _stage(tmp_path)
    argv = [*PYTEST, "-s", "-q", "tests"]
    fresh = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    done = forked.run(argv, cwd=folder, env=env, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert (done.returncode, _normal(done.stdout), done.stderr) == (fresh.returncode, _normal(fresh.stdout), fresh.stderr)
    assert done.returncode == 1 and "1 failed, 1 passed" in done.stdout
    for line in (f"cwd {folder}", "var set for this run", "who the run from PYTHONPATH", "argv0 __main__.py True",
                 "stdin ''"):
        assert line in done.stdout, done.stdout
    assert done.stderr == "to stderr\n"


def test_a_forked_run_is_a_process_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_wait.py").write_text(
        "import os, time\ndef test_wait():\n    open('pid', 'w').write(str(os.getpid()))\n    time.sleep(60)\n")
    proc = forked.Popen([*PYTEST, "-q"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert isinstance(proc, forked.Forked)
    deadline = time.monotonic() + 60
    while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    assert int((tmp_path / "pid").read_text()) == proc.pid != os.getpid()
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED and "KeyboardInterrupt" in out, out
    killed = forked.Popen([*PYTEST, "-q"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with pytest.raises(subprocess.TimeoutExpired):
        killed.wait(0.2)
    killed.kill()
    assert killed.wait(30) == -signal.SIGKILL


def test_what_a_fork_cannot_take_on_starts_a_fresh_interpreter() -> None:
    env = {**os.environ, "PYTHONWARNINGS": "error::DeprecationWarning"}  # read at start-up only
    for proc in (forked.Popen([*PYTEST, "--version"], env=env, stdout=subprocess.DEVNULL),
                 forked.Popen([sys.executable, "-c", "pass"])):  # (not pytest)
        assert isinstance(proc, subprocess.Popen)
        assert proc.wait(60) == 0


WHERE = """
import os
import pytest

@pytest.mark.parametrize("n", range(4))
def test_where(n, worker_id):
    with open(f"ppid-{worker_id}", "w") as f:
        f.write(str(os.getppid()))
    assert n != 3
"""


def _parents(folder: Path) -> set[int]:
    return {int(p.read_text()) for p in folder.glob("ppid-gw*")}


def test_the_xdist_workers_of_an_in_process_run_are_forked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_where=WHERE)
    result = pytester.runpytest_inprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    assert _parents(pytester.path) == {forked._the_server().pid}  # the zygote, not this process


@pytest.mark.parametrize("fork_workers", [True, False], ids=["forked-workers", "fresh-workers"])
def test_a_forked_xdist_run_forks_its_workers_unless_told_not_to(tmp_path: Path, fork_workers: bool) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_where.py").write_text(WHERE)
    proc = forked.Popen([*PYTEST, "-n", "2", "-q"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True, fork_xdist_workers=fork_workers)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "1 failed, 3 passed" in out, out
    assert _parents(tmp_path) == ({forked._the_server().pid} if fork_workers else {proc.pid})
