"""Evidence of the conversation blocks (ChatTurn, AgentTurn, Conversation, SimulatedConversation):
their turn records (``turns.turn_record``) as :mod:`pytest_semantictest.evidence` records."""

from __future__ import annotations

from collections.abc import Mapping

from ..agents.chat import call_record
from ..evidence import (
    CheckpointTimeline,
    ConversationEnd,
    ConversationTurn,
    Evidence,
    ToolCalls,
    ValidatorVerdict,
    tool_call,
)
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace

TURN_KEYS = (
    "turn",
    "source",
    "input",
    "attachments",
    "output",
    "tool_calls",
    "awaiting_input",
    "duration_ms",
    "error",
    "simulator",
    "checkpoints",
    "assertions",
)
"""What a turn record keeps for the reports (other keys, such as the agent session, are left out)."""


def turn_of(record: Mapping[str, JSONValue]) -> list[Evidence]:
    """A turn record as a conversation turn and its validators' verdicts."""
    turn = {k: record[k] for k in TURN_KEYS if k in record and record[k] is not None}
    found: list[Evidence] = [ConversationTurn(turn)]
    for n, assertion in enumerate(turn.get("assertions") or []):
        verdict = _verdict(assertion, n, turn.get("turn"))
        if verdict is not None:
            found.append(verdict)
    return found


def _verdict(assertion: JSONValue, n: int, turn: JSONValue) -> ValidatorVerdict | None:
    """The verdict of the validator that judged assertion ``n`` of a turn (None: no validator did)."""
    v = assertion.get("validator") if isinstance(assertion, Mapping) else None
    if not isinstance(v, Mapping):
        return None
    return ValidatorVerdict(
        assertion.get("assertion"),
        v.get("score"),
        v.get("threshold"),
        bool(v.get("passed")),
        v.get("reason") or "",
        list(v.get("suggestions") or []),
        v.get("model") or None,
        turn,
        assertion.get("checkpoint") or None,
        n,
    )


def configured_message(trace: StepTrace) -> JSONValue:
    """What a turn step was told to send (its output has no message when the agent failed)."""
    config = trace.step.config if isinstance(trace.step.config, Mapping) else {}
    return config.get("message", config.get("input"))


def failed_turn(trace: StepTrace) -> list[Evidence]:
    """A turn step that gave no output but an error: one turn (numbered by its place) with the error."""
    if not trace.error:
        return []
    sent = configured_message(trace)
    return [ConversationTurn({"turn": None, **({"input": sent} if sent else {}), "error": trace.error})]


def chat_turn_evidence(trace: StepTrace) -> list[Evidence]:
    """ChatTurn: its turn and the follow-ups it answered."""
    out = trace.output
    if not isinstance(out, Mapping):
        return failed_turn(trace)
    found = turn_of(out)
    for followup in out.get("followups") or []:
        found += turn_of(followup)
    return found


def agent_turn_evidence(trace: StepTrace) -> list[Evidence]:
    """AgentTurn (highbar): the turn (numbered by its place) and the tool calls the agent's trace shows."""
    out = trace.output
    if not isinstance(out, Mapping):
        return failed_turn(trace)
    calls = [call_record(c) for c in out.get("calls") or [] if isinstance(c, Mapping)]
    turn: JSONObject = {
        "turn": None,
        "input": out.get("message") or configured_message(trace),
        "output": out.get("response"),
        "tool_calls": calls,
    }
    if out.get("error"):
        turn["error"] = out["error"]
    found: list[Evidence] = [ConversationTurn(turn)]
    if isinstance(out.get("calls"), list):
        found.append(ToolCalls([tool_call(c) for c in out["calls"]]))
    return found


def conversation_evidence(trace: StepTrace) -> list[Evidence]:
    """Conversation and SimulatedConversation: every turn, its tool calls, the checkpoint timeline
    and why the conversation ended."""
    out = trace.output
    if not isinstance(out, Mapping):
        return []
    found: list[Evidence] = []
    turns = [t for t in out.get("turns") or [] if isinstance(t, Mapping)]
    for turn in turns:
        found += turn_of(turn)
    for turn in turns:
        found.append(
            ToolCalls([tool_call(c) for c in turn.get("tool_calls") or []], f"turn {turn.get('turn', '?')}")
        )
    return found + _how_it_ended(out)


def _how_it_ended(out: Mapping[str, JSONValue]) -> list[Evidence]:
    """The checkpoint timeline (a simulated conversation's) and why the conversation ended."""
    found: list[Evidence] = []
    if isinstance(out.get("checkpoints"), list):
        found.append(CheckpointTimeline([dict(c) for c in out["checkpoints"] if isinstance(c, Mapping)]))
    if out.get("reason"):
        found.append(ConversationEnd(str(out["reason"])))
    return found
