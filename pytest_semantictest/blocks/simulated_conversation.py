"""SimulatedConversation: a simulated user talks to the agent until its checkpoints are reached.

Turn 1 sends ``input`` (or the simulator's first message); every later user message comes from
the LLM ``simulator`` role, given persona, goal, the conversation, the turn number, the turn limit
and the reached and pending checkpoints. After every reply each pending checkpoint whose ``after``
checkpoints are all reached (earlier, or in this same reply) is checked on that reply and its tool
calls, and recorded with its turn. The conversation ends:

- all required checkpoints reached -> passed;
- the simulator says the goal is achieved, or the agent ends the conversation (its reply says
  ``awaiting_input: false``), with required checkpoints missing -> failed, naming them;
- ``max_turns`` or ``timeout`` reached (the timeout also interrupts a turn in flight) -> failed;
- a simulator or validator that errors or answers garbage -> ERROR (never a pass); one that is not
  configured -> skipped.

Config (pipelines): ``agent`` (see Conversation), ``input``, ``attachments``, ``simulator``
``{use, options: {metadata: {persona, goal}}}``, ``checkpoints`` ``[{id, description, assertion
(alias assert), after, required}]``, ``maxTurns`` (default 20), ``timeout`` (default "5m"),
``options``, ``interactive`` ``{enabled, timeout}``. The Yao format passes a ready
:class:`DynamicPlan` instead (``Step.compiled``).
Output: ``passed``, ``status``, ``reason``, ``turns``, ``checkpoints`` (the timeline: ``{id,
required, after, reached, turn, held_early, last}``), ``missing``, ``goalAchieved``; ``error`` (the
reason) when it failed, so the test fails unless an assertion reads the output; ``session`` with the
highbar protocol when the agent is in the session's pool: one session (``session.setup``) for the whole
conversation, every turn carries it, the case's ``AgentSessionEnd`` cleanup step closes it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pydantic import AliasChoices, Field

from ..checks.run import llm_client
from ..checks.specs import (
    AttachmentSpec,
    CheckpointSpec,
    Duration,
    InputSpec,
    InteractiveSpec,
    SimulatorSpec,
    StrictSpec,
)
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError
from .conversation import PipelineAgent
from .simulation import (
    DEFAULT_MAX_TURNS,
    DEFAULT_TIMEOUT_S,
    ConversationRun,
    DynamicPlan,
    order_problems,
    reach_checkpoints,
)
from .turn_evidence import conversation_evidence

if TYPE_CHECKING:
    from ..evidence import Evidence
    from ..step import StepContext

__all__ = ["DynamicPlan", "SimulatedConfig", "SimulatedConversation", "order_problems"]


class SimulatedConfig(StrictSpec):
    agent: PipelineAgent
    input: InputSpec | None = None
    attachments: list[AttachmentSpec] = Field(default_factory=list)
    simulator: SimulatorSpec = Field(default_factory=SimulatorSpec)
    checkpoints: list[CheckpointSpec] = Field(min_length=1)
    maxTurns: int = Field(
        default=DEFAULT_MAX_TURNS, ge=1, validation_alias=AliasChoices("maxTurns", "max_turns")
    )
    timeout: Duration = DEFAULT_TIMEOUT_S
    options: JSONObject = Field(default_factory=dict)
    interactive: InteractiveSpec | None = None


class SimulatedConversation(Block):
    name = "SimulatedConversation"
    concurrency_safe = True
    reads_agent_traces = True  # through take_turn: a highbar-protocol agent's trace records
    config_model = SimulatedConfig
    config_keys = frozenset(SimulatedConfig.model_fields)
    outputs = ("passed", "status", "reason", "turns", "checkpoints", "missing", "goalAchieved")
    whole_story = True

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        # turns, tool calls, validators, checkpoint timeline, why it ended
        return conversation_evidence(trace)

    @classmethod
    def validate_config(cls, config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        problems = super().validate_config(config)
        if not problems:
            checkpoints = [CheckpointSpec.model_validate(c) for c in config.get("checkpoints") or []]
            problems = [(f"checkpoints[{i}].after", m) for i, m in order_problems(checkpoints)]
        return problems

    def _plan(self, ctx: StepContext) -> DynamicPlan:
        if isinstance(self.compiled, DynamicPlan):  # the Yao compiler's (Step.compiled)
            return self.compiled
        spec = SimulatedConfig.model_validate(dict(self.config))
        return DynamicPlan(
            spec.agent.target(),
            spec.checkpoints,
            spec.simulator,
            spec.input,
            spec.attachments,
            spec.maxTurns,
            spec.timeout,
            spec.options,
            spec.interactive,
            Path(ctx.run_context.rootdir or Path.cwd()),
        )

    _run: ConversationRun | None = None

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        from .turns import open_session

        plan = self._plan(ctx)
        if plan.target is None:  # (a Yao case without an agent ERRORs before it runs)
            raise BlockError("SimulatedConversation has no agent to talk to")
        target = plan.target
        run = self._run = ConversationRun(plan)
        # one highbar session for the whole conversation, opened before turn 1 (outside the conversation's
        # timeout: the hook has its own), closed by the case's cleanup step (see turns.open_session)
        run.session = await open_session(ctx, target, plan.test_name, plan.spec)
        try:
            async with asyncio.timeout(plan.timeout) as deadline:
                await self._converse(run, ctx, deadline)
        except TimeoutError:
            reason = f"timeout after {plan.timeout:g}s (turn {run.number}: {run.phase})"
            if run.in_flight is not None:  # the turn the timeout interrupted, for the transcript
                from .turns import turn_record

                run.turns.append(turn_record(run.number, run.in_flight[0], run.in_flight[1], error=reason))
            run.finish(False, f"{reason}; required checkpoints not reached: {run.missing_text()}")
        return run.output()

    def error_output(self, inputs: JSONObject, message: str) -> JSONObject:
        out: JSONObject = {"error": message}
        if self._run is not None and self._run.session is not None:  # still closed by the cleanup step
            out["session"] = self._run.session
        return out

    async def _converse(self, run: ConversationRun, ctx: StepContext, deadline: asyncio.Timeout) -> None:
        """Turn after turn (the input, then the simulator's or a person's messages) until it ends."""
        message = _opening(run.plan)
        for number in itertools.count(1):
            run.number = number
            if message is None:
                message = await self._simulated(run, ctx, number)
                if message is None:
                    return
            turn = await _take(run, ctx, message, number)
            if turn is None:
                return
            run.phase = "checking checkpoints"
            await reach_checkpoints(run, ctx, turn, number)
            if _ended(run, turn, number):
                return
            message = await self._person_message(run, ctx, turn, deadline, number)
            if run.status != "running":
                return

    async def _simulated(self, run: ConversationRun, ctx: StepContext, number: int) -> _Message | None:
        """The simulator's next message, or None when it says the goal is achieved (the run is over)."""
        from ..agents.chat import user_message

        run.phase = "waiting for the simulator"
        answer = await self._simulate(run, ctx, number)
        if answer.goal_achieved:
            run.goal = {"after_turn": number - 1, "reasoning": answer.reasoning}
            run.finish(
                False,
                f"the simulator says the goal is achieved after turn {number - 1}, but "
                f"required checkpoints were not reached: {run.missing_text()}",
            )
            return None
        return _Message([user_message(answer.message)], "simulator", {"reasoning": answer.reasoning})

    async def _person_message(
        self, run: ConversationRun, ctx: StepContext, turn: JSONObject, deadline: asyncio.Timeout, number: int
    ) -> _Message | None:
        """In an interactive run, while the agent awaits input, a person's message (an empty one ends
        the run); None: the simulator writes the next message."""
        from ..agents.chat import user_message

        interactive = run.plan.interactive
        if interactive is None or not interactive.enabled or turn.get("awaiting_input") is not True:
            return None
        answer = await self._ask_person(run, ctx, turn, deadline)
        if answer is None:
            return None
        if not answer:
            run.finish(
                False,
                f"the person ended the conversation after turn {number} with required "
                f"checkpoints not reached: {run.missing_text()}",
            )
            return None
        return _Message([user_message(answer)], "person")

    async def _ask_person(
        self, run: ConversationRun, ctx: StepContext, turn: JSONObject, deadline: asyncio.Timeout
    ) -> str | None:
        """The person's message ("" ends), or None (no terminal: the simulator answers)."""
        import time

        from .interactive import ask_person, terminal_of

        terminal = terminal_of(ctx.run_context)
        if terminal is None:
            return None
        run.phase = "waiting for the person"
        started = time.monotonic()
        answer = await ask_person(
            terminal, turn, run.plan.interactive.timeout if run.plan.interactive else None
        )
        when = deadline.when()
        if when is not None:  # a person's thinking time does not count against the timeout
            deadline.reschedule(when + time.monotonic() - started)
        return answer or ""

    async def _simulate(self, run: ConversationRun, ctx: StepContext, number: int) -> JSONValue:
        from ..checks.conversation import text_history
        from ..llm.errors import LLMError
        from ..llm.simulator import simulate
        from ..llm.validator import resolve_use
        from ..step import JudgeError, JudgeUnavailable

        plan = run.plan
        missing = ctx.run_context.llm_unavailable(resolve_use(plan.simulator.model_use, "simulator")[0])
        if missing is not None:
            run.raise_(JudgeError if missing.error else JudgeUnavailable, str(missing))
        llm = llm_client(ctx.run_context)
        described = {cp.id: {"id": cp.id, "description": cp.description or ""} for cp in plan.checkpoints}
        try:
            return await simulate(
                llm,
                use=plan.simulator.model_use,
                metadata=plan.simulator.metadata,
                conversation=text_history(run.turns),
                turn_number=number,
                max_turns=plan.max_turns,
                reached=[described[i] for i in described if i in run.reached],
                pending=[described[i] for i in described if i not in run.reached],
                repeat=ctx.repeat,
            )
        except LLMError as exc:
            run.raise_(JudgeError, f"simulator error at turn {number}: {exc}")


