"""What the look-ahead uses of the session's runtime, as a Protocol (the runtime is of the pytest layer
above: it registers the look-ahead and passes itself in)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

import pytest

if TYPE_CHECKING:
    from ..agents.pool import AgentPool
    from ..engine.loop import EventLoopRunner
    from ..run_context import RunContext

T = TypeVar("T")


class Services(Protocol):
    """What the look-ahead uses of the session's runtime (``runtime.Runtime``, which registers it)."""

    @property
    def context(self) -> RunContext: ...

    @property
    def agent_pool(self) -> AgentPool | None: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def loop_runner(self) -> EventLoopRunner: ...

    @property
    def lookahead_gates(self) -> list[Callable[[pytest.Item], str | None]]: ...

    def run(self, coro: Awaitable[T]) -> T: ...
