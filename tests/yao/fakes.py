"""The fake OpenAI-compatible server (tests/llm/fake_openai.py) playing simulator, validator and
generator for the conversation tests.

Simulator: a user who wants to file a $3500 travel expense (see :func:`expense_user`), or any
policy ``(state) -> (message, goal_achieved)`` set on ``.simulator``. Validator: passes a reply
containing one of ``.good_words``, else fails with a reason and a suggestion. Generator: ``.cases``.
Scripted replies (``queue``) still come first, so faults (garbage, 500s) stay easy.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.llm.fake_openai import FakeOpenAI

Policy = Callable[[dict[str, Any]], tuple[str, bool]]


def expense_user(state: dict[str, Any]) -> tuple[str, bool]:
    """Answer what the expense assistant asks; say the goal is achieved once it is submitted."""
    last = (state.get("last_response") or "").lower()
    if not state.get("conversation"):
        return "I want to submit an expense", False
    if "submitted" in last:
        return "", True
    if "type of expense" in last:
        return "Business travel, $3500", False
    if "shall i submit" in last:
        return "Yes, confirm", False
    return "Hello?", False


def satisfied_user(state: dict[str, Any]) -> tuple[str, bool]:
    """Says the goal is achieved as soon as the agent offers help."""
    if "how can i help" in (state.get("last_response") or "").lower():
        return "", True
    return "hello", False


def chatty_user(state: dict[str, Any]) -> tuple[str, bool]:
    return "hello again", False


def by_goal(state: dict[str, Any]) -> tuple[str, bool]:
    """Pick the user by the goal: "expense" files one, "hello" is satisfied at once, else chats on."""
    goal = str(state.get("goal", "")).lower()
    if "expense" in goal:
        return expense_user(state)
    if "hello" in goal:
        return satisfied_user(state)
    return chatty_user(state)


class ConversationFake(FakeOpenAI):
    def __init__(self) -> None:
        super().__init__()
        self.simulator: Policy = by_goal
        self.good_words: tuple[str, ...] = ("submitted",)
        self.cases: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> str:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        messages = body.get("messages") or [{}]
        user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
        if schema == "simulator_turn":
            message, done = self.simulator(json.loads(user))
            return json.dumps({"message": message, "goal_achieved": done, "reasoning": "scripted user"})
        if schema == "validator_result":
            response = user.split("## Response to validate\n", 1)[-1].split("\n\n## ", 1)[0]
            if any(word in response for word in self.good_words):
                return json.dumps(
                    {"passed": True, "score": 0.9, "reason": "meets the criteria", "suggestions": []}
                )
            return json.dumps(
                {
                    "passed": False,
                    "score": 0.3,
                    "reason": "the reply does not confirm the expense",
                    "suggestions": ["Mention the reference number"],
                }
            )
        if schema == "generated_cases":
            return json.dumps({"cases": self.cases})
        return super().answer(body)

    def roles(self) -> list[str]:
        """The schema name of every request, in order."""
        return [
            ((b.get("response_format") or {}).get("json_schema") or {}).get("name", "") for b in self.bodies()
        ]