class _Message(NamedTuple):
    """A user message of the conversation: what is sent, who wrote it, the simulator's note on it."""

    sent: list[JSONObject]
    source: str
    note: JSONObject | None = None


def _opening(plan: DynamicPlan) -> _Message | None:
    """Turn 1's message as written (``input``), or None: the simulator writes it."""
    from ..agents.chat import message_specs

    return None if plan.input is None else _Message(message_specs(plan.input, plan.attachments), "input")


async def _take(run: ConversationRun, ctx: StepContext, message: _Message, number: int) -> JSONObject | None:
    """The agent's reply to ``message``, recorded; None when the agent failed (the run is over)."""
    from ..agents.errors import AgentError
    from .turns import take_turn, turn_record

    plan = run.plan
    assert plan.target is not None  # (process checked)
    run.phase, run.in_flight = "waiting for the agent", (message.sent, message.source)
    try:
        turn = await take_turn(
            ctx,
            plan.target,
            run.turns,
            message.sent,
            plan.options,
            number=number,
            source=message.source,
            base_dir=plan.base_dir,
            test_name=plan.test_name,
            session=run.session,
        )
    except AgentError as exc:
        run.in_flight = None
        run.turns.append(turn_record(number, message.sent, message.source, error=f"agent error: {exc}"))
        run.finish(False, f"agent error at turn {number}: {exc}")
        return None
    run.in_flight = None
    if message.note:
        turn["simulator"] = message.note
    run.turns.append(turn)
    return turn


def _ended(run: ConversationRun, turn: JSONObject, number: int) -> bool:
    """Whether the run ends after this turn: every required checkpoint reached, the agent ended it, or
    the turn limit; the run is finished with the reason."""
    if not run.missing():
        run.finish(True, f"all required checkpoints reached by turn {number}")
    elif turn.get("awaiting_input") is False:
        run.finish(
            False,
            f"the agent ended the conversation at turn {number} (awaiting_input: false) "
            f"with required checkpoints not reached: {run.missing_text()}",
        )
    elif number >= run.plan.max_turns:
        run.finish(
            False,
            f"max turns ({run.plan.max_turns}) reached with required checkpoints not reached: "
            f"{run.missing_text()}",
        )
    else:
        return False
    return True
