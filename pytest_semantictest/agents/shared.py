"""One agent for every process of a run (pytest-xdist workers), or for one process.

``SharedAgent`` keeps ``<state_dir>/<key>.json`` under an ``flock`` on ``<key>.lock``:
the first ``acquire`` starts the agent and records it, later ones (any process) attach and add
their pid to its users, and the ``release`` that leaves no live user stops it. Users that died (a
crashed worker) are pruned whenever the state is touched; ``reap`` (the xdist controller, at the end)
stops whatever is still recorded. ``state_dir`` must belong to one run (the basetemp's parent under xdist).

One port serves one agent at a time: every start or attach holds ``port-<port>.lock``, and an agent
of another configuration recorded on the same port is stopped first, once none of its users is
*active* (``idle``: a user that finished its files but keeps the agent for later ones); while one is,
the acquirer waits (files on one port never run at once).
``local_agent.LocalAgent`` has the same API for a single process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..files import read_json, write_atomic
from ..json_types import JSONObject
from . import cleanup, procs
from .config import AgentConfig
from .errors import AgentStartError
from .net import endpoint_address, port_open
from .process import AgentProcess
from .traces import TraceReader

PORT_WAIT_POLL_S = 0.2
"""How often a worker waiting for a port held by another worker's agent looks again."""
PORT_FREE_WAIT_S = 3.0
"""How long a stopped agent's port may take to stop accepting before the next agent's start says it is in use."""


@dataclass(frozen=True)
class AgentHandle:
    """A running (or attached) agent as seen by one user."""

    endpoint: str
    traces_path: Path | None
    log_path: Path | None
    pid: int | None
    started_here: bool

    def trace_reader(self) -> TraceReader | None:
        return None if self.traces_path is None else TraceReader(self.traces_path)


