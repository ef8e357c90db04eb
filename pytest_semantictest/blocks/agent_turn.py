"""AgentTurn: one message to an agent under test; its reply and the tool calls it made.

Config (written by the highbar compiler, usable in SemanticTest pipelines too):
``agent`` (key in the session's agent pool), ``message`` (may hold ``{{previous...}}``
templates), ``phrasing`` (a context key whose value replaces the message: variations),
``previous`` (slots of the earlier turns of this conversation), ``observe`` (read tool
calls), ``first``/``test_name``/``spec``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .base import Block, BlockError

_TEMPLATE = re.compile(r"\{\{\s*previous\.([^}]*?)\s*\}\}")
_SEGMENT = re.compile(r"([A-Za-z_][\w-]*)|\[(\d+)\]")


def render_previous(message: str, calls: list[dict[str, Any]]) -> str:
    """Fill ``{{previous.function_calls[N].path}}`` from the earlier turns' calls."""

    def value(match: re.Match[str]) -> str:
        path = match.group(1)
        current: Any = {"function_calls": calls}
        for key, index in _SEGMENT.findall(path):
            if index:
                if not isinstance(current, list) or int(index) >= len(current):
                    made = len(calls)
                    raise BlockError(f"template {match.group(0)} names nothing: the earlier turns made {made} call(s)")
                current = current[int(index)]
            elif isinstance(current, dict) and key in current:
                current = current[key]
            else:
                raise BlockError(f"template {match.group(0)} names nothing ('{key}' is not there)")
        return current if isinstance(current, str) else json.dumps(current, ensure_ascii=False)

    return _TEMPLATE.sub(value, message)


class AgentTurn(Block):
    name = "AgentTurn"
    resolve_config = False
    config_keys = frozenset({"agent", "message", "phrasing", "previous", "observe", "first", "test_name", "spec"})

    async def process(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        from ..agents.errors import AgentError

        cfg = self.config
        agents = getattr(ctx.session, "agents", None)
        if agents is None:
            raise BlockError("no agent is running for this test (the agent pool is not set up)")
        live = agents.get(cfg["agent"])
        earlier = [ctx.bus.get(slot) for slot in cfg.get("previous", [])]
        calls = [c for turn in earlier if isinstance(turn, dict) for c in turn.get("calls") or []]
        session = next((t.get("session") for t in earlier if isinstance(t, dict) and t.get("session")), None)
        message = str(cfg.get("message", ""))
        if cfg.get("phrasing"):
            message = str(ctx.resolver.context.get(cfg["phrasing"], message))
        try:
            if cfg.get("first"):
                session = await live.open_session(ctx.execution_id, cfg.get("test_name", ""), cfg.get("spec", ""))
            out = await live.turn(
                ctx.http, render_previous(message, calls), ctx.execution_id, observe=bool(cfg.get("observe")),
                test_name=cfg.get("test_name", ""), session=session,
            )
        except AgentError as exc:
            raise BlockError(str(exc)) from None
        out["session"] = session or {}
        return out


class AgentSessionEnd(Block):
    """Closes the execution's agent session (highbar ``session.teardown``); always runs."""

    name = "AgentSessionEnd"
    resolve_config = False
    config_keys = frozenset({"agent", "first_turn", "test_name", "spec"})

    async def process(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        from ..agents.errors import AgentError

        cfg = self.config
        first = ctx.bus.get(cfg["first_turn"])
        session = first.get("session") if isinstance(first, dict) else None
        if session is None:
            return {"closed": False}
        try:
            await ctx.session.agents.get(cfg["agent"]).close_session(
                ctx.execution_id, cfg.get("test_name", ""), cfg.get("spec", ""), session
            )
        except AgentError as exc:
            raise BlockError(str(exc)) from None
        return {"closed": True}
