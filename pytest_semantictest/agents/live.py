"""A running agent as tests use it: one conversation turn at a time, with its tool calls.

``LiveAgent.turn`` sends a message as one execution (test id), waits ``settle_time``, reads the
trace records written meanwhile and keeps this execution's own (highbar's attribution: untagged
calls next to tagged records are handed on for the expectation to judge); or, with ``calls_from:
reply``, takes the tool calls from the reply; with ``calls_from: otel``, from the tool spans the agent
exported for the execution (``docs/traces.md``). ``late_window`` reads once more after a passed
test; a tagged call of a passed execution read later still fails it (``late_failures``). The session's agents are held by
``agents.pool.AgentPool``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..json_types import JSONObject
from . import observed
from .config import AgentConfig
from .correlate import (
    RUNS_MAY_OVERLAP,
    Attribution,
    Classified,
    attribute,
    classify,
    describe,
    resolve_correlate,
    same_value,
)
from .errors import AgentError
from .exchange import replaying
from .hooks import HookContext, SessionHooks
from .protocol import AgentReply, send
from .shared import AgentHandle
from .span_calls import span_calls
from .traces import ToolCall, TraceBatch, TraceReader

if TYPE_CHECKING:
    import httpx

    from ..spans.source import SpanSource


@dataclass
class LiveAgent:
    """An acquired agent plus what turns need: its trace reader and session hooks."""

    config: AgentConfig
    handle: AgentHandle
    calls_from: str = "traces"
    reader: TraceReader | None = None
    hooks: SessionHooks | None = None
    warnings: list[str] = field(default_factory=list)
    attributed_shown: bool = False
    """A turn's records were all told to be its own or another's (the look-ahead may then run this agent's
    next tests alongside before the test that showed it has ended)."""
    on_attributed: Callable[[], None] | None = None
    unattributed_reads: int = 0
    """Records read so far that no correlation could attribute (the look-ahead re-runs alone a test that
    overlapped another while such a record was read: it may be the other test's)."""

    _inventory: frozenset[str] | None = None
    _inventory_read: bool = False
    _read_to: int = 0
    _executions: dict[str, tuple[str, JSONObject]] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    late_failures: list[tuple[str, str, str]] = field(default_factory=list)
    """(test id, "failed" or "error", message) of each passed execution a call read after its window turns."""
    _late_judges: dict[str, LateJudging] = field(default_factory=dict)
    _tags_seen: bool = False  # some record was tagged: an untagged call next to them may be a late one
    _by_first: dict[str, str] = field(default_factory=dict)  # first correlate value -> test id
    _counted: set[tuple[object, ...]] = field(default_factory=set)  # calls a turn already counted as its own
    _undeclared: dict[str, None] = field(default_factory=dict)
    _open: Counter[str] = field(default_factory=Counter)  # test id -> its turns in progress
    _span_ids: dict[str, set[str]] = field(default_factory=dict)
    """Test id -> the tool spans an earlier turn of it counted (``calls_from: otel``)."""
    _before: dict[str, str | None] = field(default_factory=dict)
    """Test id -> the execution whose window had closed last when it started (:meth:`_owners_before`)."""

    def note_undeclared(self, names: Iterable[str]) -> None:
        """Forbidden names checked while the agent had declared no tools (told at the end if never seen)."""
        if self.reader is not None and self.calls_from == "traces":
            self._undeclared.update(dict.fromkeys(names))

    def end_warnings(self) -> list[str]:
        """The last read, once ``settle_time`` after the last test (the pool waits): tagged calls of passed
        executions are judged (highbar reads once more after the last test); then highbar's end-of-run
        word on guardrails over tools the agent never declared."""
        if self.reader is not None and self._executions:
            batch = self.reader.read_since(self._read_to)
            self._absorb(batch)
            last = next(reversed(self._executions))
            if batch.problems and last in self._late_judges:  # highbar: the last test is unverified
                del self._late_judges[last]
                self.late_failures.append((last, "error", f"trace file: {batch.problems[0]}"))
            self._note_late(batch, "")
            self._suspect(batch, "")
        unseen = [name for name in self._undeclared if name not in self._seen]
        if not unseen:
            return []
        seen = sorted(self._seen)
        names = ", ".join(
            f"{name} (did you mean '{close[0]}'?)"
            if (close := difflib.get_close_matches(name, seen, n=1))
            else name
            for name in unseen
        )
        return [
            "the agent has not declared the tools it records, so these guardrails cannot tell a tool it never "
            f"records from one it did not call: {names}. Declare them in the trace file (a 'tools' record, or "
            "'tools' in the hello)"
        ]

    @property
    def late_judges_pending(self) -> bool:
        return bool(self._late_judges)

    def judge_late_calls(self, test_id: str, judge: LateJudging) -> None:
        """The execution ``test_id`` passed: ``judge`` judges it again on its calls read later still (while
        another test runs, or at the end), and on untagged calls read next to the following execution's
        tagged records (:meth:`_suspect`)."""
        self._late_judges[test_id] = judge

    async def late_window(self, read_to: int, test_id: str) -> tuple[list[ToolCall], list[ToolCall]]:
        """One more ``settle_time``, then the calls written after ``read_to``: this execution's own and the
        untagged ones (highbar's read after a test's window: a late call re-judges the test)."""
        if self.reader is None:
            return [], []
        if (
            self.config.settle_time_ms and not replaying()
        ):  # (its window has closed: a test starting meanwhile
            await asyncio.sleep(self.config.settle_time_ms / 1000)  # gives it the untagged calls it reads)
        batch = self.reader.read_since(read_to)
        if (
            not batch.problems
        ):  # else the next read (the next test's, or the last one) reads it again: it says so
            self._absorb(batch)
        self._note_late(batch, test_id)
        known = self._executions.get(test_id)
        if known is None:
            return [], []
        mine = classify(batch, known[1])
        self.unattributed_reads += len(mine.unattributed_tools)
        self._counted.update(map(_call_key, [*mine.mine_tools, *mine.unattributed_tools]))
        return mine.mine_tools, mine.unattributed_tools

    def inventory(self) -> frozenset[str] | None:
        """Tools declared since the last ``hello``; re-read only when a turn saw a declaration."""
        if self.reader is None:
            return None
        if not self._inventory_read:
            self._inventory, self._inventory_read = self.reader.inventory(), True
        return self._inventory

    async def open_session(self, test_id: str, test_name: str, spec_path: str) -> JSONObject:
        if self.hooks is None or not self.hooks.active:
            return {}
        return await self.hooks.asetup(HookContext(test_id, test_name, spec_path))

    async def close_session(self, test_id: str, test_name: str, spec_path: str, session: JSONObject) -> None:
        if self.hooks is not None and self.hooks.active:
            await self.hooks.ateardown(HookContext(test_id, test_name, spec_path), session)

    async def turn(
        self,
        client: httpx.AsyncClient | None,
        message: str,
        test_id: str,
        *,
        observe: bool,
        test_name: str = "",
        session: JSONObject | None = None,
        spans: SpanSource | None = None,
    ) -> JSONObject:
        """Send one message; ``{response, calls, inventory, message, test_id}``. Raises AgentError.
        ``spans``: where the run's OTLP receiver keeps this execution's spans (``calls_from: otel``)."""
        self._open[test_id] += 1
        try:
            return await self._turn(
                client, message, test_id, observe=observe, test_name=test_name, session=session, spans=spans
            )
        finally:
            self._open[test_id] -= 1

    async def _turn(
        self,
        client: httpx.AsyncClient | None,
        message: str,
        test_id: str,
        *,
        observe: bool,
        test_name: str,
        session: JSONObject | None,
        spans: SpanSource | None = None,
    ) -> JSONObject:
        offset = self._window_start(test_id)
        resolved = self._correlation(message, test_id, test_name, session, observe) if self.reader else {}
        reply = await send(client, self.config, message, test_id, test_name=test_name, session=session)
        if self.config.settle_time_ms and not replaying():
            await asyncio.sleep(self.config.settle_time_ms / 1000)
        calls, untagged, attributed, read_to = await self._turn_calls(
            reply, offset, resolved, test_id, observe, spans
        )
        if attributed and self.reader is not None:
            self._show_attributed()
        return {
            "response": reply.text,
            "calls": [dataclasses.asdict(c) for c in calls],
            "untagged": [dataclasses.asdict(c) for c in untagged],
            "inventory": self.inventory() if self.calls_from == "traces" else None,
            "seen": sorted(self._seen),
            "message": message,
            "test_id": test_id,
            "status": reply.status,
            "read_to": read_to,
            "correlate_keys": [str(key) for key in self.config.correlate],
            RUNS_MAY_OVERLAP: attributed,
        }

    async def _turn_calls(
        self,
        reply: AgentReply,
        offset: int,
        resolved: JSONObject,
        test_id: str,
        observe: bool,
        spans: SpanSource | None,
    ) -> tuple[list[ToolCall], list[ToolCall], bool, int]:
        """As ``_own_calls``, from where this agent's calls come: its reply, its spans or its traces
        (every turn reads them: ``{{previous...}}`` templates use them)."""
        if self.calls_from == "reply":
            return list(reply.tool_calls or []), [], True, offset
        if self.calls_from == "otel":
            calls = await span_calls(spans, test_id, self._span_ids.setdefault(test_id, set()))
            self._seen.update(c.fn for c in calls)
            return calls, [], True, offset
        if self.reader is not None:
            return self._own_calls(offset, resolved, test_id, observe)
        return [], [], True, offset

    def _show_attributed(self) -> None:
        """The first turn whose every record could be told this execution's or another's says so."""
        if self.attributed_shown:
            return
        self.attributed_shown = True
        if self.on_attributed is not None:
            self.on_attributed()

    def _window_start(self, test_id: str) -> int:
        """Where this turn's window starts: the end of the complete lines now in the file. What was
        written since the last read (between two tests) is looked at for late calls first."""
        if self.reader is None:
            return 0
        end = self.reader.checkpoint()
        if self._executions and self._read_to < end:
            gap = self.reader.read_since(self._read_to)
            self._absorb(gap)
            self._note_late(gap, test_id)
            if self._tags_seen:
                self._suspect(gap, test_id)
            if gap.problems:  # highbar reads it in this test's window: this test is unverified
                raise AgentError("trace file: " + "; ".join(str(p) for p in gap.problems[:3]))
            return gap.end
        return end

    def _absorb(self, batch: TraceBatch) -> None:
        if batch.hellos or batch.declarations:
            self._inventory_read = False
        self._seen.update(call.fn for call in batch.tools)
        self._read_to = max(self._read_to, batch.end)

    def _correlation(
        self, message: str, test_id: str, test_name: str, session: JSONObject | None, observe: bool
    ) -> JSONObject:
        """``correlate`` resolved for this execution, registered; raises AgentError when it cannot be
        resolved, or (a turn that checks calls) gives what an earlier execution's gave: their records
        could not be told apart (highbar's rule; nothing is sent)."""
        try:
            resolved = resolve_correlate(
                self.config.correlate, test_id, test_name=test_name, session=session, message=message
            )
        except AgentError as e:
            raise AgentError(f"agent.correlate: {e}") from None
        first = next(iter(resolved), None)
        first_key = str(resolved.get(first) if first is not None else None)
        owner = self._by_first.get(first_key)
        if observe and owner is not None and owner != test_id and _same(self._executions[owner][1], resolved):
            raise AgentError(
                f"agent.correlate gives {describe(resolved)}, the same as an earlier test's: their trace records "
                "cannot be told apart. The session must give each test execution its own value"
            )
        if test_id not in self._before:
            self._before[test_id] = self._last_closed(test_id)
        self._executions[test_id] = (test_name, resolved)
        self._by_first[first_key] = test_id
        return resolved

    def _own_calls(
        self, offset: int, resolved: JSONObject, test_id: str, observe: bool
    ) -> tuple[list[ToolCall], list[ToolCall], bool, int]:
        """This turn's calls, the untagged calls next to tagged records, whether every record was
        attributable, and the offset read to. Raises AgentError (unreadable line, not observed)."""
        assert self.reader is not None
        batch = self.reader.read_since(offset)
        self._absorb(batch)
        if batch.problems:
            raise AgentError("trace file: " + "; ".join(str(p) for p in batch.problems[:3]))
        mine = classify(batch, resolved)
        self.unattributed_reads += len(mine.unattributed_tools) + len(mine.unattributed_turns)
        if mine.correlated:
            self._read_tagged(batch, mine, resolved, test_id, observe)
            attributed = not (mine.unattributed_tools or mine.unattributed_turns)
            return mine.mine_tools, mine.unattributed_tools, attributed, batch.end
        if observe and not self.config.managed:
            raise AgentError(observed.not_observed_attached(self.reader.path, resolved, _contexts(batch)))
        if mine.unattributed_tools:
            self._warn_once(observed.warning(observed.NO_CONTEXT_WARNING, resolved))
        return [*mine.unattributed_tools], [], False, batch.end

    def _read_tagged(
        self, batch: TraceBatch, mine: Classified, resolved: JSONObject, test_id: str, observe: bool
    ) -> None:
        """A read with tagged records: own calls counted, late and untagged calls judged; raises
        AgentError when a turn that checks calls finds no record of its own."""
        assert self.reader is not None
        self._tags_seen = True
        self._counted.update(map(_call_key, mine.mine_tools))
        self._note_late(batch, test_id)
        if mine.unattributed_tools:
            self._warn_once(observed.warning(observed.UNATTRIBUTED_WARNING, resolved))
            self._suspect(batch, test_id)
        if observe and not mine.observed:
            others = [c for c in _contexts(batch) if attribute(c, resolved) is Attribution.OTHER]
            raise AgentError(observed.not_observed(self.reader.path, resolved, others))

    def _warn_once(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def _note_late(self, batch: TraceBatch, current: str) -> None:
        """Tool calls tagged with an earlier execution that passed, read after its window closed: it is
        judged again, and a failure is kept in ``late_failures`` (highbar's "now fails"; a reported test's
        result cannot change, the session's exit status and summary do)."""
        if not self._late_judges:
            return
        first = next(iter(self.config.correlate), None)
        late: dict[str, list[ToolCall]] = {}
        for call in batch.tools:
            owner = self._late_owner(call, first, current)
            if owner is not None:
                late.setdefault(owner, []).append(call)
        for owner, calls in late.items():
            self._counted.update(map(_call_key, calls))
            message = self._late_judges[owner](calls)
            if message is not None:
                del self._late_judges[owner]
                self.late_failures.append((owner, "failed", message))

    def _late_owner(self, call: ToolCall, first: str | None, current: str) -> str | None:
        """The earlier execution still judged whose tagged call this is, if it is one's and not yet
        counted (tests run at once read each other's records: one its own turn counted is not late)."""
        owner = self._by_first.get(str(call.context.get(first) if first is not None else None))
        if (
            owner is None
            or owner == current
            or owner not in self._late_judges
            or _call_key(call) in self._counted
        ):
            return None
        return owner if attribute(call.context, self._executions[owner][1]) is Attribution.MINE else None

    def _suspect(self, batch: TraceBatch, current: str) -> None:
        """Untagged calls read next to tagged records (or in the last read): highbar takes them for late calls
        of the execution before the one whose window reads them, and if they would fail it, it is an ERROR
        ("is now unverified"). Each call is looked at once; with tests at once, by each owner it may have
        (:meth:`_owners_before`)."""
        looked: list[ToolCall] = []
        for owner in (e for e in self._owners_before(current) if e in self._late_judges):
            resolved = self._executions[owner][1]
            calls = [
                call
                for call in batch.tools
                if _call_key(call) not in self._counted
                and attribute(call.context, resolved) is Attribution.UNATTRIBUTED
            ]
            looked += calls
            message = self._late_judges[owner].suspect(calls) if calls else None
            if message is not None:
                del self._late_judges[owner]
                self.late_failures.append((owner, "error", message))
        self._counted.update(map(_call_key, looked))

    def _owners_before(self, current: str) -> list[str]:
        """The passed executions an untagged call read now may be a late call of. Run one by one: the one
        before ``current``. With tests at once, for each in a turn now, those that closed between the one
        before it (fixed when it started) and it: which of them the call is, nobody can tell, so each is
        judged with it (stricter, never laxer), and which test reads first or started last changes nothing."""
        order = list(self._executions)
        reading = [e for e in order if self._open[e] and e in self._before] or [current]
        owners: dict[str, None] = {}
        for execution in reading:
            anchor = self._before[execution] if execution in self._before else self._last_closed(execution)
            if anchor is not None:
                owners.update(dict.fromkeys(self._closed_between(order, anchor, execution)))
        return list(owners)

    def _closed_between(self, order: list[str], anchor: str, execution: str) -> list[str]:
        """The executions from ``anchor`` up to ``execution`` (or to the last) with no turn in progress."""
        end = order.index(execution) if execution in self._executions else len(order)
        return [e for e in order[order.index(anchor) : end] if not self._open[e]]

    def _last_closed(self, current: str) -> str | None:
        """The last execution before ``current`` with no turn in progress (run one by one:
        the one before; running at once, the last that had finished when ``current`` started)."""
        return next((e for e in reversed(self._executions) if e != current and not self._open[e]), None)


class LateJudging(Protocol):
    """A passed execution's judge for calls read after its window (``checks.expectations.LateJudge``)."""

    def __call__(self, calls: list[ToolCall]) -> str | None:
        """Its own (tagged) late calls: the failure's message, or None while it passes."""

    def suspect(self, calls: list[ToolCall]) -> str | None:
        """Untagged calls that may be its own: the error's message if they would fail it, else None."""


def _contexts(batch: TraceBatch) -> list[JSONObject]:
    return [call.context for call in batch.tools] + [turn.context for turn in batch.turns]


def _call_key(call: ToolCall) -> tuple[object, ...]:
    return call.fn, json.dumps(call.args, sort_keys=True, default=repr), call.started_at, call.ended_at


def _same(a: JSONObject, b: JSONObject) -> bool:
    return bool(a) and a.keys() == b.keys() and all(same_value(a[key], b[key]) for key in a)
