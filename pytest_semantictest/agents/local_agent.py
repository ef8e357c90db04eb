"""One agent of one pytest process (no xdist): the first ``acquire`` starts (or attaches), the last
``release`` stops; a start may run ahead in another thread (``start_ahead``)."""

from __future__ import annotations

import threading

from .config import AgentConfig
from .errors import AgentStartError
from .process import AgentProcess
from .shared import AgentHandle, require_hello


class LocalAgent:
    """Single-process mode: the first ``acquire`` starts (or attaches), the last ``release`` stops."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.process = AgentProcess(config)
        self._users = 0
        self._handle: AgentHandle | None = None
        self._error: AgentStartError | None = None
        self._hello_seen = False
        """Whether its trace file's hello was seen: checked once, not again for every file that uses it."""
        self._starting = threading.Lock()  # held by a start ahead (another thread) until it is done

    @property
    def settled(self) -> bool:
        """Started (or attached), or failed to: no start under way."""
        return not self._starting.locked() and (self._handle is not None or self._error is not None)

    def start_ahead(self, *, observe: bool = False) -> None:
        """Start (or attach) now, for an ``acquire`` later: run in a thread of its own while other tests
        run (the look-ahead). A failure is kept for that ``acquire`` to raise."""
        with self._starting:
            if self._handle is None and self._error is None:
                try:
                    self._open(observe)
                except AgentStartError:
                    pass  # (kept in _error)
                except Exception as e:  # noqa: BLE001 - a thread's failure must reach the acquire
                    self._error = AgentStartError(f"the agent could not be started: {e}")

    def acquire(self, *, observe: bool = False) -> AgentHandle:
        """The running agent, started or checked on first use (a start ahead finishes first). Raises
        ``AgentStartError``. A start that failed is not retried: every later ``acquire`` raises the same error.
        """
        with self._starting:
            return self._acquire(observe)

    def _open(self, observe: bool) -> AgentHandle:
        try:
            self.process.open(observe=observe)
        except AgentStartError as e:
            self._error = e
            raise
        p = self.process
        handle = self._handle = AgentHandle(
            self.config.endpoint, p.traces_path, p.log_path, p.pid, self.config.managed
        )
        self._hello_seen = observe  # the start waited for it
        return handle

    def _acquire(self, observe: bool) -> AgentHandle:
        if self._error is not None:
            raise AgentStartError(str(self._error))
        handle = self._handle
        if handle is None:
            handle = self._open(observe)
        elif observe and self.config.managed:
            if not self._hello_seen:  # (its first start did not observe: a reply-only file came first)
                require_hello(self.config, handle)
                self._hello_seen = True
        elif observe:
            self.process.attach(require_traces=True)
        self._users += 1
        return handle

    def idle(self) -> None:
        """Nothing to record in one process: the pool knows which agents its files still use."""

    def release(self) -> None:
        """One user less; the last one stops the agent."""
        self._users = max(0, self._users - 1)
        if self._users == 0:
            self.close()

    def close(self) -> None:
        """Stop the agent whatever the count (idempotent); a start ahead under way is cancelled."""
        if not self._starting.acquire(blocking=False):
            self.process.cancel()  # the starting thread gives up within one poll
            self._starting.acquire()
        try:
            self._users = 0
            self._handle = None
            self.process.stop()
        finally:
            self._starting.release()
