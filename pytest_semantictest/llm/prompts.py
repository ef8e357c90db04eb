"""Prompt templates. Changing a template's wording means bumping its version (it is in the cache key).

Prompts never contain the current date or anything else that changes from run to run: the same
test must render the same messages, or the replay cache could never hit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..json_types import JSONValue

if TYPE_CHECKING:
    from .judge_request import JudgeRequest

JUDGE_TEMPLATE_VERSION = "judge-1"

CRITERIA_HELP: dict[str, str] = {
    "accuracy": "Is what the response says and does correct, and consistent with the expected behaviour "
    "and the conversation? Unsupported or false claims lower this score.",
    "completeness": "Does the response (with its tool calls) do everything the expected behaviour asks for?",
    "relevance": "Does the response address the user's request and stay on topic?",
}

JUDGE_SYSTEM = """You are a strict, impartial evaluator of an AI assistant's response.
Judge the response only against the expected behaviour, the constraints and the criteria you are given.
Tool calls listed with the response were made by the assistant; take them into account.
Score every criterion from 0.0 (not at all) to 1.0 (fully). A response that does not attempt the
task scores low on every criterion. Do not reward claims the response and tool calls do not support.
Answer with a JSON object matching the response schema: first "reasoning" (two or three sentences
explaining the scores), then "details" with one score per criterion{extra}."""


def render_value(value: object) -> str:
    """Text as is; anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def render_history(history: Sequence[JSONValue]) -> str:
    lines = []
    for message in history:
        if isinstance(message, Mapping):
            role = str(message.get("role", "message"))
            content = message.get("content")
            lines.append(f"{role}: {render_value(content) if content is not None else ''}".rstrip())
        else:
            lines.append(render_value(message))
    return "\n".join(lines)


def judge_messages(request: JudgeRequest) -> list[dict[str, str]]:
    """The judge's system and user messages for one evaluation."""
    text, constraints, history = request.text, request.constraints, request.history
    continue_conversation = request.continue_conversation
    parts: list[str] = []
    if history:
        parts.append("## Conversation so far\n" + render_history(history))
    response = "(no text)" if text is None else render_value(text)
    parts.append("## Response to evaluate\n" + (response if response.strip() else "(empty response)"))
    if request.has_tool_calls:
        calls = render_value(request.tool_calls) if request.tool_calls else "No tool calls were made."
        parts.append("## Tool calls made by the assistant\n" + calls)
    parts.append("## Expected behaviour\n" + request.expected_behavior)
    if constraints:
        listed = "\n".join(f"{n}. {c}" for n, c in enumerate(constraints, 1))
        parts.append("## Constraints (each must hold)\n" + listed)
    parts.append(_criteria_section(request.criteria))
    if continue_conversation:
        parts.append(
            f'## Next turn\nThis is turn {request.turn} of at most {request.max_turns}. Set "shouldContinue" to true when '
            'the conversation should go on to test the expected behaviour further, and "nextPrompt" to the '
            "next message the user would send; otherwise false and null."
        )
    system = _judge_system(request)
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _judge_system(request: JudgeRequest) -> str:
    """The system prompt, asking for the constraints' and the next turn's answers when they apply."""
    extra = []
    if request.constraints:
        extra.append('"constraints" with, for each numbered constraint, whether it is met and why')
    if request.continue_conversation:
        extra.append('"shouldContinue" and "nextPrompt"')
    return JUDGE_SYSTEM.format(extra=("; then " + "; then ".join(extra)) if extra else "")


def _criteria_section(criteria: Iterable[str]) -> str:
    listed = "\n".join(
        f"- {name}: {CRITERIA_HELP.get(name, f'Judge the response for {name}.')}" for name in criteria
    )
    return "## Criteria (score each from 0.0 to 1.0)\n" + listed
