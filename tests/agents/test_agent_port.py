"""One port, one agent at a time: agents of other configurations take turns.

``SharedAgent`` (xdist workers, here real processes) waits while another process actively uses
another agent on the port, and stops it once that process marks it idle; ``AgentPool`` (one
process) stops the idle agent of the previous file before starting the next file's.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import alive, wait_gone
from test_agent_shared import USER, User

from pytest_semantictest.agents import AgentStartError, SharedAgent, agent_key, reap
from pytest_semantictest.agents.pool import AgentPool


def _spawn_without_waiting(state: Path, cfg: Any) -> User:
    """A User whose handle line is not read yet: it comes only once the process has the port."""
    user = User.__new__(User)
    raw = {k: str(v) if isinstance(v, Path) else v for k, v in cfg.__dict__.items()}
    user.proc = subprocess.Popen(
        [sys.executable, str(USER), str(state), agent_key(cfg), json.dumps(raw)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert user.proc.stdin is not None and user.proc.stdout is not None  # both asked for above
    user.stdin, user.stdout = user.proc.stdin, user.proc.stdout
    return user


def _has_output(user: User, within: float) -> bool:
    with selectors.DefaultSelector() as sel:
        sel.register(user.proc.stdout, selectors.EVENT_READ)
        return bool(sel.select(timeout=within))


def test_a_worker_waits_for_the_port_then_replaces_the_idle_agent(tmp_path: Path, make_config: Any) -> None:
    state = tmp_path / "state"
    first_cfg, second_cfg = make_config(), make_config("--slow-start", "0")  # two start commands, one port
    assert agent_key(first_cfg) != agent_key(second_cfg)
    first = SharedAgent(state, agent_key(first_cfg), first_cfg)
    handle = first.acquire()
    waiting = _spawn_without_waiting(state, second_cfg)
    try:
        assert not _has_output(waiting, 2.0), "the second agent started while the first was in use"
        assert alive(handle.pid)
        first.idle()  # this process's files are done with it
        assert _has_output(waiting, 30.0), "the waiting process never got the port"
        second = json.loads(waiting.proc.stdout.readline())
        assert "error" not in second, second
        assert second["pid"] != handle.pid and alive(second["pid"])
        assert wait_gone(handle.pid)  # the idle agent was stopped to free the port
        first.release()  # its agent is gone already: nothing to stop, must not raise
        assert alive(second["pid"])
        waiting.release()
        assert wait_gone(second["pid"])
    finally:
        waiting.close()
        reap(state)


def test_an_agent_still_in_use_here_is_an_error_not_a_wait(tmp_path: Path, make_config: Any) -> None:
    state = tmp_path / "state"
    first_cfg, second_cfg = make_config(), make_config("--slow-start", "0")
    first = SharedAgent(state, agent_key(first_cfg), first_cfg)
    handle = first.acquire()
    try:
        started = time.monotonic()
        with pytest.raises(AgentStartError, match="still in use here"):
            SharedAgent(state, agent_key(second_cfg), second_cfg).acquire()
        assert time.monotonic() - started < 5
        assert alive(handle.pid)
    finally:
        first.release()
    assert wait_gone(handle.pid)


def test_the_pool_stops_the_previous_files_agent(make_config: Any) -> None:
    pool = AgentPool()
    first_cfg, second_cfg = make_config(), make_config("--slow-start", "0")
    try:
        first = pool.get(pool.acquire(first_cfg, observe=True, for_file="a.highbar.yaml"))
        pool.idle_file("a.highbar.yaml")
        second = pool.get(pool.acquire(second_cfg, observe=True, for_file="b.highbar.yaml"))
        assert wait_gone(first.handle.pid) and alive(second.handle.pid)
        with pytest.raises(AgentStartError, match="still in use"):  # the second file has not ended yet
            pool.acquire(first_cfg, observe=True, for_file="c.highbar.yaml")
        pool.idle_file("b.highbar.yaml")
        again = pool.get(pool.acquire(first_cfg, observe=True, for_file="c.highbar.yaml"))  # a new process
        assert again.handle.pid not in (first.handle.pid, second.handle.pid)
        assert wait_gone(second.handle.pid) and alive(again.handle.pid)
    finally:
        pool.close()


def test_a_file_that_ends_lets_go_of_its_own_hold_only(make_config: Any) -> None:
    """The look-ahead prepares the next file (its agents acquired, its tests running) before the
    current one ends: the end of the current file must leave the next file's hold on the agent."""
    pool = AgentPool()
    cfg, other_cfg = make_config(), make_config("--slow-start", "0")
    try:
        first = pool.get(pool.acquire(cfg, observe=True, for_file="a.highbar.yaml"))
        pool.acquire(cfg, observe=True, for_file="b.highbar.yaml")  # the next file, prepared ahead
        pool.idle_file("a.highbar.yaml")
        with pytest.raises(AgentStartError, match="still in use"):  # b still runs on it: not replaced
            pool.acquire(other_cfg, observe=True, for_file="c.highbar.yaml")
        assert alive(first.handle.pid)
        pool.idle_file("b.highbar.yaml")
        other = pool.get(pool.acquire(other_cfg, observe=True, for_file="c.highbar.yaml"))
        assert wait_gone(first.handle.pid) and alive(other.handle.pid)
    finally:
        pool.close()
