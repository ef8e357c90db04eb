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
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import AliasChoices, Field, ValidationError, model_validator

from ..checks.specs import Assertions, AttachmentSpec, Duration, InputSpec, StrictSpec
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError
from .turn_evidence import conversation_evidence

if TYPE_CHECKING:
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
        from ..agents.chat import message_specs
        from ..agents.errors import AgentError
        from ..checks.conversation import check_turn
        from ..step import JudgeError, JudgeUnavailable
        from .turns import take_turn, turn_record

        try:
            plan = ConversationConfig.model_validate(dict(self.config))
        except ValidationError as exc:
            raise BlockError(f"Conversation config: {exc.errors()[0]['msg']}") from None
        target = plan.agent.target()
        base_dir = Path(ctx.run_context.rootdir or Path.cwd())
        turns: list[JSONObject] = []
        failures: list[JSONObject] = []
        errors: list[str] = []
        skipped: list[str] = []
        stopped: int | None = None
        try:
            async with asyncio.timeout(plan.timeout):
                for number, spec in enumerate(plan.turns, 1):
                    sent = message_specs(spec.input, spec.attachments)
                    try:
                        turn = await take_turn(
                            ctx,
                            target,
                            turns,
                            sent,
                            merged_options(plan.options, spec.options),
                            number=number,
                            source="static",
                            base_dir=base_dir,
                        )
                    except AgentError as exc:
                        turns.append(turn_record(number, sent, "static", error=f"agent error: {exc}"))
                        failures.append({"turn": number, "check": "agent", "message": f"agent error: {exc}"})
                        stopped = number
                        break
                    results = await check_turn(
                        spec.assertions,
                        turn,
                        run_context=ctx.run_context,
                        earlier=turns,
                        repeat=ctx.repeat,
                        base_dir=base_dir,
                    )
                    turn["assertions"] = [r.record() for r in results]
                    turns.append(turn)
                    errors += [
                        f"turn {number}: {r.error}" for r in results if r.error and r.spec.type == "agent"
                    ]
                    skipped += [r.skipped for r in results if r.skipped]
                    bad = [
                        (r.spec.describe(), r.outcome.message if r.outcome else str(r.error))
                        for r in results
                        if (r.outcome is not None and not r.outcome.passed)
                        or (r.error and r.spec.type != "agent")
                    ]
                    failures += [
                        {"turn": number, "check": check, "message": message} for check, message in bad
                    ]
                    if bad or errors:
                        stopped = number
                        break
        except TimeoutError:
            stopped = len(turns) + 1
            failures.append(
                {"turn": stopped, "check": "timeout", "message": f"timeout after {plan.timeout:g}s"}
            )
        output = {
            "passed": not failures and not errors,
            "turns": turns,
            "failures": failures,
            "stoppedAt": stopped,
        }
        if failures:  # a failing conversation fails the test unless an assertion reads this output
            first = failures[0]
            output["error"] = f"turn {first['turn']}: {first['check']}: {first['message']}"
        if errors and not failures:
            error = JudgeError("; ".join(errors))
            error.output = output  # type: ignore[attr-defined]
            raise error
        if skipped and not failures:
            raise JudgeUnavailable("; ".join(dict.fromkeys(skipped)))
        return output
