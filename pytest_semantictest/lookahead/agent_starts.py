"""Files the look-ahead walks into: prepared once their agents run, and agents started ahead. When the
walk reaches a file whose agents are not running, they start in a thread of their own while the tests
before that file run (at most ``AT_ONCE`` starts at a time); when one is ready, ``on_ready`` lets the
walk go on into that file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from ..threads import start_daemon
from .case_runs import prepared

if TYPE_CHECKING:
    from ..agents.pool import AgentPool
    from ..spec_nodes import SpecFileNode

AT_ONCE = 4
"""Agent starts under way at once: each is a new interpreter or server, CPU the tests running meanwhile
need too (on a 2-core runner a burst of starts would slow their replies)."""


class AgentStarts:
    """The agents this session's look-ahead started ahead, by spec file."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_ready: Callable[[], None]) -> None:
        self._loop = loop
        self._on_ready = on_ready
        self._asked: set[int] = set()
        # files whose preparation failed: their setup says why when reached
        self._unprepared: set[int] = set()
        self._under_way = 0
        self.stopped = False

    def ready(self, pool: AgentPool | None, spec_file: SpecFileNode) -> bool:
        """Whether ``spec_file`` is prepared, preparing it when its agents run (or asking for them to be
        started ahead when they do not)."""
        if prepared(spec_file):
            return True
        if pool is None or id(spec_file) in self._unprepared:
            return False
        from ..agents.config import AgentConfig

        if any(
            pool.running(req.key) is None
            and not (isinstance(req.config, AgentConfig) and pool.started(req.config))
            for req in spec_file.suite.agents
        ):
            self.request(pool, spec_file)
            return False
        try:
            spec_file.prepare()
        except (Exception, pytest.fail.Exception):  # (prepare's Failed is a BaseException) the file's  # noqa: BLE001
            self._unprepared.add(id(spec_file))  # own setup reports it when the file is reached, not
            return False  # the test running now
        return prepared(spec_file)

    def request(self, pool: AgentPool, spec_file: SpecFileNode) -> None:
        """Start the agents of ``spec_file`` that the pool may start ahead (once per file)."""
        from ..agents.config import AgentConfig

        if self.stopped or id(spec_file) in self._asked or self._under_way >= AT_ONCE:
            return
        self._asked.add(id(spec_file))
        starts = [
            pool.start_ahead(req.config, observe=req.observe, calls_from=req.calls_from)
            for req in spec_file.suite.agents
            if isinstance(req.config, AgentConfig) and pool.running(req.key) is None
        ]
        calls = [start for start in starts if start is not None]
        if not calls:
            return
        self._under_way += 1

        def work() -> None:
            try:
                for call in calls:
                    call()
            finally:
                try:  # noqa: SIM105
                    self._loop.call_soon_threadsafe(self._done)
                except RuntimeError:  # the loop is closed: the session is over
                    pass

        start_daemon(work, "semantictest-agent-start")

    def _done(self) -> None:
        self._under_way -= 1
        if not self.stopped:
            self._on_ready()