class SharedAgent:
    """Cross-process sharing of one agent under a file lock; see the module docstring."""

    def __init__(self, state_dir: str | Path, key: str, config: AgentConfig) -> None:
        self.state_dir = Path(state_dir)
        self.key = key
        self.config = config
        self._held = 0
        self._process: AgentProcess | None = None
        self._cleanup_token: int | None = None
        self._hello_pid: int | None = None
        """The agent process whose trace file's hello this process saw (a replaced agent is checked again)."""

    @property
    def state_path(self) -> Path:
        return self.state_dir / f"{self.key}.json"

    def acquire(self, *, observe: bool = False) -> AgentHandle:
        """Attach to the recorded live agent or start it; this process is an active user.

        Waits while another process actively uses another agent on the same port. Raises
        ``AgentStartError`` (also when that other agent is this process's own, still in use).
        """
        if not self.config.managed:
            AgentProcess(self.config).attach(require_traces=observe)
            self._held += 1
            return AgentHandle(self.config.endpoint, self.config.traces_path(), None, None, False)
        handle = self._acquire_port(observe)
        self._held += 1
        if self._cleanup_token is None:
            self._cleanup_token = cleanup.register(self.close)
        if observe:
            self._check_hello(handle)
        return handle

    def _acquire_port(self, observe: bool) -> AgentHandle:
        """The agent, once no other agent's active users hold its port (theirs run first)."""
        port = endpoint_address(self.config.endpoint)[1]
        while True:
            with cleanup.critical(), _locked(self.state_dir / f"port-{port}.lock"):
                busy = _clear_port(self.state_dir, self.key, port)
                if not busy:
                    return self._acquire_locked(observe)
            if os.getpid() in busy:
                raise AgentStartError(
                    self.config.redactor.text(
                        f"port {port} is used by another agent of this session that is still in use here "
                        "(an agent_factory client?): give the two agents different ports"
                    )
                )
            time.sleep(PORT_WAIT_POLL_S)  # another worker's files use the port: theirs run first

    def _check_hello(self, handle: AgentHandle) -> None:
        """Tool calls are checked: the agent wrote its hello (checked once per agent process, not per
        file); if not, this acquisition is let go of."""
        if handle.started_here:
            self._hello_pid = handle.pid  # the start waited for its hello
        elif handle.pid != self._hello_pid:
            try:
                require_hello(self.config, handle)
            except AgentStartError:
                self.release()
                raise
            self._hello_pid = handle.pid

    def _acquire_locked(self, observe: bool) -> AgentHandle:
        with _locked(self.state_dir / f"{self.key}.lock"):
            state = _read_state(self.state_path)
            if "error" in state:
                raise AgentStartError(state["error"])
            if state and _live(state):
                handle = self._join(state)
            else:
                if state:
                    if _stop_recorded(state):
                        _wait_port_closed(state["endpoint"])
                    self.state_path.unlink(missing_ok=True)
                state = self._start(observe)
                handle = _handle(state, started_here=True)
            _write_state(self.state_path, state)
        return handle

    def _join(self, state: JSONObject) -> AgentHandle:
        """This process as a user of the recorded live agent (once per holder)."""
        me = os.getpid()
        users = [u for u in state.get("users", []) if procs.pid_alive(u)]
        state["users"] = users + [me] if self._held == 0 or me not in users else users
        state["idle"] = [u for u in state.get("idle", []) if u != me]
        return _handle(state, started_here=False)

    def idle(self) -> None:
        """This process's files are done with the agent for now: another configuration on the same
        port may replace it (the next ``acquire`` starts it again if so)."""
        if self._held == 0 or not self.config.managed:
            return
        with cleanup.critical(), _locked(self.state_dir / f"{self.key}.lock"):
            state = _read_state(self.state_path)
            me = os.getpid()
            if "pid" in state and me in state.get("users", []) and me not in state.get("idle", []):
                state["idle"] = [*state.get("idle", []), me]
                _write_state(self.state_path, state)

    def release(self) -> None:
        """Drop one acquisition of this process; the last live user stops the agent."""
        if self._held == 0:
            return
        self._held -= 1
        if self._held > 0:
            return
        cleanup.unregister(self._cleanup_token)
        self._cleanup_token = None
        if not self.config.managed:
            return
        with cleanup.critical(), _locked(self.state_dir / f"{self.key}.lock"):
            state = _read_state(self.state_path)
            if "pid" not in state:
                return
            users = [u for u in state.get("users", []) if procs.pid_alive(u)]
            with contextlib.suppress(ValueError):
                users.remove(os.getpid())
            if users:
                self._hand_over(state, users)
            else:
                self._stop(state)
        self._process = None

    def _hand_over(self, state: JSONObject, users: list[int]) -> None:
        """The agent stays up for its other ``users``; its watchdog now watches them."""
        state["users"] = users
        state["idle"] = [u for u in state.get("idle", []) if u in users]
        _write_state(self.state_path, state)
        if self._process is not None:
            self._process.detach()

    def _stop(self, state: JSONObject) -> None:
        """The last user stops the agent (its own, or one another worker started) and drops its record."""
        if self._process is not None and self._process.pid == state["pid"]:
            self._process.stop()
        if _stop_recorded(state):  # (another worker started it: it is not ours to wait for)
            _wait_port_closed(state["endpoint"])
        self.state_path.unlink(missing_ok=True)

    def close(self) -> None:
        """Release every acquisition this process still holds (at exit, on SIGTERM)."""
        while self._held:
            self.release()

    def _start(self, observe: bool) -> JSONObject:
        process = AgentProcess(self.config, register_cleanup=False, users=self.state_path)
        state: JSONObject = {}

        def record(spawned: AgentProcess) -> None:  # written before readiness: a reaper can find it
            assert spawned.pid is not None
            state.update(
                {
                    "key": self.key,
                    "pid": spawned.pid,
                    "pgid": spawned.pgid,
                    "start_time": procs.start_time(spawned.pid),
                    "endpoint": self.config.endpoint,
                    "traces": str(spawned.traces_path),
                    "log": str(spawned.log_path),
                    "keep_traces": self.config.keep_traces,
                    "grace": self.config.stop_grace_s,
                    "owner": os.getpid(),
                    "users": [os.getpid()],
                    "created": time.time(),
                }
            )
            _write_state(self.state_path, state)

        try:
            process.start(require_hello=observe, on_spawn=record)
        except AgentStartError as e:
            _write_state(self.state_path, {"error": str(e)})  # the other workers fail fast
            raise
        self._process = process
        return state


