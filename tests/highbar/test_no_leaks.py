"""No process is left behind: after SIGINT or SIGTERM to pytest mid-run, and under -n 2.

Each test starts pytest as a real subprocess on a highbar spec whose agent (managed mode) is the
trace agent, and counts processes before and after by scanning /proc:

- every process of one inner run carries a unique environment variable (pytest, its xdist workers,
  the agent and the agent's own child all inherit it), so "what this run left behind" is exact even
  while other tests run agents at the same time;
- the agent itself is the process whose command line holds its script and its unique ``--port``.

The agent is started with ``--spawn-child``, so it has a child of its own in its process group:
stopping the agent must stop the whole group.

Cases: SIGINT (exit 130) and SIGTERM (exit 143) to pytest while a reply is awaited; ``-n 2``
with the worker that started the agent SIGKILLed mid-run (the other workers carry
on); ``-n 2`` with every worker SIGKILLed and no restart (only the controller's reaping at the end
can stop the agent); ``-n 2`` Ctrl-C as a terminal sends it (controller and workers). Also SIGTERM to
the workers while the shared agent is starting (it is recorded as soon as it is spawned). A normal run
(an agent with a child, and others) and an ``-n 2`` run whose tests pass or error are checked the same
way in ``test_processes.py`` (agents taking turns on a port);
a signal during an agent's grace period and a SIGKILLed pytest in ``test_stop_signals.py``.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import patience, without_unused_plugins
from tests.ports import free_port

if not Path("/proc/self/environ").exists():  # pragma: no cover - Linux only
    pytest.skip("needs /proc", allow_module_level=True)

AGENTS = Path(__file__).resolve().parents[1] / "agents"
TRACE_AGENT = AGENTS / "trace_agent.py"
SLOW_AGENT = AGENTS / "slow_agent.py"
GROUP_AGENT = Path(__file__).with_name("group_agent.py")
MARK = "SEMANTICTEST_LEAK_MARK"
# hypothesis's plugin costs ~1.5 s of imports per inner pytest (and per xdist worker) here.
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *without_unused_plugins(()), "-q", "-rA"]


# --------------------------------------------------------------------------- /proc


def _stat(pid: str) -> tuple[str, int, int] | None:
    """(state, ppid, start time in clock ticks since boot) of a process, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[19])


def now_ticks() -> int:
    """The clock-tick count since boot (what a process's start time is in), less one tick."""
    return int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK")) - 1


def running(pids: dict[int, int]) -> set[int]:
    """Which of ``pids`` (pid -> its start time, ``_stat``'s) still run: the same process (not a new
    one given a freed pid), not a zombie. Two reads of ``/proc`` where ``marked`` scans every process."""
    alive = set()
    for pid, started in pids.items():
        stat = _stat(str(pid))
        if stat is not None and stat[0] not in ("Z", "X") and stat[2] == started:
            alive.add(pid)
    return alive


def start_times(*pids: int) -> dict[int, int]:
    """pid -> start time (``running``'s key) of each of ``pids`` that exists."""
    return {pid: stat[2] for pid in pids if (stat := _stat(str(pid))) is not None}


def _live_pids(since: int = 0) -> list[str]:
    """Live processes started at tick ``since`` or later: the suite runs hundreds at once, and reading
    the environment of each in every poll cost more CPU than the runs these tests watch."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(entry)
            if (
                stat is not None and stat[0] not in ("Z", "X") and stat[2] >= since
            ):  # a zombie holds no resources
                pids.append(entry)
    return pids


def marked(mark: str, since: int = 0) -> dict[int, str]:
    """Live processes (started at ``since`` or later) carrying ``MARK=mark`` in their environment:
    pid -> command line."""
    needle = f"{MARK}={mark}".encode()
    found = {}
    for pid in _live_pids(since):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found[int(pid)] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def agents_on(port: int, since: int = 0) -> list[int]:
    """Live agent processes (trace/slow agent script) started with ``--port <port>`` (at ``since`` or later)."""
    found = []
    for pid in _live_pids(since):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        scripts = {str(TRACE_AGENT), str(SLOW_AGENT)}
        if scripts & set(argv) and any(a == "--port" and b == str(port) for a, b in itertools.pairwise(argv)):
            found.append(int(pid))
    return found


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def wait_for(
    what: str, predicate: Callable[[], object], timeout: float, proc: subprocess.Popen[str] | None = None
):
    """Poll ``predicate`` until it is true (its value), every 0.05 s for the first second, then every
    0.2 s: most events come within the second, and a scan of ``/proc`` (``marked``) at 20 a second
    through an agent's 5 s grace period cost more CPU than the run it watched."""
    timeout = patience(timeout)
    began = time.monotonic()
    deadline = began + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            pytest.fail(f"pytest exited ({proc.returncode}) before {what}:\n{out}")
        now = time.monotonic()
        if now > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05 if now - began < 1 else 0.2)


