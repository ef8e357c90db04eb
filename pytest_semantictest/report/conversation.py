"""Conversations for people and files: the transcript (turn by turn, with tool calls) and the
checkpoint timeline, read from a verdict's trace (ChatTurn, AgentTurn, Conversation and
SimulatedConversation steps)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..model import StepTrace
from .redact import Redactor

TURN_BLOCKS = frozenset({"ChatTurn", "AgentTurn"})
CONVERSATION_BLOCKS = frozenset({"Conversation", "SimulatedConversation"})
OWN_BLOCKS = frozenset({"ChatTurn", "AgentSessionEnd"}) | CONVERSATION_BLOCKS
"""Steps whose whole story the conversation section tells (no pipeline trace needed)."""
_TURN_KEYS = ("turn", "source", "input", "attachments", "output", "tool_calls", "awaiting_input", "duration_ms",
              "error", "simulator", "checkpoints", "assertions")


def _configured_message(t: StepTrace) -> Any:
    """What a turn step was told to send (its output has no message when the agent failed)."""
    config = t.step.config if isinstance(t.step.config, Mapping) else {}
    return config.get("message", config.get("input"))


def _agent_turn(number: int, out: Mapping[str, Any], configured: Any = None) -> dict[str, Any]:
    calls = [{"name": c.get("fn"), "arguments": c.get("args"), **({"result": c["result"]} if c.get("result") is not None
                                                                     else {}), **({"error": c["error"]} if c.get("error")
                                                                                  else {})}
             for c in out.get("calls") or [] if isinstance(c, Mapping)]
    turn: dict[str, Any] = {"turn": number, "input": out.get("message") or configured, "output": out.get("response"),
                            "tool_calls": calls}
    if out.get("error"):
        turn["error"] = out["error"]
    return turn


def _clean(turn: Mapping[str, Any]) -> dict[str, Any]:
    return {k: turn[k] for k in _TURN_KEYS if k in turn and turn[k] is not None}


def conversation_data(trace: Sequence[StepTrace]) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The turns every conversation step of a trace took, and the checkpoint timeline if any."""
    turns: list[dict[str, Any]] = []
    checkpoints: list[dict[str, Any]] | None = None
    for t in trace:
        out = t.output
        if not isinstance(out, Mapping):
            if t.step.block in TURN_BLOCKS and t.error:
                sent = _configured_message(t)
                turns.append({"turn": len(turns) + 1, **({"input": sent} if sent else {}), "error": t.error})
            continue
        if t.step.block == "ChatTurn":
            turns.append(_clean(out))
            turns.extend(_clean(f) for f in out.get("followups") or [])
        elif t.step.block == "AgentTurn":
            turns.append(_agent_turn(len(turns) + 1, out, _configured_message(t)))
        elif t.step.block in CONVERSATION_BLOCKS:
            turns.extend(_clean(x) for x in out.get("turns") or [] if isinstance(x, Mapping))
            if isinstance(out.get("checkpoints"), list):
                checkpoints = [dict(c) for c in out["checkpoints"] if isinstance(c, Mapping)]
    return turns, checkpoints


def has_conversation(trace: Sequence[StepTrace]) -> bool:
    return any(t.step.block in TURN_BLOCKS | CONVERSATION_BLOCKS for t in trace)


def _short(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = text.replace("\n", "\n         ")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _call(call: Mapping[str, Any], limit: int) -> str:
    text = f"{call.get('name')}({_short(call.get('arguments') or {}, limit)})"
    if call.get("error"):
        text += f" -> error: {_short(call['error'], limit)}"
    elif "result" in call:
        text += f" -> {_short(call['result'], limit)}"
    return text


def render_transcript(turns: Sequence[Mapping[str, Any]], limit: int = 2000) -> list[str]:
    lines: list[str] = []
    for turn in turns:
        source = f" ({turn['source']})" if turn.get("source") else ""
        lines.append(f"turn {turn.get('turn', '?')}{source} user:  {_short(turn.get('input') or '', limit)}")
        for name in turn.get("attachments") or []:
            lines.append(f"         attachment: {name}")
        if turn.get("error"):
            lines.append(f"         ERROR: {turn['error']}")
            continue
        lines.append(f"         agent: {_short(turn.get('output') or '', limit)}")
        for call in turn.get("tool_calls") or []:
            lines.append(f"         tool:  {_call(call, limit)}")
        if turn.get("awaiting_input") is not None:
            lines.append(f"         awaiting input: {str(turn['awaiting_input']).lower()}")
        if turn.get("checkpoints"):
            lines.append(f"         reached: {', '.join(turn['checkpoints'])}")
        for a in turn.get("assertions") or []:
            state = "passed" if a.get("passed") else "error" if a.get("error") else "not evaluated" if a.get(
                "skipped") else "FAILED"
            why = f": {a.get('message') or a.get('error') or a.get('skipped')}" if state != "passed" else ""
            where = f"checkpoint {a['checkpoint']} " if a.get("checkpoint") else ""
            lines.append(f"         {where}{state}: {a.get('assertion')}{why}")
    return lines


def render_timeline(checkpoints: Sequence[Mapping[str, Any]]) -> list[str]:
    width = max((len(str(c.get("id"))) for c in checkpoints), default=0)
    lines = ["checkpoints:"]
    for c in sorted(checkpoints, key=lambda c: (c.get("turn") is None, c.get("turn") or 0)):
        when = f"turn {c['turn']}" if c.get("reached") else ("MISSING" if c.get("required", True) else "not reached")
        extra = []
        if c.get("description"):
            extra.append(str(c["description"]))
        if c.get("after"):
            extra.append("after " + ", ".join(c["after"]))
        if not c.get("required", True):
            extra.append("optional")
        if c.get("held_early"):
            extra.append(f"held at turn {c['held_early'][0]} before its after checkpoints")
        if c.get("last") and not c.get("reached"):
            extra.append(f"last check: {c['last']}")
        lines.append(f"  {str(c.get('id')).ljust(width)}  {when.ljust(11)} {'; '.join(extra)}".rstrip())
    return lines


def render_conversation(trace: Sequence[StepTrace], redactor: Redactor, limit: int = 2000) -> str:
    """The "conversation" report section: transcript, then the checkpoint timeline."""
    turns, checkpoints = conversation_data(trace)
    lines = render_transcript(redactor.data(turns), limit)
    if checkpoints:
        lines += render_timeline(checkpoints)
    for t in trace:
        if t.step.block == "SimulatedConversation" and isinstance(t.output, Mapping) and t.output.get("reason"):
            lines.append(f"ended: {t.output['reason']}")
    return redactor.text("\n".join(lines))
