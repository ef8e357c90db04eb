"""One conversation turn with the agent under test, as the conversation blocks (ChatTurn,
Conversation, SimulatedConversation) take it: the messages go through
:func:`~pytest_semantictest.agents.chat.send_chat` (so through the one agent exchange) and the turn is
written as a turn record; the highbar session opened before turn 1; the conversation's clock."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.chat import ChatTarget, Reply, history, send_chat, text_of
from ..json_types import JSONObject, JSONValue
from .base import BlockError

if TYPE_CHECKING:
    from ..step import StepContext

CLOCK = "_conversation_started"


def turn_record(
    number: int,
    sent: list[JSONObject],
    source: str,
    reply: Reply | None = None,
    error: str | None = None,
    duration_ms: float = 0.0,
) -> JSONObject:
    """The turn record every conversation block writes (its keys: see :mod:`.chat_turn`); ``error``
    instead of a reply when the turn failed."""
    record: JSONObject = {
        "turn": number,
        "input": text_of(_last_user_message(sent)),
        "source": source,
        "sent": sent,
    }
    attachments = [a.get("source") for m in sent for a in m.get("attachments") or []]
    if attachments:
        record["attachments"] = attachments
    if reply is not None:
        record.update(output=reply.text, tool_calls=reply.tool_calls, awaiting_input=reply.awaiting_input)
        if reply.session:
            record["session"] = reply.session
    if error is not None:
        record["error"] = error
    record["duration_ms"] = round(duration_ms, 1)
    return record


def _last_user_message(sent: list[JSONObject]) -> JSONObject:
    """The last message with the user's role (else the last message): what the turn's ``input`` shows."""
    return next((m for m in reversed(sent) if m.get("role") == "user"), sent[-1] if sent else {})


async def take_turn(
    ctx: StepContext,
    target: ChatTarget,
    earlier: Sequence[Mapping[str, JSONValue]],
    sent: list[JSONObject],
    options: Mapping[str, JSONValue],
    *,
    number: int,
    source: str,
    base_dir: Path | None = None,
    test_name: str = "",
    session: Mapping[str, JSONValue] | None = None,
) -> JSONObject:
    """Send one turn and record it; raises AgentError (the caller decides what a failure means)."""
    started = time.perf_counter()
    reply = await send_chat(
        ctx,
        target,
        [*history(earlier), *sent],
        options,
        base_dir=base_dir,
        test_name=test_name,
        session=session,
    )
    return turn_record(number, sent, source, reply, duration_ms=(time.perf_counter() - started) * 1000)


async def open_session(
    ctx: StepContext, target: ChatTarget, test_name: str = "", spec: str = ""
) -> JSONObject | None:
    """Open a conversation's highbar session (the agent's ``session.setup``), once, before turn 1.

    None when there is none to open (not the highbar protocol, or the agent is not in the session's
    pool). The conversation keeps what this returns as ``session`` in its first output, where the
    case's ``AgentSessionEnd`` cleanup step finds it and runs ``session.teardown`` (also when the
    conversation failed or timed out). Raises BlockError when the setup fails.
    """
    if target.protocol != "highbar":
        return None
    pool = ctx.run_context.agents
    if pool is None or target.key is None:
        return None
    from ..agents.errors import AgentError

    try:
        session: JSONObject | None = await pool.get(target.key).open_session(
            ctx.execution_id, test_name, spec
        )
        return session
    except (AgentError, KeyError) as exc:
        raise BlockError(f"session setup failed: {exc}") from None


def remaining(ctx: StepContext, timeout: float | None, number: int) -> float | None:
    """Seconds left of the conversation's time (the clock starts at turn 1); None: no limit."""
    if number == 1:
        ctx.bus.set(CLOCK, time.monotonic())
    if not timeout:
        return None
    started = ctx.bus.get(CLOCK)
    elapsed = time.monotonic() - started if isinstance(started, float) else 0.0
    return timeout - elapsed