# --------------------------------------------------------------------------- running pytest


def port_answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


QUICK = """
      - name: quick {i}
        trigger: "Where is order 1042?"
        expect:
          function_calls: [{{name: get_order, params: {{order_id: "1042"}}}}]
          response: {{contains: shipped}}
"""

SLOW = """
      - name: slow {i}
        trigger: "anything"
        expect:
          response: {{contains: late}}
"""


def with_group_child(argv: list[str]) -> list[str]:
    """``argv`` (``python <agent script> ...``) through ``group_agent.py``: its ``--spawn-child`` is a
    ``sleep`` in the agent's group, not a second interpreter."""
    if argv[:1] != [sys.executable]:
        return argv
    return [sys.executable, "-S", str(GROUP_AGENT), *argv[1:]]


class Run:
    """One inner pytest run in ``tmp`` with its own marker, port and agent."""

    def __init__(
        self, tmp: Path, tests: str, count: int, *, route: str = "chat", agent: list[str] | None = None
    ) -> None:
        self.tmp = tmp
        self.route = route
        self.mark = uuid.uuid4().hex
        self.port = free_port()
        self.child_pidfile = tmp / "agent-child.pid"
        self.awaited = tmp / "slow-requests"  # the trace agent's line per /slow request, as it arrives
        argv = agent or [sys.executable, str(TRACE_AGENT), "--slow-file", str(self.awaited)]
        start = self.start_command = " ".join(
            [*with_group_child(argv), "--port", str(self.port), "--spawn-child", str(self.child_pidfile)]
        )
        body = "".join(tests.format(i=i) for i in range(count))
        (tmp / "pytest.ini").write_text("[pytest]\n")
        (tmp / "leaks.highbar.yaml").write_text(
            f"""agent:
  start: "{start}"
  endpoint: "http://127.0.0.1:{self.port}/{route}"
  health: "http://127.0.0.1:{self.port}/health"
  settle_time: 0
  startup_timeout: 20000
suites:
  - name: Leaks
    tests:
{body}"""
        )
        self.proc: subprocess.Popen[str] | None = None
        self.before: dict[int, str] = {}
        self.since = 0
        self.traces: set[Path] = set()  # the agent's trace file (from its environment)
        self.tempdir = tmp / "tmp"

    def start(self, *args: str, paths: tuple[str, ...] = ("leaks.highbar.yaml",)) -> subprocess.Popen[str]:
        """pytest ``args`` on ``paths``, a process of its own as in a user's run."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTEST_XDIST", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE"))
        }
        env[MARK] = self.mark
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # A private temp dir: the plugin's trace files and the xdist state folder land here, so what
        # this run leaves there is known exactly (other runs use /tmp at the same time).
        self.tempdir.mkdir(exist_ok=True)
        env["TMPDIR"] = str(self.tempdir)
        self.before = marked(self.mark)
        assert self.before == {}, self.before
        assert agents_on(self.port) == []
        self.since = now_ticks()  # what this run starts, the scans below look at
        self.proc = subprocess.Popen(
            [*PYTEST, *args, *paths],
            cwd=self.tmp,
            env=env,
            start_new_session=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        # the scans' clock is the processes' (a time namespace could differ)
        started = _stat(str(self.proc.pid))
        assert started is None or started[2] >= self.since, (started, self.since)
        return self.proc

    def finish(self, timeout: float = 90) -> tuple[int, str]:
        timeout = patience(timeout)
        assert self.proc is not None
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            pytest.fail(f"pytest did not exit within {timeout}s:\n{out}")
        return self.proc.returncode, out

    def agent_pid(self) -> int:
        """Wait until the agent process exists (and answers); its pid."""
        found = wait_for("the agent process", lambda: agents_on(self.port, self.since), 90, self.proc)
        pids = [
            pid for pid in found if _parent(pid) not in found
        ]  # (a child forked, not yet exec'd, shows the
        assert len(pids) == 1, f"more than one agent on port {self.port}: {pids}"  # agent's command line)
        self._note_traces(pids[0])
        wait_for("the agent to answer", lambda: port_answers(self.port), 90, self.proc)
        return pids[0]

    def _note_traces(self, pid: int) -> None:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            return
        for item in environ:
            if item.startswith(b"HIGHBAR_TRACES_URL="):
                self.traces.add(Path(item.split(b"=", 1)[1].decode()))

    def replies_awaited(self, count: int = 1) -> None:
        """Wait until ``count`` /slow requests have reached the trace agent: their tests wait for a reply."""
        wait_for(
            f"{count} test(s) waiting for a reply",
            lambda: self.awaited.exists() and len(self.awaited.read_text().splitlines()) >= count,
            60,
            self.proc,
        )

    def child_pid(self) -> int:
        wait_for(
            "the agent's child", lambda: self.child_pidfile.exists() and self.child_pidfile.read_text(), 10
        )
        return int(self.child_pidfile.read_text())

    def assert_nothing_left(self, out: str, within: float = 5.0) -> None:
        """No process of this run remains (a few seconds allowed), and the port is free."""
        deadline = time.monotonic() + within
        while (left := marked(self.mark, self.since)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == {}, f"left behind: {left}\n--- pytest output ---\n{out}"
        assert agents_on(self.port, self.since) == []
        assert not port_answers(self.port), f"something still answers on port {self.port}"
        assert list(self.tmp.glob(".semantictest/logs/*.log")), "no agent log: the agent never started"
        assert [p for p in self.traces if p.exists()] == [], "the agent's trace file was not removed"
        left_files = sorted(p.name for p in self.tempdir.glob("semantictest-*"))
        assert left_files == [], f"left in the temp dir: {left_files}"
        locks = sorted(str(p.relative_to(self.tempdir)) for p in self.tempdir.rglob("*.lock"))
        assert locks == [], f"lock files left in the temp dir (atexit never ran?): {locks}"

    def kill_all(self) -> None:
        """Last resort so a failing test leaves nothing either (not part of what is checked)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        for pid in marked(self.mark, self.since):
            self._note_traces(pid)
            try:  # noqa: SIM105
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for path in self.traces:  # only files the plugin made for this run's agent
            if path.name.startswith("semantictest-traces-"):
                path.unlink(missing_ok=True)


