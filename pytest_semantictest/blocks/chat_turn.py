"""ChatTurn: one turn of a conversation with the agent under test (the Yao format compiles each
static turn to one; its assertions are the step's gate checks, so a failing turn ends the
conversation).

The agent comes compiled (``Step.compiled``: a :class:`~pytest_semantictest.agents.chat.ChatTarget`).
Config (written by the compiler): ``input`` (text, a message or a list of messages), ``attachments``, ``options`` (sent to the agent),
``previous`` (slots of the earlier turns: the history), ``number``, ``timeout`` (seconds for the whole
conversation, counted from turn 1), ``interactive`` (``{enabled, timeout, last}``), ``base_dir``
(where relative attachment paths start), ``test_name``, ``spec``.

Output, the turn record every conversation block writes: ``turn``, ``input`` (text), ``source``
(static, input, simulator, person), ``sent`` (message specs), ``attachments``, ``output`` (reply
text), ``tool_calls`` (``{name, arguments, result, error}``), ``awaiting_input``, ``duration_ms``;
``error`` instead of a reply when the turn failed; ``followups`` (turns a person added).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..agents.chat import ChatTarget
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError
from .turn_evidence import chat_turn_evidence
from .turn_spans import turn_from_spans
from .turns import open_session, remaining, take_turn, turn_record

if TYPE_CHECKING:
    from ..evidence import Evidence
    from ..step import StepContext


class ChatTurnConfig(BaseModel):
    """A ChatTurn's config, written by the Yao compiler and taken as written."""

    model_config = ConfigDict(extra="allow", frozen=True)

    input: JSONValue = None
    attachments: JSONValue = None
    options: JSONValue = None
    previous: JSONValue = None
    number: JSONValue = None
    timeout: JSONValue = None
    interactive: JSONValue = None
    base_dir: JSONValue = None
    test_name: JSONValue = None
    spec: JSONValue = None
    calls_from: JSONValue = None


class ChatTurn(Block):
    name = "ChatTurn"
    concurrency_safe = True
    reads_agent_traces = True  # through take_turn: a highbar-protocol agent's trace records
    whole_story = True
    resolve_config = False
    config_model = ChatTurnConfig
    config_keys = frozenset(ChatTurnConfig.model_fields)

    def _sent(self) -> list[JSONObject]:
        from ..agents.chat import message_specs

        return message_specs(self.config.get("input", ""), self.config.get("attachments") or [])

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        number = int(self.config.get("number", 1))
        target = self.compiled
        if not isinstance(target, ChatTarget):  # only the Yao compiler writes ChatTurn steps
            raise BlockError(
                "ChatTurn has no agent: it is compiled from a Yao test file (in a pipeline, use Conversation)"
            )
        earlier = [ctx.bus.get(slot) for slot in self.config.get("previous", [])]
        if not all(isinstance(t, Mapping) and "error" not in t for t in earlier):
            raise BlockError("an earlier turn of this conversation did not complete")
        left = self._time_left(ctx, number)
        session = self._opened = await self._session(ctx, target, earlier)
        turn = await self._take(ctx, target, earlier, session, left, number)
        if session is not None:  # even an empty one: the cleanup step closes what was opened
            turn["session"] = session
        interactive = self.config.get("interactive") or {}
        if interactive.get("enabled") and interactive.get("last"):
            await self._followups(ctx, target, earlier, turn, interactive, session)
        return turn

    def _time_left(self, ctx: StepContext, number: int) -> float | None:
        """Seconds left of the conversation's timeout (None: no timeout); none left is the turn's error."""
        timeout = self.config.get("timeout")
        left = remaining(ctx, timeout, number)
        if left is not None and left <= 0:
            raise BlockError(
                f"timeout after {timeout:g}s: the conversation ran out of time before turn {number}"
            )
        return left

    async def _take(
        self,
        ctx: StepContext,
        target: ChatTarget,
        earlier: list[JSONValue],
        session: JSONObject | None,
        left: float | None,
        number: int,
    ) -> JSONObject:
        """The scripted turn, within the time left; a timeout or an agent error is the turn's error."""
        from ..agents.errors import AgentError

        cfg = self.config
        try:
            async with asyncio.timeout(left):
                turn = await take_turn(
                    ctx,
                    target,
                    earlier,
                    self._sent(),
                    cfg.get("options") or {},
                    number=number,
                    source="static",
                    base_dir=cfg.get("base_dir"),
                    test_name=cfg.get("test_name", ""),
                    session=session,
                )
                return await turn_from_spans(ctx, turn, cfg.get("calls_from"), number)
        except TimeoutError:
            raise BlockError(
                f"timeout after {cfg.get('timeout'):g}s (turn {number}: waiting for the agent)"
            ) from None
        except AgentError as exc:
            raise BlockError(f"agent error at turn {number}: {exc}") from None

    _opened: JSONObject | None = None

    async def _session(
        self, ctx: StepContext, target: ChatTarget, earlier: list[JSONValue]
    ) -> JSONObject | None:
        """highbar session hooks: opened by turn 1, carried by the later turns."""
        if earlier:
            carried: JSONObject | None = earlier[0].get("session")
            return carried
        return await open_session(ctx, target, self.config.get("test_name", ""), self.config.get("spec", ""))

    async def _followups(
        self,
        ctx: StepContext,
        target: ChatTarget,
        earlier: list[JSONValue],
        turn: JSONObject,
        interactive: Mapping[str, JSONValue],
        session: JSONObject | None,
    ) -> None:
        """After the last scripted turn, a person answers while the agent awaits input."""
        from ..agents.chat import user_message
        from ..agents.errors import AgentError
        from .interactive import ask_person, terminal_of

        terminal = terminal_of(ctx.run_context)
        added: list[JSONObject] = []
        last = turn
        while terminal is not None and last.get("awaiting_input") is True:
            answer = await ask_person(terminal, last, interactive.get("timeout"))
            if not answer:
                break
            try:
                last = await take_turn(
                    ctx,
                    target,
                    [*earlier, turn, *added],
                    [user_message(answer)],
                    self.config.get("options") or {},
                    number=last["turn"] + 1,
                    source="person",
                    base_dir=self.config.get("base_dir"),
                    session=session,
                )
            except AgentError as exc:
                raise BlockError(f"agent error at turn {last['turn'] + 1}: {exc}") from None
            added.append(last)
        if added:
            turn["followups"] = added

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The turn and its follow-ups, as the transcript shows them."""
        return chat_turn_evidence(trace)

    def error_output(self, inputs: JSONObject, message: str) -> JSONObject:
        try:
            sent = self._sent()
        except Exception:  # noqa: BLE001  the record of a failed turn never fails itself
            sent = []
        record = turn_record(int(self.config.get("number", 1)), sent, "static", error=message)
        if self._opened is not None:  # turn 1 failed after its session was opened: it still gets closed
            record["session"] = self._opened
        return record
