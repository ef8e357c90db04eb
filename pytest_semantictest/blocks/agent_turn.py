"""AgentTurn: one message to an agent under test; its reply and the tool calls it made.

Config (written by the highbar compiler, usable in SemanticTest pipelines too):
``agent`` (key in the session's agent pool), ``message`` (may hold ``{{previous...}}``
templates), ``phrasing`` (a context key whose value replaces the message: variations),
``previous`` (slots of the earlier turns of this conversation), ``observe`` (the turn checks
tool calls: it must see a record of its own), ``first``/``test_name``/``spec``, ``place`` (of the
turn in its spec, for messages). Every turn reads the calls recorded for it (templates use them).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError
from .turn_evidence import agent_turn_evidence

if TYPE_CHECKING:
    from ..evidence import Evidence
    from ..step import StepContext

# highbar's template pattern: only {{previous...}} is a template; any other {{...}} is sent as text
_TEMPLATE = re.compile(r"\{\{\s*previous\.(.+?)\s*\}\}")
_SEGMENT = re.compile(r"(\w+)((?:\[\d+\])*)")
_CALL_FIELDS = ("args", "context", "ended_at", "error", "fn", "result", "started_at")


class _Call(JSONObject):
    """A recorded call inside a template's path: only its fields can be read."""


class _Missing(Exception):
    """A step of a template's path found nothing; the message says what was there."""


def render_previous(message: str, calls: list[JSONObject]) -> str:
    """Fill ``{{previous.function_calls[N].path}}`` from the earlier turns' calls (highbar's resolver:
    the same paths, and the same words when a path names nothing)."""

    def value(match: re.Match[str]) -> str:
        path = match.group(1)
        try:
            found = _resolve(path, calls)
        except _Missing as e:
            raise BlockError(f"{{{{previous.{path}}}}}: {e}") from None
        return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False, default=str)

    return _TEMPLATE.sub(value, message)


def _resolve(path: str, calls: list[JSONObject]) -> JSONValue:
    listed = [_Call(call) for call in calls]
    current: JSONValue = {"function_calls": listed}
    for segment in path.split("."):
        match = _SEGMENT.fullmatch(segment)
        if match is None:
            raise _Missing(f"invalid path segment '{segment}'")
        name = match.group(1)
        current = _read(current, name)
        for index in (int(i) for i in re.findall(r"\[(\d+)\]", match.group(2))):
            current = _item(current, index, name, current is listed)
    return current


def _read(current: JSONValue, part: str) -> JSONValue:
    """A recorded call's field, or an object's key; what is there when it names nothing."""
    if isinstance(current, _Call):
        if part not in _CALL_FIELDS:
            raise _Missing(f"no field '{part}' (fields: {', '.join(_CALL_FIELDS)})")
        return current.get(part)
    if isinstance(current, dict):
        if part not in current:
            raise _Missing(f"no key '{part}' (keys: {', '.join(str(k) for k in current) or 'none'})")
        return current[part]
    raise _Missing(f"cannot read '{part}' from a {_type(current)}")


def _item(current: JSONValue, index: int, name: str, calls: bool) -> JSONValue:
    """Item ``index`` of the list read as ``name`` (``calls``: the earlier turns' calls)."""
    if not isinstance(current, list):
        raise _Missing(f"cannot index '{name}[{index}]' into a {_type(current)}")
    if index >= len(current):
        raise _Missing(
            f"only {len(current)} calls in earlier turns"
            if calls
            else f"only {len(current)} items in '{name}'"
        )
    return current[index]


def _type(value: JSONValue) -> str:
    return "Trace" if isinstance(value, _Call) else type(value).__name__


