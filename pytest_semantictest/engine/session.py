"""One event loop and one RunContext for a whole test session (keep-alive HTTP across tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from .context import RunContext

T = TypeVar("T")


class Session:
    """Runs coroutines on a private loop that lives as long as the pytest session."""

    def __init__(self, context: RunContext) -> None:
        self.context = context
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        if self._loop is None:
            return
        loop, self._loop = self._loop, None
        try:
            loop.run_until_complete(self.context.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
