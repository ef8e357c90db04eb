"""The session's agents (``AgentPool``): one per distinct config, started on first use, released when the
session ends (under pytest-xdist one process serves every worker through ``SharedAgent``); at the end,
each agent's last read (``finish``: warnings, executions failed by a late call)."""

from __future__ import annotations

import functools
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..threads import start_daemon
from . import procs
from .config import AgentConfig
from .errors import AgentError, AgentStartError
from .hooks import SessionHooks
from .keys import agent_key, live_key
from .last_read import wait_for_others
from .live import LiveAgent
from .local_agent import LocalAgent
from .net import endpoint_address
from .shared import SharedAgent


class AgentPool:
    """The session's agents by config; ``state_dir`` set means share them across xdist workers.

    A file acquires its agents when it starts and ``idle_file`` lets go of that file's acquisitions when
    it ends (the look-ahead may already run the next file's tests on the same agent); an agent stays up
    for the next file with the same configuration. One with another configuration on
    the same port replaces it (stopped first, as highbar runs each spec's agent in turn); under
    xdist it waits until no other worker's file uses the port (``SharedAgent``).
    """

    def __init__(self, state_dir: Path | None = None) -> None:
        self.state_dir = state_dir
        self._owners: dict[str, LocalAgent | SharedAgent] = {}
        self._live: dict[str, LiveAgent] = {}
        self._in_use: dict[str, int] = {}  # process key -> acquisitions not let go of (files, clients)
        self._by_files: dict[str, Counter[str]] = {}  # file -> process key -> acquisitions not let go of
        self._retired: list[str] = []  # warnings of agents stopped before the end
        self._retired_failures: list[tuple[str, str, str]] = []  # and their executions failed by a late call
        self._finished: tuple[list[str], list[tuple[str, str, str]]] | None = None

    def get(self, key: str) -> LiveAgent:
        return self._live[key]

    def running(self, key: str) -> LiveAgent | None:
        """The agent reached through ``key`` (:func:`live_key`) once acquired, else None (not started yet)."""
        return self._live.get(key)

    def acquire(
        self, config: AgentConfig, *, observe: bool, calls_from: str = "traces", for_file: str | None
    ) -> str:
        """Start or attach the agent process for ``config``; returns the key of this way of talking to it
        (:func:`live_key`: files with other request or session settings get theirs). ``for_file`` (its
        path): held until ``idle_file`` of that file, None (an ``agent_factory`` client) until the
        session ends."""
        key = live_key(config, calls_from)
        process = agent_key(config)
        if for_file is None and key in self._live and self._in_use.get(process, 0) > 0:
            return key
        live = self._live.get(key)
        hooks = _hooks(live, config)
        self._replace_conflicts(config, process)
        handle = self._owner(process, config).acquire(observe=observe and calls_from == "traces")
        self._in_use[process] = self._in_use.get(process, 0) + 1
        if for_file is not None:
            self._by_files.setdefault(for_file, Counter())[process] += 1
        if live is None or (live.handle.pid, live.handle.traces_path) != (handle.pid, handle.traces_path):
            # first use, or the process was replaced meanwhile (another configuration used the port)
            if live is not None:
                self._retire(live)
            self._live[key] = LiveAgent(config, handle, calls_from, handle.trace_reader(), hooks)
        return key

    def _owner(self, process: str, config: AgentConfig) -> LocalAgent | SharedAgent:
        """The holder of the agent process ``process``: shared across xdist workers, or this one's."""
        owner = self._owners.get(process)
        if owner is None:
            owner = SharedAgent(self.state_dir, process, config) if self.state_dir else LocalAgent(config)
            self._owners[process] = owner
        return owner

    def start_ahead(
        self, config: AgentConfig, *, observe: bool, calls_from: str = "traces"
    ) -> Callable[[], None] | None:
        """A blocking call that starts ``config``'s agent for a later ``acquire`` (the look-ahead runs it in a
        thread while other files' tests run); None when it may not start ahead: it is known already, it
        would replace another agent on its port, or the agents are shared across xdist workers."""
        process = agent_key(config)
        if self.state_dir is not None or process in self._owners:
            return None
        if config.managed:
            port = endpoint_address(config.endpoint)[1]
            if any(
                o.config.managed and endpoint_address(o.config.endpoint)[1] == port
                for o in self._owners.values()
            ):
                return None
        owner = self._owners[process] = LocalAgent(config)
        return functools.partial(owner.start_ahead, observe=observe and calls_from == "traces")

    def started(self, config: AgentConfig) -> bool:
        """Whether ``config``'s agent was started ahead and that start is over (ready, or failed: the
        ``acquire`` says how)."""
        owner = self._owners.get(agent_key(config))
        return isinstance(owner, LocalAgent) and owner.settled

    def idle_file(self, file: str) -> None:
        """``file`` is done: the agents no other running file holds keep running, but may now be replaced."""
        for process, count in self._by_files.pop(file, Counter()).items():
            left = self._in_use.get(process, 0) - count
            self._in_use[process] = max(0, left)
            if left <= 0 and process in self._owners:
                self._owners[process].idle()

    def _replace_conflicts(self, config: AgentConfig, process: str) -> None:
        """Stop this process's agents of other configurations on ``config``'s port (idle ones)."""
        if not config.managed:
            return
        port = endpoint_address(config.endpoint)[1]
        for other, owner in list(self._owners.items()):
            if (
                other == process
                or not owner.config.managed
                or endpoint_address(owner.config.endpoint)[1] != port
            ):
                continue
            if self._in_use.get(other, 0) > 0:
                raise AgentStartError(
                    config.redactor.text(
                        f"port {port} is used by another agent of this session that is still in use "
                        "(an agent_factory client?): give the two agents different ports"
                    )
                )
            for key, live in list(self._live.items()):
                if agent_key(live.config) == other:
                    self._retire(live)
                    del self._live[key]
            if isinstance(owner, LocalAgent):
                owner.close()  # (a SharedAgent's is stopped under the port's lock, once no worker uses it)

    def _retire(self, live: LiveAgent) -> None:
        """Keep what an agent about to be stopped has to tell (after one settle time for late calls)."""
        if live._executions and live.config.settle_time_ms:
            time.sleep(live.config.settle_time_ms / 1000)
        self._retired += [*live.warnings, *live.end_warnings()]
        self._retired_failures += live.late_failures
        live._executions.clear()

    def finish(self) -> tuple[list[str], list[tuple[str, str, str]]]:
        """At the end of the session (the first call reads, after one settle time; later calls repeat it):
        the warnings to tell (untagged traces, undeclared tools) and the (test id, "failed" or "error",
        message) of every passed execution a late tool call turned."""
        if self._finished is None:
            self._wait_for_late_calls()
            late = [w for live in self._live.values() for w in live.end_warnings()]
            current = [w for live in self._live.values() for w in live.warnings]
            failures = [
                *self._retired_failures,
                *(f for live in self._live.values() for f in live.late_failures),
            ]
            self._finished = list(dict.fromkeys([*self._retired, *current, *late])), failures
        return self._finished

    def _wait_for_late_calls(self) -> None:
        """Before the last read: the other workers' last reads of agents with judges pending, then
        one settle time (the longest: every agent has had its own since its last test)."""
        used = [live for live in self._live.values() if live._executions]
        for live in used:
            if live.late_judges_pending:
                wait_for_others(self._owners.get(agent_key(live.config)))
        settle = max((live.config.settle_time_ms for live in used), default=0)
        if settle:
            time.sleep(settle / 1000)

    def warnings(self) -> list[str]:
        """Things to tell at the end (:meth:`finish`)."""
        return self.finish()[0]

    def close(self) -> None:
        """Release every agent this process acquired (the last user stops it); this process's own agents
        are stopped at once, each in a thread (each stop may wait out its grace period)."""
        owners: list[LocalAgent | SharedAgent] = list(self._owners.values())
        local = [owner for owner in owners if isinstance(owner, LocalAgent)]
        stopped = [threading.Event() for _ in local]
        for agent, done in zip(local, stopped):
            start_daemon(_close, "semantictest-agent-stop", agent, done)
        for owner in owners:
            if not isinstance(owner, LocalAgent):  # (xdist: one after another, each under its port's lock)
                _close(owner)
        interrupted = _wait_all(stopped)
        self._owners.clear()
        self._live.clear()
        self._in_use.clear()
        self._by_files.clear()
        if interrupted is not None:
            raise interrupted


def _hooks(live: LiveAgent | None, config: AgentConfig) -> SessionHooks:
    """The session hooks of the agent's earlier way of talking, else its config's, loaded at once (an
    unimportable hook fails before any agent starts)."""
    if live is not None and live.hooks is not None:
        return live.hooks
    hooks = SessionHooks(config)
    if live is None:
        hooks.load()
    return hooks


def _wait_all(stopped: list[threading.Event]) -> BaseException | None:
    """Wait until every stop is over (an Event, not Thread.join: an interrupted join may take the thread
    for ended). An interrupt meanwhile (Ctrl-C) ends every grace period at once, as one inside a stop
    does (``procs.stop_group``), the stops then finish their cleanup (trace files, watchdogs); it is
    returned, to be raised once everything is let go of."""
    interrupted: BaseException | None = None
    for done in stopped:
        while not done.is_set():
            try:
                done.wait()
            except BaseException as e:  # noqa: BLE001 - returned, and raised by the caller
                interrupted = e
                procs.kill_stopping()
    return interrupted


def _close(owner: LocalAgent | SharedAgent, done: threading.Event | None = None) -> None:
    try:
        owner.close()
    except AgentError:
        pass
    finally:
        if done is not None:
            done.set()