class AgentTurnConfig(BaseModel):
    """An AgentTurn's config, written by the highbar compiler and taken as written (its values are
    checked where the compiler reads the spec)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    agent: JSONValue = None
    message: JSONValue = None
    phrasing: JSONValue = None
    previous: JSONValue = None
    observe: JSONValue = None
    first: JSONValue = None
    test_name: JSONValue = None
    spec: JSONValue = None
    place: JSONValue = None


class AgentTurn(Block):
    name = "AgentTurn"
    concurrency_safe = True
    reads_agent_traces = True
    resolve_config = False
    config_model = AgentTurnConfig
    config_keys = frozenset(AgentTurnConfig.model_fields)
    bookkeeping = frozenset({"read_to", "correlate_keys", "test_id", "seen", "inventory"})

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        from ..agents.errors import AgentError

        cfg = self.config
        agents = ctx.run_context.agents
        if agents is None:
            raise BlockError("no agent is running for this test (the agent pool is not set up)")
        live = agents.get(cfg["agent"])
        calls, session = _earlier_turns(ctx, cfg.get("previous", []))
        message = self._phrased(ctx)
        try:
            if cfg.get("first"):
                session = await live.open_session(
                    ctx.execution_id, cfg.get("test_name", ""), cfg.get("spec", "")
                )
            out: JSONObject = await live.turn(
                ctx.http,
                self._message(message, calls),
                ctx.execution_id,
                observe=bool(cfg.get("observe")),
                test_name=cfg.get("test_name", ""),
                session=session,
                spans=ctx.run_context.spans,
            )
        except AgentError as exc:
            raise BlockError(str(exc)) from None
        out["session"] = session or {}
        return out

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The turn (numbered by its place in the test) and the tool calls the agent made."""
        return agent_turn_evidence(trace)

    def _phrased(self, ctx: StepContext) -> str:
        """The message as written, or the variation's phrasing of it (a context key's value)."""
        message = str(self.config.get("message", ""))
        phrasing = self.config.get("phrasing")
        return str(ctx.resolver.context.get(phrasing, message)) if phrasing else message

    def _message(self, message: str, calls: list[JSONObject]) -> str:
        """The message with its templates resolved; a template naming nothing is this turn's error."""
        try:
            return render_previous(message, calls)
        except BlockError as e:
            where = self.config.get("place")
            raise BlockError(f"{where}.trigger: {e}" if where else str(e)) from None


def _earlier_turns(ctx: StepContext, slots: list[str]) -> tuple[list[JSONObject], JSONObject | None]:
    """The calls recorded in this conversation's earlier turns (templates read them), and its session."""
    earlier = [turn for turn in (ctx.bus.get(slot) for slot in slots) if isinstance(turn, dict)]
    calls = [c for turn in earlier for c in turn.get("calls") or []]
    return calls, next((t.get("session") for t in earlier if t.get("session")), None)


class AgentSessionEndConfig(BaseModel):
    """An AgentSessionEnd's config, written by the highbar compiler and taken as written."""

    model_config = ConfigDict(extra="allow", frozen=True)

    agent: JSONValue = None
    first_turn: JSONValue = None
    test_name: JSONValue = None
    spec: JSONValue = None


class AgentSessionEnd(Block):
    """Closes the execution's agent session (highbar ``session.teardown``); always runs."""

    name = "AgentSessionEnd"
    concurrency_safe = True
    whole_story = True  # nothing to show: the transcript of its turns says it all
    resolve_config = False
    config_model = AgentSessionEndConfig
    config_keys = frozenset(AgentSessionEndConfig.model_fields)

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        from ..agents.errors import AgentError

        cfg = self.config
        first = ctx.bus.get(cfg["first_turn"])
        session = first.get("session") if isinstance(first, dict) else None
        if session is None:
            return {"closed": False}
        agents = ctx.run_context.agents
        if agents is None:  # (not reached: the first turn ran in the pool)
            raise BlockError("no agent is running for this test (the agent pool is not set up)")
        try:
            await agents.get(cfg["agent"]).close_session(
                ctx.execution_id, cfg.get("test_name", ""), cfg.get("spec", ""), session
            )
        except AgentError as exc:
            raise BlockError(str(exc)) from None
        return {"closed": True}
