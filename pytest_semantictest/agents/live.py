"""A running agent as tests use it: one conversation turn at a time, with its tool calls.

``LiveAgent.turn`` sends a message as one execution (test id), waits ``settle_time``, reads the
trace records written meanwhile and keeps this execution's own; or, with ``calls_from:
reply``, takes the tool calls from the reply. ``AgentPool`` holds the session's agents:
one per distinct config, started on first use, released when the session ends (under
pytest-xdist one process serves every worker through ``SharedAgent``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import AgentConfig
from .correlate import classify, resolve_correlate
from .errors import AgentError
from .hooks import HookContext, SessionHooks
from .protocol import send
from .shared import AgentHandle, LocalAgent, SharedAgent, agent_key, live_key
from .traces import TraceReader


@dataclass
class LiveAgent:
    """An acquired agent plus what turns need: its trace reader and session hooks."""

    config: AgentConfig
    handle: AgentHandle
    calls_from: str = "traces"
    reader: TraceReader | None = None
    hooks: SessionHooks | None = None
    warnings: list[str] = field(default_factory=list)

    _inventory: frozenset[str] | None = None
    _inventory_read: bool = False
    _read_to: int = 0
    _executions: dict[str, str] = field(default_factory=dict)

    def late_calls(self) -> list[str]:
        """Tool calls tagged with an execution whose turns were already judged (highbar reads once
        more after the last test). They cannot change a reported result: they are warned about."""
        if self.reader is None or not self._executions:
            return []
        batch = self.reader.read_since(self._read_to)
        late = []
        for test_id, name in self._executions.items():
            mine = classify(batch, resolve_correlate(self.config.correlate, test_id, test_name=name))
            late += [f"late tool call '{call.fn}' for test '{name}' arrived after its turn was judged"
                     for call in mine.mine_tools]
        return late

    def inventory(self) -> frozenset[str] | None:
        """Tools declared since the last ``hello``; re-read only when a turn saw a declaration."""
        if self.reader is None:
            return None
        if not self._inventory_read:
            self._inventory, self._inventory_read = self.reader.inventory(), True
        return self._inventory

    async def open_session(self, test_id: str, test_name: str, spec_path: str) -> dict[str, Any]:
        if self.hooks is None or not self.hooks.active:
            return {}
        return await self.hooks.asetup(HookContext(test_id, test_name, spec_path))

    async def close_session(self, test_id: str, test_name: str, spec_path: str, session: dict[str, Any]) -> None:
        if self.hooks is not None and self.hooks.active:
            await self.hooks.ateardown(HookContext(test_id, test_name, spec_path), session)

    async def turn(
        self, client: Any, message: str, test_id: str, *, observe: bool, test_name: str = "",
        session: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Send one message; ``{response, calls, inventory, message, test_id}``. Raises AgentError."""
        offset = self.reader.checkpoint() if self.reader is not None else 0
        reply = await send(client, self.config, message, test_id, test_name=test_name, session=session)
        if self.config.settle_time_ms:
            await asyncio.sleep(self.config.settle_time_ms / 1000)
        if self.calls_from == "reply":
            calls = list(reply.tool_calls or [])
        elif self.reader is not None and observe:
            calls = self._own_calls(offset, message, test_id, test_name, session)
        else:
            calls = []
        return {
            "response": reply.text,
            "calls": [dataclasses.asdict(c) for c in calls],
            "inventory": self.inventory() if self.calls_from != "reply" else None,
            "message": message,
            "test_id": test_id,
            "status": reply.status,
        }

    def _own_calls(
        self, offset: int, message: str, test_id: str, test_name: str, session: dict[str, Any] | None
    ) -> list[Any]:
        assert self.reader is not None
        batch = self.reader.read_since(offset)
        self._read_to = max(self._read_to, batch.end)
        self._executions[test_id] = test_name
        if batch.hellos or batch.declarations:
            self._inventory_read = False
        if batch.problems:
            raise AgentError("trace file: " + "; ".join(str(p) for p in batch.problems[:3]))
        resolved = resolve_correlate(self.config.correlate, test_id, test_name=test_name, session=session,
                                     message=message)
        mine = classify(batch, resolved)
        if mine.correlated:
            if not mine.observed and not self.config.managed:
                raise AgentError(
                    f"not observed: no trace record carries this test's id ({test_id}); does the agent "
                    "tag its records with the X-Highbar-Test header value?"
                )
            return mine.mine_tools
        if not self.config.managed:
            raise AgentError(
                f"not observed: no trace record for test {test_id} in {self.reader.path}; the agent must tag "
                "records with the X-Highbar-Test header value (correlate)"
            )
        warning = "the agent's trace records carry no test id: each turn counts every call written meanwhile"
        if warning not in self.warnings:
            self.warnings.append(warning)
        return [*mine.unattributed_tools]


class AgentPool:
    """The session's agents by config; ``state_dir`` set means share them across xdist workers."""

    def __init__(self, state_dir: Path | None = None) -> None:
        self.state_dir = state_dir
        self._owners: dict[str, LocalAgent | SharedAgent] = {}
        self._live: dict[str, LiveAgent] = {}

    def get(self, key: str) -> LiveAgent:
        return self._live[key]

    def acquire(self, config: AgentConfig, *, observe: bool, calls_from: str = "traces") -> str:
        """Start or attach the agent process for ``config`` once per session; returns the key of this
        way of talking to it (:func:`live_key`: files with other request or session settings get theirs)."""
        key = live_key(config, calls_from)
        if key in self._live:
            return key
        process = agent_key(config)
        owner = self._owners.get(process)
        if owner is None:
            owner = SharedAgent(self.state_dir, process, config) if self.state_dir else LocalAgent(config)
            self._owners[process] = owner
        hooks = SessionHooks(config)
        hooks.load()  # an unimportable hook fails before any agent starts
        handle = owner.acquire(observe=observe and calls_from != "reply")
        self._live[key] = LiveAgent(config, handle, calls_from, handle.trace_reader(), hooks)
        return key

    def warnings(self) -> list[str]:
        """Things to tell at the end: untagged traces, and late tool calls (after one settle time)."""
        late: list[str] = []
        for live in self._live.values():
            if live._executions and live.config.settle_time_ms:
                import time

                time.sleep(live.config.settle_time_ms / 1000)
            late += live.late_calls()
        return [w for live in self._live.values() for w in live.warnings] + late

    def close(self) -> None:
        """Release every agent this process acquired (the last user stops it)."""
        for owner in self._owners.values():
            try:
                owner.close()
            except AgentError:
                pass
        self._owners.clear()
        self._live.clear()