def reap(state_dir: str | Path) -> list[int]:
    """Stop every agent recorded in ``state_dir``, whatever its users; the pids stopped."""
    stopped: list[int] = []
    for state_path in sorted(Path(state_dir).glob("*.json")):  # (none if the folder is gone)
        if procs.stopping_at_once() and (pgid := _recorded_group(_read_state(state_path))):
            # a signal ends this process: no waiting for a worker's stop
            procs.signal_group(pgid, signal.SIGKILL)
        with cleanup.critical(), _locked(state_path.with_suffix(".lock")):
            state = _read_state(state_path)
            if "pid" in state and _stop_recorded(state):
                stopped.append(int(state["pid"]))
            state_path.unlink(missing_ok=True)
    return stopped


def reap_folder(state_dir: str | Path) -> None:
    """``reap``, then remove the folder (its lock files and worker records) at the end of a run."""
    reap(state_dir)
    shutil.rmtree(state_dir, ignore_errors=True)


def _clear_port(state_dir: Path, key: str, port: int) -> list[int]:
    """Stop every agent of another key recorded on ``port`` whose users are all idle (or gone).

    Returns the active users of one that cannot be stopped yet (empty: the port is ours).
    Called with the port's lock held.
    """
    for state_path in sorted(state_dir.glob("*.json")):
        if state_path.stem == key:
            continue
        with _locked(state_path.with_suffix(".lock")):
            state = _read_state(state_path)
            if "pid" not in state or endpoint_address(str(state.get("endpoint", "")))[1] != port:
                continue
            active = _active_users(state)
            if active and _same_process(state):
                return active
            stopped = _stop_recorded(state)
            state_path.unlink(missing_ok=True)
        if stopped:
            _wait_port_closed(state["endpoint"])
    return []


def _active_users(state: JSONObject) -> list[int]:
    """The recorded agent's users that are still alive and not idle."""
    users = [u for u in state.get("users", []) if procs.pid_alive(u)]
    return [u for u in users if u not in state.get("idle", [])]


def _wait_port_closed(endpoint: str, timeout_s: float = PORT_FREE_WAIT_S) -> None:
    """Wait (bounded) until a stopped agent's port no longer accepts: a process whose last thread is
    still exiting keeps its listening socket a moment after it looks gone to another process."""
    host, port = endpoint_address(endpoint)
    deadline = time.monotonic() + timeout_s
    while port_open(host, port, timeout=0.1) and time.monotonic() < deadline:
        time.sleep(0.02)


def _handle(state: JSONObject, *, started_here: bool) -> AgentHandle:
    return AgentHandle(
        state["endpoint"], Path(state["traces"]), Path(state["log"]), state["pid"], started_here
    )


def _same_process(state: JSONObject) -> bool:
    pid = int(state["pid"])
    recorded = state.get("start_time")
    return procs.alive_settled(pid) and (recorded is None or procs.start_time(pid) in (None, recorded))


def _live(state: JSONObject) -> bool:
    """The recorded agent still runs and its port answers."""
    if "pid" not in state or not _same_process(state):
        return False
    return port_open(*endpoint_address(state["endpoint"]))


def _recorded_group(state: JSONObject) -> int:
    """The recorded agent's process group if it is still ours to stop, else 0."""
    pgid = int(state.get("pgid") or 0)
    return pgid if pgid > 1 and ("pid" in state and _same_process(state) or procs.group_alive(pgid)) else 0


def _stop_recorded(state: JSONObject) -> bool:
    """Stop the recorded agent's group if it is still ours to stop; remove its trace file."""
    stopped = False
    pgid = _recorded_group(state)
    if pgid:
        with contextlib.suppress(Exception):
            procs.stop_group(pgid, float(state.get("grace", 5.0)))
            stopped = True
    if state.get("traces") and not state.get("keep_traces"):
        with contextlib.suppress(OSError):
            Path(state["traces"]).unlink()
    return stopped


def require_hello(config: AgentConfig, handle: AgentHandle) -> None:
    if not config.managed or handle.traces_path is None:
        return
    if TraceReader(handle.traces_path).wait_for_hello(config.hello_timeout_s) is None:
        raise AgentStartError(
            config.redactor.text(
                f"the agent answered, but wrote no hello to its trace file {handle.traces_path} within "
                f"{config.hello_timeout_s:g}s: its tracing SDK never started (it must read HIGHBAR_TRACES_URL)"
            )
        )


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _read_state(path: Path) -> JSONObject:
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(path: Path, state: JSONObject) -> None:
    write_atomic(path, json.dumps(state))
