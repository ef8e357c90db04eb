"""A synchronous-or-async handle on a running agent, for Python tests (the ``agent`` fixtures)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from ..json_types import JSONObject
from .correlate import new_test_id
from .live import LiveAgent

if TYPE_CHECKING:
    from ..llm.fixtures import Run


@dataclass
class AgentClient:
    """Talk to an agent the plugin started or attached: ``send(message)`` -> reply and tool calls."""

    live: LiveAgent
    http: Callable[[], httpx.AsyncClient]
    run: Run

    @property
    def endpoint(self) -> str:
        return self.live.handle.endpoint

    @property
    def pid(self) -> int | None:
        return self.live.handle.pid

    @property
    def log_path(self) -> Path | None:
        return self.live.handle.log_path

    def tools(self) -> frozenset[str] | None:
        """The tool names the agent declared (trace contract ``hello``), if any."""
        return self.live.inventory()

    async def asend(self, message: str, *, test_id: str | None = None, observe: bool = True) -> JSONObject:
        """``{response, calls, ...}`` for one message; a fresh test id unless given."""
        reply: JSONObject = await self.live.turn(
            self.http(), message, test_id or new_test_id(), observe=observe
        )
        return reply

    def send(self, message: str, *, test_id: str | None = None, observe: bool = True) -> JSONObject:
        return self.run(self.asend(message, test_id=test_id, observe=observe))
