"""Conversations for people and files: the transcript (turn by turn, with tool calls) and the
checkpoint timeline, from a trace's :class:`~pytest_semantictest.evidence.ConversationTurn`,
:class:`~pytest_semantictest.evidence.CheckpointTimeline` and
:class:`~pytest_semantictest.evidence.ConversationEnd` records (whatever block gave them)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..evidence import CheckpointTimeline, ConversationEnd, ConversationTurn
from ..json_types import JSONValue
from ..model import StepTrace
from ..redact import Redactor
from ..shown import shorten
from .records import has, in_trace


def conversation_data(
    trace: Sequence[StepTrace],
) -> tuple[list[dict[str, JSONValue]], list[dict[str, JSONValue]] | None]:
    """The turns of a trace (a turn numbered None gets its place) and the latest checkpoint timeline."""
    turns: list[dict[str, JSONValue]] = []
    checkpoints: list[dict[str, JSONValue]] | None = None
    for t in trace:
        for record in t.evidence:
            if isinstance(record, ConversationTurn):
                turn = dict(record.data)
                if "turn" in turn and turn["turn"] is None:
                    turn["turn"] = len(turns) + 1
                turns.append(turn)
            elif isinstance(record, CheckpointTimeline):
                checkpoints = [dict(c) for c in record.checkpoints]
    return turns, checkpoints


def has_conversation(trace: Sequence[StepTrace]) -> bool:
    return has(trace, ConversationTurn, CheckpointTimeline, ConversationEnd)


def _short(value: object, limit: int) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    )
    return shorten(text, limit, tell=True).replace("\n", "\n         ")


def _call(call: Mapping[str, JSONValue], limit: int) -> str:
    text = f"{call.get('name')}({_short(call.get('arguments') or {}, limit)})"
    if call.get("error"):
        text += f" -> error: {_short(call['error'], limit)}"
    elif "result" in call:
        text += f" -> {_short(call['result'], limit)}"
    return text


def render_transcript(turns: Sequence[Mapping[str, JSONValue]], limit: int = 2000) -> list[str]:
    lines: list[str] = []
    for turn in turns:
        lines += _turn_lines(turn, limit)
    return lines


def _turn_lines(turn: Mapping[str, JSONValue], limit: int) -> list[str]:
    """One turn: what the user sent and attached, then the agent's error or its answer."""
    source = f" ({turn['source']})" if turn.get("source") else ""
    lines = [f"turn {turn.get('turn', '?')}{source} user:  {_short(turn.get('input') or '', limit)}"]
    lines += [f"         attachment: {name}" for name in turn.get("attachments") or []]
    if turn.get("error"):
        return [*lines, f"         ERROR: {turn['error']}"]
    return lines + _answer_lines(turn, limit)


def _answer_lines(turn: Mapping[str, JSONValue], limit: int) -> list[str]:
    """The agent's side of a turn that did not fail: its answer, tool calls, whether it awaits input,
    the checkpoints reached, and the turn's assertions."""
    lines = [f"         agent: {_short(turn.get('output') or '', limit)}"]
    lines += [f"         tool:  {_call(call, limit)}" for call in turn.get("tool_calls") or []]
    if turn.get("awaiting_input") is not None:
        lines.append(f"         awaiting input: {str(turn['awaiting_input']).lower()}")
    if turn.get("checkpoints"):
        lines.append(f"         reached: {', '.join(turn['checkpoints'])}")
    return lines + [_assertion_line(a) for a in turn.get("assertions") or []]


def _assertion_state(assertion: Mapping[str, JSONValue]) -> str:
    """passed, error, not evaluated (skipped) or FAILED."""
    if assertion.get("passed"):
        return "passed"
    if assertion.get("error"):
        return "error"
    if assertion.get("skipped"):
        return "not evaluated"
    return "FAILED"


def _assertion_line(assertion: Mapping[str, JSONValue]) -> str:
    """A turn's assertion, its checkpoint and, unless it passed, why."""
    a = assertion
    state = _assertion_state(a)
    why = f": {a.get('message') or a.get('error') or a.get('skipped')}" if state != "passed" else ""
    where = f"checkpoint {a['checkpoint']} " if a.get("checkpoint") else ""
    return f"         {where}{state}: {a.get('assertion')}{why}"


def render_timeline(checkpoints: Sequence[Mapping[str, JSONValue]]) -> list[str]:
    width = max((len(str(c.get("id"))) for c in checkpoints), default=0)
    lines = ["checkpoints:"]
    for c in sorted(checkpoints, key=lambda c: (c.get("turn") is None, c.get("turn") or 0)):
        when = (
            f"turn {c['turn']}"
            if c.get("reached")
            else ("MISSING" if c.get("required", True) else "not reached")
        )
        extra = "; ".join(_checkpoint_notes(c))
        lines.append(f"  {str(c.get('id')).ljust(width)}  {when.ljust(11)} {extra}".rstrip())
    return lines


def _checkpoint_notes(c: Mapping[str, JSONValue]) -> list[str]:
    """What the timeline adds after a checkpoint's state: its description, what it comes after,
    optional, held early, and the last check of one not reached."""
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
    return extra


def render_conversation(trace: Sequence[StepTrace], redactor: Redactor, limit: int = 2000) -> str:
    """The "conversation" report section: transcript, then the checkpoint timeline."""
    turns, checkpoints = conversation_data(trace)
    lines = render_transcript(redactor.data(turns), limit)
    if checkpoints:
        lines += render_timeline(checkpoints)
    lines += [f"ended: {end.reason}" for _, end in in_trace(trace, ConversationEnd)]
    return redactor.text("\n".join(lines))
