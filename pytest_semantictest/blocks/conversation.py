"""Conversation: a whole static multi-turn conversation with an agent, as one pipeline step.

Config: ``agent`` ``{endpoint, protocol (openai | highbar), headers, model, body, timeout (ms),
awaitingInputTools, awaitingInputPattern}``, ``turns`` ``[{input, assertions (alias assert),
options, attachments}]``, ``options`` (every turn's, a turn's own override them), ``timeout``
("30s", "2m"). Each turn's assertions are checked on its reply; the conversation stops at the
first turn that fails. Output: ``passed``, ``turns`` (turn records with their ``assertions``),
``failures`` (``{turn, check, message}``), ``stoppedAt`` (the failing turn or null) and, when it
failed, ``error`` (so the test fails unless an assertion reads the output).

A validator that fails (unreachable, garbage) makes the test an ERROR; one that is not configured
skips it (unless a deterministic assertion failed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import AliasChoices, Field, ValidationError, model_validator

from ..checks.specs import Assertions, AttachmentSpec, Duration, InputSpec, StrictSpec
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError
from .turn_evidence import conversation_evidence

if TYPE_CHECKING:
    from ..checks.conversation import AssertionResult
    from ..evidence import Evidence
    from ..step import StepContext


class PipelineAgent(StrictSpec):
    endpoint: str
    protocol: str = "openai"
    headers: dict[str, str] = Field(default_factory=dict)
    model: str | None = None
    body: JSONObject = Field(default_factory=dict)
    timeout: int = Field(default=60000, ge=1)
    awaitingInputTools: list[str] | None = None
    awaitingInputPattern: str | None = None

    @model_validator(mode="after")
    def _protocol(self) -> PipelineAgent:
        from ..agents.chat import PROTOCOLS

        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
        return self

    def target(self) -> JSONValue:
        from ..agents.chat import target_from_mapping

        return target_from_mapping(
            {
                "endpoint": self.endpoint,
                "protocol": self.protocol,
                "headers": self.headers,
                "model": self.model,
                "body": self.body,
                "timeout": self.timeout,
                "awaiting_input_tools": self.awaitingInputTools,
                "awaiting_input_pattern": self.awaitingInputPattern,
            }
        )


class PipelineTurn(StrictSpec):
    input: InputSpec
    assertions: Assertions = Field(
        default_factory=list, validation_alias=AliasChoices("assertions", "assert")
    )
    options: JSONObject = Field(default_factory=dict)
    attachments: list[AttachmentSpec] = Field(default_factory=list)


class ConversationConfig(StrictSpec):
    agent: PipelineAgent
    turns: list[PipelineTurn] = Field(min_length=1)
    options: JSONObject = Field(default_factory=dict)
    timeout: Duration | None = None


def merged_options(base: Mapping[str, JSONValue], own: Mapping[str, JSONValue]) -> JSONObject:
    """A turn's options override the case's; ``metadata`` is merged key by key."""
    out = {**base, **own}
    if isinstance(base.get("metadata"), Mapping) and isinstance(own.get("metadata"), Mapping):
        out["metadata"] = {**base["metadata"], **own["metadata"]}
    return out


class Conversation(Block):
    name = "Conversation"
    concurrency_safe = True
    reads_agent_traces = True  # through take_turn: a highbar-protocol agent's trace records
    whole_story = True
    config_model = ConversationConfig
    config_keys = frozenset(ConversationConfig.model_fields)
    outputs = ("passed", "turns", "failures", "stoppedAt")

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """Every turn, its tool calls and validators' verdicts."""
        return conversation_evidence(trace)

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        try:
            plan = ConversationConfig.model_validate(dict(self.config))
        except ValidationError as exc:
            raise BlockError(f"Conversation config: {exc.errors()[0]['msg']}") from None
        talk = _Transcript()
        try:
            async with asyncio.timeout(plan.timeout):
                await _converse(plan, ctx, talk)
        except TimeoutError:
            talk.stopped = len(talk.turns) + 1
            talk.fail(talk.stopped, "timeout", f"timeout after {plan.timeout:g}s")
        return talk.output()


async def _converse(plan: ConversationConfig, ctx: StepContext, talk: _Transcript) -> None:
    """Each turn in order, its assertions checked on its reply, until one fails."""
    from ..agents.chat import message_specs
    from ..agents.errors import AgentError
    from ..checks.conversation import check_turn
    from .turns import take_turn, turn_record

    target = plan.agent.target()
    base_dir = Path(ctx.run_context.rootdir or Path.cwd())
    for number, spec in enumerate(plan.turns, 1):
        sent = message_specs(spec.input, spec.attachments)
        options = merged_options(plan.options, spec.options)
        try:
            turn = await take_turn(
                ctx, target, talk.turns, sent, options, number=number, source="static", base_dir=base_dir
            )
        except AgentError as exc:
            talk.turns.append(turn_record(number, sent, "static", error=f"agent error: {exc}"))
            talk.fail(number, "agent", f"agent error: {exc}")
            talk.stopped = number
            return
        results = await check_turn(
            spec.assertions,
            turn,
            run_context=ctx.run_context,
            earlier=talk.turns,
            repeat=ctx.repeat,
            base_dir=base_dir,
        )
        turn["assertions"] = [r.record() for r in results]
        talk.turns.append(turn)
        if talk.judged(number, results):
            talk.stopped = number
            return


@dataclass
class _Transcript:
    """The conversation so far: its turns, the checks that failed, what validators could not say."""

    turns: list[JSONObject] = field(default_factory=list)
    failures: list[JSONObject] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Validators of the agent that failed (unreachable, garbage): the test is an ERROR."""
    skipped: list[str] = field(default_factory=list)
    """Why a validator was not asked (none configured)."""
    stopped: int | None = None

    def fail(self, turn: int, check: str, message: str) -> None:
        self.failures.append({"turn": turn, "check": check, "message": message})

    def judged(self, number: int, results: list[AssertionResult]) -> bool:
        """Take a turn's assertion results; True when the conversation stops here."""
        self.errors += [f"turn {number}: {r.error}" for r in results if _validator_failed(r)]
        self.skipped += [r.skipped for r in results if r.skipped]
        bad = [r for r in results if _failed(r)]
        for r in bad:
            self.fail(number, r.spec.describe(), r.outcome.message if r.outcome else str(r.error))
        return bool(bad or self.errors)

    def output(self) -> JSONObject:
        """The step's output, or the ERROR / not-evaluated its validators make of it."""
        from ..step import JudgeError, JudgeUnavailable

        output: JSONObject = {
            "passed": not self.failures and not self.errors,
            "turns": self.turns,
            "failures": self.failures,
            "stoppedAt": self.stopped,
        }
        if self.failures:  # a failing conversation fails the test unless an assertion reads this output
            first = self.failures[0]
            output["error"] = f"turn {first['turn']}: {first['check']}: {first['message']}"
            return output
        if self.errors:
            error = JudgeError("; ".join(self.errors))
            error.output = output  # type: ignore[attr-defined]
            raise error
        if self.skipped:
            raise JudgeUnavailable("; ".join(dict.fromkeys(self.skipped)))
        return output


def _validator_failed(result: AssertionResult) -> bool:
    """An ``agent`` assertion whose validator failed (unreachable, garbage): an ERROR, not a verdict."""
    return bool(result.error) and result.spec.type == "agent"


def _failed(result: AssertionResult) -> bool:
    """An assertion that failed, or that could not be checked for a reason other than the validator."""
    return bool(
        (result.outcome is not None and not result.outcome.passed)
        or (result.error and result.spec.type != "agent")
    )
