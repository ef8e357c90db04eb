"""SharedAgent across real processes (as under pytest-xdist), reap, LocalAgent, cleanup on exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import AGENT, alive, python_processes_running, wait_gone

from pytest_semantictest.agents import (
    AgentConfig,
    AgentStartError,
    LocalAgent,
    SharedAgent,
    agent_key,
    procs,
    reap,
)

USER = Path(__file__).with_name("shared_user.py")


class User:
    """One process holding the shared agent (see shared_user.py)."""

    def __init__(self, state_dir: Path, key: str, cfg: AgentConfig) -> None:
        raw = {k: str(v) if isinstance(v, Path) else v for k, v in cfg.__dict__.items()}
        self.proc = subprocess.Popen(
            [sys.executable, str(USER), str(state_dir), key, json.dumps(raw)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both asked for above
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.handle: dict[str, Any] = json.loads(self.stdout.readline())

    def send(self, command: str) -> None:
        self.stdin.write(command + "\n")
        self.stdin.flush()

    def release(self) -> None:
        self.send("release")
        assert self.stdout.readline().strip() == "released"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.stdin, self.stdout):
            try:  # noqa: SIM105
                pipe.close()
            except BrokenPipeError:
                pass


@pytest.fixture
def users(tmp_path: Path) -> Iterator[list[User]]:
    made: list[User] = []
    yield made
    for user in made:
        user.close()
    reap(tmp_path / "state")  # whatever a failing test left behind


@pytest.fixture
def spawn(users: list[User], tmp_path: Path, make_config: Any) -> Any:
    def spawn(cfg: AgentConfig | None = None, key: str = "agent") -> User:
        user = User(tmp_path / "state", key, cfg or make_config())
        users.append(user)
        return user

    return spawn


def test_two_processes_share_one_agent(spawn, tmp_path, port):
    assert python_processes_running(AGENT, "--port", str(port)) == []
    first, second = spawn(), spawn()
    assert "error" not in first.handle, first.handle
    assert first.handle["pid"] == second.handle["pid"]
    assert python_processes_running(AGENT, "--port", str(port)) == [first.handle["pid"]]
    assert first.handle["started_here"] and not second.handle["started_here"]
    assert first.handle["traces_path"] == second.handle["traces_path"]
    pid = first.handle["pid"]
    state = json.loads((tmp_path / "state" / "agent.json").read_text())
    assert sorted(state["users"]) == sorted([first.proc.pid, second.proc.pid])
    first.release()  # the starter lets go first: the agent keeps serving the other
    assert alive(pid)
    second.release()
    assert wait_gone(pid)
    assert not (tmp_path / "state" / "agent.json").exists()
    assert not Path(first.handle["traces_path"]).exists()
    assert python_processes_running(AGENT, "--port", str(port)) == []


def test_reap_stops_a_recorded_agent_whatever_its_users(spawn, tmp_path):
    user = spawn()
    pid = user.handle["pid"]
    assert reap(tmp_path / "state") == [pid]
    assert wait_gone(pid) and not (tmp_path / "state" / "agent.json").exists()
    assert reap(tmp_path / "state") == []


def test_a_crashed_users_agent_is_stopped_by_its_watchdog(spawn, tmp_path):
    user = spawn()
    pid = user.handle["pid"]
    user.proc.send_signal(signal.SIGKILL)  # nobody releases it
    user.proc.wait()
    assert wait_gone(pid)
    assert reap(tmp_path / "state") == []  # (its record is tidied up at the end, as ever)
    assert not (tmp_path / "state" / "agent.json").exists()


def test_the_watchdog_leaves_a_shared_agent_to_its_other_users(spawn, tmp_path):
    starter, other = spawn(), spawn()
    pid = starter.handle["pid"]
    starter.proc.send_signal(signal.SIGKILL)
    starter.proc.wait()
    time.sleep(1.5)  # three of its watchdog's looks at the users
    assert alive(pid), "stopped while another process still used it"
    other.proc.send_signal(signal.SIGKILL)
    other.proc.wait()
    assert wait_gone(pid)
    third = spawn()
    assert third.handle["started_here"] and third.handle["pid"] != pid
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / "state" / "controller").write_text(f"{gone.pid} ")  # the run's controller: gone
    assert wait_gone(third.handle["pid"]), "its controller is gone: the watchdog stops it while its user runs"


def test_dead_users_are_pruned_so_the_last_live_one_stops_it(spawn):
    starter, other = spawn(), spawn()
    pid = starter.handle["pid"]
    starter.proc.send_signal(signal.SIGKILL)
    starter.proc.wait()
    other.release()
    assert wait_gone(pid)


def test_exit_without_release_cleans_up(spawn):
    user = spawn()
    user.send("exit")
    assert user.proc.wait(timeout=30) == 0
    assert wait_gone(user.handle["pid"])


def test_sigterm_cleans_up(spawn):
    user = spawn()
    user.send("hang")
    user.proc.send_signal(signal.SIGTERM)
    assert user.proc.wait(timeout=30) == -signal.SIGTERM
    assert wait_gone(user.handle["pid"])


def test_in_process_and_subprocess_share(spawn, make_config, tmp_path):
    cfg = make_config()
    mine = SharedAgent(tmp_path / "state", "agent", cfg)
    handle = mine.acquire(observe=True)
    try:
        other = spawn(cfg)
        assert other.handle["pid"] == handle.pid and handle.started_here
        reader = handle.trace_reader()
        assert reader is not None
        assert reader.inventory() == frozenset({"cancel_order", "get_order"})
    finally:
        mine.release()
    assert alive(handle.pid)  # the subprocess still uses it
    other.release()
    assert wait_gone(handle.pid)


def test_the_hello_is_checked_once_per_agent_process(spawn, make_config, tmp_path):
    """Every file that observes the agent acquires it; its trace file (which grows all session) is read
    for the hello the first time only."""
    cfg = make_config()
    other = spawn(cfg)  # another worker started it
    mine = SharedAgent(tmp_path / "state", "agent", cfg)
    try:
        handle = mine.acquire(observe=True)  # the first file: the hello is there
        assert handle.pid == other.handle["pid"] and not handle.started_here
        assert handle.traces_path is not None
        handle.traces_path.write_text("")  # a second check would now fail
        mine.acquire(observe=True)  # the next file
    finally:
        mine.close()
        other.release()


def test_a_failed_start_is_not_retried_by_other_users(spawn, make_config, tmp_path):
    cfg = make_config("--exit-at-start")
    first = spawn(cfg)
    assert "exited with code 3" in first.handle["error"]
    second = SharedAgent(tmp_path / "state", "agent", cfg)
    with pytest.raises(AgentStartError, match="exited with code 3"):
        second.acquire()


def test_a_dead_recorded_agent_is_replaced(make_config, tmp_path):
    shared = SharedAgent(tmp_path / "state", "agent", make_config())
    first = shared.acquire()
    assert first.pid is not None
    first_process = (first.pid, procs.start_time(first.pid))  # a pid alone may come back (it wraps around)
    os.killpg(first.pid, signal.SIGKILL)
    assert wait_gone(first.pid)
    again = SharedAgent(tmp_path / "state", "agent", make_config())
    second = again.acquire()
    try:
        assert second.pid is not None
        assert (second.pid, procs.start_time(second.pid)) != first_process
        assert second.started_here and alive(second.pid)
    finally:
        again.release()
        shared.release()  # nothing left to stop; must not raise
    assert wait_gone(second.pid)


def test_attach_mode_shares_nothing(make_config, tmp_path):
    with LocalAgent(make_config()).process as running:
        shared = SharedAgent(tmp_path / "state", "a", make_config(managed=False))
        handle = shared.acquire()
        assert handle.pid is None and not handle.started_here
        shared.release()
        assert alive(running.pid)


def test_local_agent_counts_users(make_config):
    local = LocalAgent(make_config())
    first = local.acquire(observe=True)
    second = local.acquire()
    assert first is second
    local.release()
    assert alive(first.pid)
    local.release()
    assert wait_gone(first.pid)
    broken = LocalAgent(make_config("--exit-at-start"))
    for _ in range(2):  # the second acquire fails at once with the same error
        with pytest.raises(AgentStartError, match="exited with code 3"):
            broken.acquire()


def test_agent_key_is_stable_and_distinct(make_config):
    assert agent_key(make_config()) == agent_key(make_config())
    assert agent_key(make_config()) != agent_key(make_config("--no-hello"))
    assert len(agent_key(make_config())) == 16


def test_observing_user_needs_a_hello_even_when_attaching(make_config, tmp_path):
    cfg = make_config("--no-hello")
    first = SharedAgent(tmp_path / "state", "agent", cfg)
    handle = first.acquire()  # no observation: fine without a hello
    second = SharedAgent(tmp_path / "state", "agent", cfg)
    with pytest.raises(AgentStartError, match="wrote no hello"):
        second.acquire(observe=True)
    state = json.loads((tmp_path / "state" / "agent.json").read_text())
    assert state["users"] == [os.getpid()]  # the failed acquire left no user behind
    first.release()
    assert wait_gone(handle.pid)


def test_sigterm_inside_a_locked_section_waits_for_its_end(tmp_path):
    script = (
        "import os, signal, sys\n"
        "from pytest_semantictest.agents import cleanup\n"
        "cleanup.register(lambda: print('cleaned', flush=True))\n"
        "with cleanup.critical():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    print('still inside', flush=True)\n"
        "print('not reached', flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["still", "inside", "cleaned"]
    assert done.returncode == -signal.SIGTERM
