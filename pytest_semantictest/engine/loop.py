"""The per-process event loop: one loop and one RunContext for a whole pytest session (keep-alive HTTP
across tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..run_context import RunContext
from ..threads import block_handled_signals
from .wakeup import Wakeup

T = TypeVar("T")


class EventLoopRunner:
    """Runs coroutines on a private event loop that lives as long as the pytest session.

    Tasks started with :meth:`start` (spec items run ahead, :mod:`pytest_semantictest.lookahead`) progress whenever the
    loop runs, that is while any :meth:`run` call waits.
    """

    def __init__(self, context: RunContext) -> None:
        self.context = context
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: Wakeup | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            # its threads (asyncio.to_thread: hooks, name lookups) leave the handled signals to the main
            # thread (..threads); closing the loop shuts the executor down
            self._loop.set_default_executor(
                ThreadPoolExecutor(thread_name_prefix="semantictest", initializer=block_handled_signals)
            )
            self._wakeup = Wakeup(self._loop)  # a signal ends its waits at once (.wakeup)
        return self._loop

    def run(self, coro: Awaitable[T]) -> T:
        try:
            return self.loop.run_until_complete(coro)
        except BaseExceptionGroup as group:
            raise interrupt_in(group) or group  # noqa: B904

    def start(self, coro: Coroutine[object, None, T]) -> asyncio.Task[T]:
        """A task on this loop; it runs while the loop runs (any :meth:`run`)."""
        return self.loop.create_task(coro)

    def cancel_pending(self) -> None:
        """Cancel every task still on the loop and let them finish unwinding (their ``finally``)."""
        loop = self._loop
        if loop is None or loop.is_closed() or loop.is_running():
            return
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    def close(self) -> None:
        if self._loop is None:
            return
        self.cancel_pending()
        loop, self._loop = self._loop, None
        try:
            loop.run_until_complete(self.context.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            if self._wakeup is not None:
                self._wakeup.remove()
                self._wakeup = None
            loop.close()


def interrupt_in(group: BaseExceptionGroup) -> BaseException | None:
    """The Ctrl-C or SIGTERM (``KeyboardInterrupt``, ``agents.cleanup.Terminated``) or ``SystemExit``
    inside ``group``, if any. The signal handler raises it wherever the main thread is: inside a task
    group (anyio's, in httpx's connect) it arrives wrapped, and a wrapped interrupt would be one
    test's error while the session went on."""
    matched: BaseException | None = group.split((KeyboardInterrupt, SystemExit))[0]
    while isinstance(matched, BaseExceptionGroup):
        matched = matched.exceptions[0]
    return matched
