"""The simulator role: an LLM playing the user in a dynamic conversation.

Given persona, goal, the conversation so far, the turn number, the turn limit and the reached and
pending checkpoints, it answers ``{message, goal_achieved, reasoning}`` (structured output, checked
with pydantic; Yao's ``input`` is accepted for ``message``). An answer that is not that, twice, is
an ``LLMError``: the test is an ERROR, never a pass. The rendered prompt holds nothing that changes
from run to run, so every call can be replayed from the cache.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypedDict, Unpack

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from ..json_types import JSONValue
from .client import LLMClient
from .structured import model_schema
from .structured import parse_answer as parse_model
from .validator import resolve_use

SIMULATOR_TEMPLATE_VERSION = "simulator-1"
SCHEMA_NAME = "simulator_turn"

SYSTEM = """You play the USER of an AI agent in an automated test. Stay in the persona and pursue the goal.
Write only what this user would type next: short, natural, one message. Do not play the agent.
Answer questions the agent asks with plausible details that fit the goal. Set "goal_achieved" to true
only when the agent has fully done what the goal asks; then "message" may be empty.
Answer with a JSON object matching the response schema: "message", "goal_achieved", "reasoning"."""


class SimulatorAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    message: str = Field(
        default="",
        validation_alias=AliasChoices("message", "input"),
        description="the user's next message to the agent",
    )
    goal_achieved: bool
    reasoning: str = ""

    @model_validator(mode="after")
    def _has_message(self) -> SimulatorAnswer:
        if not self.goal_achieved and not self.message.strip():
            raise ValueError("'message' is empty but the goal is not achieved")
        return self


SCHEMA: dict[str, JSONValue] = model_schema(SimulatorAnswer, SCHEMA_NAME)


def parse_answer(text: str) -> SimulatorAnswer:
    return parse_model(SimulatorAnswer, text, "simulator answer")


class SimulatorState(TypedDict):
    """What the simulated user knows at one turn (the keyword arguments of :func:`simulate`)."""

    metadata: Mapping[str, JSONValue]
    conversation: Sequence[Mapping[str, JSONValue]]
    turn_number: int
    max_turns: int
    reached: Sequence[Mapping[str, JSONValue]]
    pending: Sequence[Mapping[str, JSONValue]]


def simulator_messages(**given: Unpack[SimulatorState]) -> list[dict[str, str]]:
    """The system prompt and one user message holding the state as JSON (stable key order)."""
    metadata, conversation = given["metadata"], given["conversation"]
    state = {
        "persona": metadata.get("persona", ""),
        "goal": metadata.get("goal", ""),
        "turn_number": given["turn_number"],
        "max_turns": given["max_turns"],
        "checkpoints_reached": list(given["reached"]),
        "checkpoints_pending": list(given["pending"]),
        "conversation": list(conversation),
        "last_response": next(
            (m.get("content") for m in reversed(conversation) if m.get("role") == "assistant"), None
        ),
    }
    extra = {k: v for k, v in metadata.items() if k not in ("persona", "goal")}
    if extra:
        state["metadata"] = extra
    body = json.dumps(state, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": body}]


async def simulate(
    client: LLMClient, *, use: str | None, repeat: int = 0, **state: Unpack[SimulatorState]
) -> SimulatorAnswer:
    """The simulated user's next message; raises LLMError (unreachable, refusal, garbage twice)."""
    role, model = resolve_use(use, "simulator")
    messages = simulator_messages(**state)
    completion = await client.complete(
        role,
        messages,
        model=model,
        schema=SCHEMA,
        parse=parse_answer,
        repeat=repeat,
        template=SIMULATOR_TEMPLATE_VERSION,
    )
    answer: SimulatorAnswer = completion.parsed
    return answer
