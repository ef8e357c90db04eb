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
from .correlate import RUNS_MAY_OVERLAP, Attribution, attribute, classify, describe, resolve_correlate
from .errors import AgentError
from .hooks import HookContext, SessionHooks
from .protocol import send
from .shared import AgentHandle, LocalAgent, SharedAgent, agent_key, live_key
from .traces import ToolCall, TraceBatch, TraceReader


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
    _executions: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _late: list[str] = field(default_factory=list)
    _by_first: dict[str, str] = field(default_factory=dict)  # first correlate value -> test id
    _finished: set[str] = field(default_factory=set)

    def late_calls(self) -> list[str]:
        """Tool calls tagged with an execution whose turns were already judged and reported (highbar
        reads once more after the last test): they cannot change a reported result and are warned about."""
        late = list(self._late)
        if self.reader is None or not self._executions:
            return late
        batch = self.reader.read_since(self._read_to)
        for test_id, (name, resolved) in self._executions.items():
            mine = classify(batch, resolved)
            late += [f"late tool call '{call.fn}' for test '{name}' arrived after its turn was judged"
                     for call in mine.mine_tools]
        return late

    async def late_window(self, read_to: int, test_id: str) -> tuple[list[ToolCall], list[ToolCall]]:
        """One more ``settle_time``, then the calls written after ``read_to``: this execution's own and the
        untagged ones (highbar's read after a test's window: a late call re-judges the test)."""
        if self.reader is None:
            return [], []
        if self.config.settle_time_ms:
            await asyncio.sleep(self.config.settle_time_ms / 1000)
        batch = self.reader.read_since(read_to)
        self._absorb(batch)
        known = self._executions.get(test_id)
        if known is None:
            return [], []
        mine = classify(batch, known[1])
        return mine.mine_tools, mine.unattributed_tools

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
        self._finished.add(test_id)
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
        untagged: list[ToolCall] = []
        attributed = True  # every record of this turn can be told to be this execution's or another's
        read_to = offset
        if self.calls_from == "reply":
            calls = list(reply.tool_calls or [])
        elif self.reader is not None:  # every turn reads its calls: {{previous...}} templates use them
            calls, untagged, attributed, read_to = self._own_calls(offset, message, test_id, test_name, session,
                                                                   observe)
        else:
            calls = []
        return {
            "response": reply.text,
            "calls": [dataclasses.asdict(c) for c in calls],
            "untagged": [dataclasses.asdict(c) for c in untagged],
            "inventory": self.inventory() if self.calls_from != "reply" else None,
            "seen": sorted(self._seen),
            "message": message,
            "test_id": test_id,
            "status": reply.status,
            "read_to": read_to,
            RUNS_MAY_OVERLAP: attributed,
        }

    def _absorb(self, batch: TraceBatch) -> None:
        if batch.hellos or batch.declarations:
            self._inventory_read = False
        self._seen.update(call.fn for call in batch.tools)
        self._read_to = max(self._read_to, batch.end)

    def _own_calls(
        self, offset: int, message: str, test_id: str, test_name: str, session: dict[str, Any] | None,
        observe: bool,
    ) -> tuple[list[ToolCall], list[ToolCall], bool, int]:
        """This turn's calls, the untagged calls next to tagged records, whether every record was
        attributable, and the offset read to. Raises AgentError (unreadable line, not observed)."""
        assert self.reader is not None
        batch = self.reader.read_since(offset)
        self._absorb(batch)
        if batch.problems:
            raise AgentError("trace file: " + "; ".join(str(p) for p in batch.problems[:3]))
        try:
            resolved = resolve_correlate(self.config.correlate, test_id, test_name=test_name, session=session,
                                         message=message)
        except AgentError as e:
            raise AgentError(f"agent.correlate: {e}") from None
        self._executions[test_id] = (test_name, resolved)
        first = next(iter(resolved), None)
        self._by_first[str(resolved.get(first))] = test_id
        mine = classify(batch, resolved)
        attributed = mine.correlated and not (mine.unattributed_tools or mine.unattributed_turns)
        if mine.correlated:
            self._note_late(batch, test_id)
            if observe and not mine.observed:
                raise AgentError(
                    f"not observed: no trace record in {self.reader.path} matches this test ({describe(resolved)}); "
                    f"the {mine.other} read while it ran belong to other executions. The context the agent "
                    "writes must carry the keys of agent.correlate (the default, 'test', is the X-Highbar-Test "
                    "header value)"
                )
            return mine.mine_tools, mine.unattributed_tools, attributed, batch.end
        if observe and not self.config.managed:
            raise AgentError(
                f"not observed: no trace record for test {test_id} in {self.reader.path}; the agent must tag "
                "records with the X-Highbar-Test header value (correlate)"
            )
        if mine.unattributed_tools:
            warning = "the agent's trace records carry no test id: each turn counts every call written meanwhile"
            if warning not in self.warnings:
                self.warnings.append(warning)
        return [*mine.unattributed_tools], [], False, batch.end

    def _note_late(self, batch: TraceBatch, current: str) -> None:
        """Tool calls tagged with an earlier, finished execution, read while a later one ran: that
        execution's result was already reported, so they are warned about (highbar re-judges it)."""
        if not self._finished:
            return
        first = next(iter(self.config.correlate), None)
        for call in batch.tools:
            owner = self._by_first.get(str(call.context.get(first)))
            if owner is None or owner == current or owner not in self._finished:
                continue
            name, resolved = self._executions[owner]
            if attribute(call.context, resolved) is Attribution.MINE:
                self._late.append(f"late tool call '{call.fn}' for test '{name}' arrived while a later test ran, "
                                  "after its result was reported (raise agent.settle_time to count it)")


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