@pytest.fixture
def make_run(tmp_path: Path):
    runs: list[Run] = []

    def make(tests: str, count: int, *, route: str = "chat", agent: list[str] | None = None) -> Run:
        run = Run(tmp_path, tests, count, route=route, agent=agent)
        runs.append(run)
        return run

    yield make
    for run in runs:
        run.kill_all()


def workers_of(run: Run) -> list[int]:
    """The run's xdist workers: its controller's children."""
    assert run.proc is not None
    return [
        pid
        for pid in marked(run.mark, run.since)
        if (s := _stat(str(pid))) is not None and s[1] == run.proc.pid
    ]


# --------------------------------------------------------------------------- tests


def test_sigint_mid_run(make_run) -> None:
    # /slow answers after 3 s: the first test is waiting for its reply when pytest is interrupted.
    run = make_run(SLOW, 5, route="slow")
    proc = run.start()
    agent = run.agent_pid()
    child = run.child_pid()
    # the marker reaches the agent and its child: "nothing marked is left" means something
    assert agent in marked(run.mark, run.since) and child in marked(run.mark, run.since)
    run.replies_awaited()
    assert proc.poll() is None
    os.kill(proc.pid, signal.SIGINT)
    code, out = run.finish(timeout=90)
    assert code == 130, out  # highbar's (and the shell's) code for Ctrl-C
    assert "KeyboardInterrupt" in out, out
    run.assert_nothing_left(out)


def test_xdist_worker_killed_mid_run(make_run) -> None:
    # Each reply takes 0.6 s; the worker that started the agent is SIGKILLed while a test waits.
    run = make_run(QUICK, 6, agent=[sys.executable, str(SLOW_AGENT), "--delay", "0.6"])
    proc = run.start("-n", "2")
    agent = run.agent_pid()
    owner = _stat(str(agent))
    assert owner is not None
    workers = wait_for("two xdist workers", lambda: len(workers_of(run)) == 2 and workers_of(run), 90, proc)
    assert owner[1] in workers, f"the agent's parent {owner[1]} is not a worker {workers}"
    time.sleep(0.5)
    os.kill(owner[1], signal.SIGKILL)
    code, out = run.finish()
    assert code == 1, out  # the crashed worker's test fails; the others still ran
    assert "crashed" in out, out
    run.assert_nothing_left(out)


def test_xdist_ctrl_c_mid_run(make_run) -> None:
    # A terminal's Ctrl-C reaches the controller and its workers (one process group), never the
    # agent (it runs in a session of its own): the plugin must stop it.
    run = make_run(SLOW, 4, route="slow")
    proc = run.start("-n", "2")  # (the controller forwards its SIGINT too)
    run.agent_pid()
    workers = wait_for("two xdist workers", lambda: len(workers_of(run)) == 2 and workers_of(run), 90, proc)
    run.replies_awaited()
    for pid in [proc.pid, *workers]:
        os.kill(pid, signal.SIGINT)
    code, out = run.finish(timeout=90)
    assert code == 130, out
    run.assert_nothing_left(out)


def test_xdist_all_workers_killed_controller_reaps(make_run) -> None:
    # No worker is left to release the agent: only the controller's reaping at the end can stop it.
    run = make_run(QUICK, 6, agent=[sys.executable, str(SLOW_AGENT), "--delay", "1"])
    proc = run.start("-n", "2", "--max-worker-restart=0")
    agent = run.agent_pid()
    workers = wait_for("two xdist workers", lambda: len(workers_of(run)) == 2 and workers_of(run), 90, proc)
    time.sleep(0.5)
    # running, used by workers that SIGKILL leaves no chance to release it
    assert agent in marked(run.mark, run.since)
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    # (not asserted after the kills: the controller may already have noticed and reaped it)
    code, out = run.finish()
    assert code != 0, out
    assert "crashed" in out, out
    run.assert_nothing_left(out)


def test_sigterm_mid_run(make_run) -> None:
    # The same promise for a terminated pytest: it stops its agent.
    run = make_run(SLOW, 5, route="slow")
    proc = run.start()
    run.agent_pid()
    run.child_pid()
    run.replies_awaited()
    os.kill(proc.pid, signal.SIGTERM)
    code, out = run.finish(timeout=90)
    assert code == 128 + signal.SIGTERM, (code, out)  # unwound like Ctrl-C, as highbar does
    run.assert_nothing_left(out)


def test_xdist_sigterm_to_workers_while_agent_starts(make_run) -> None:
    # The agent needs 3 s before it listens; the workers are terminated (as a CI cancel would) meanwhile.
    run = make_run(QUICK, 4, agent=[sys.executable, str(TRACE_AGENT), "--slow-start", "3"])
    proc = run.start("-n", "2", "--max-worker-restart=0")
    wait_for("the agent process", lambda: agents_on(run.port, run.since), 90, proc)
    workers = wait_for("two xdist workers", lambda: len(workers_of(run)) == 2 and workers_of(run), 90, proc)
    time.sleep(0.5)
    for pid in workers:
        os.kill(pid, signal.SIGTERM)
    code, out = run.finish()
    assert code != 0, out
    run.assert_nothing_left(out, within=2)
