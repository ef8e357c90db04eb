"""The validator role: an LLM that says whether a reply meets criteria (Yao's ``type: agent``).

It receives the reply (``output``), what the user said (``input``), the conversation so far, the
reply's tool calls, the criteria and other metadata, and answers ``{passed, score, reason,
suggestions}`` (structured output, checked with pydantic). With a ``threshold`` the score decides:
``passed`` means ``score >= threshold``. Infrastructure failures raise ``LLMError`` (never a verdict).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, Field

from ..json_types import JSONValue
from .client import LLMClient
from .prompts import render_history, render_value
from .roles import ROLES
from .structured import model_schema, parse_answer

if TYPE_CHECKING:
    from .fixtures import Run

VALIDATOR_TEMPLATE_VERSION = "validator-1"
SCHEMA_NAME = "validator_result"

SYSTEM = """You are a strict, impartial validator of an AI agent's response in a test.
Decide whether the response meets the criteria, taking the conversation and the agent's tool calls into account.
Answer with a JSON object matching the response schema: "passed" (true only when every criterion is met),
"score" (0.0 = not at all, 1.0 = fully), "reason" (one or two sentences) and "suggestions" (how the agent
could improve; an empty list when it passed)."""


class ValidatorResult(BaseModel):
    """What the model answers."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    score: float = Field(ge=0.0, le=1.0, description="how well the response meets the criteria, 0.0 to 1.0")
    reason: str
    suggestions: list[str] = Field(default_factory=list)


SCHEMA: dict[str, JSONValue] = model_schema(ValidatorResult, SCHEMA_NAME)


def parse_result(text: str) -> ValidatorResult:
    """Validate the model's JSON; raises ValueError saying what is wrong (used for the re-ask)."""
    return parse_answer(ValidatorResult, text, "validator result")


YAO_AGENT_ID = re.compile(r"[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)+")
"""A Yao agent id: dotted assistant path segments that start with a letter (``tests.simulator-agent``,
``workers.test.user-sim``); model names with dots have a digit after them (``gpt-4.1``, ``qwen2.5``)."""


def names_agent(use: str | None) -> bool:
    """Whether ``use`` names a Yao agent rather than an LLM role or a model: an ``agents:`` prefix
    (Yao's spelling in assertions) or the shape of an agent id (Yao's ``simulator.use``)."""
    if not use:
        return False
    if use.startswith("agents:"):
        return use.removeprefix("agents:") not in ROLES
    return use not in ROLES and YAO_AGENT_ID.fullmatch(use) is not None


def pick_use(use: str | None, model: str | None) -> str | None:
    """What ``use`` and ``options.model``/``connector`` ask for together: a role or model in ``use``
    wins; a Yao agent is played by the place's role, with the options' model (Yao: the connector
    overrides the agent's own) when one is given."""
    if use and not names_agent(use):
        return use.removeprefix("agents:")  # an LLM role: agents:validator is the validator role
    return model or use


def resolve_use(use: str | None, default_role: str) -> tuple[str, str | None]:
    """``(role, model)`` for a ``use``: an LLM role (its endpoint and model), a model for
    ``default_role``, or a Yao agent, which ``default_role`` plays with its own configured model (an
    agent name is never sent as a model name: there is no Yao runtime to ask that agent)."""
    if names_agent(use):
        return default_role, None
    if use and use.startswith("agents:"):
        use = use[len("agents:") :]
    if not use:
        return default_role, None
    if use in ROLES:
        return use, None
    return default_role, use


class ValidatorContext(TypedDict, total=False):
    """What the validator is shown besides the reply and the criteria (see :func:`validator_messages`)."""

    input: JSONValue
    history: Sequence[JSONValue]
    tool_calls: JSONValue
    metadata: Mapping[str, JSONValue] | None


class ValidateOptions(ValidatorContext, total=False):
    """The keyword arguments of the ``llm_validator`` fixture's methods (:meth:`Validator.validate`'s)."""

    threshold: float | None
    use: str | None
    repeat: int


def validator_messages(
    *,
    output: JSONValue,
    criteria: str,
    input: JSONValue = None,  # noqa: A002
    history: Sequence[JSONValue] = (),
    tool_calls: JSONValue = None,
    metadata: Mapping[str, JSONValue] | None = None,
) -> list[dict[str, str]]:
    parts: list[str] = []
    if history:
        parts.append("## Conversation before the response\n" + render_history(history))
    if input is not None:
        parts.append("## The user's message\n" + render_value(input))
    shown = "(no text)" if output is None else render_value(output)
    parts.append("## Response to validate\n" + (shown if shown.strip() else "(empty response)"))
    if tool_calls is not None:
        parts.append(
            "## Tool calls made by the agent\n" + (render_value(tool_calls) if tool_calls else "None.")
        )
    parts.append("## Criteria\n" + criteria)
    if metadata:
        parts.append(
            "## More context\n"
            + json.dumps(dict(metadata), indent=2, sort_keys=True, ensure_ascii=False, default=str)
        )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


class Validator:
    """Runs validations with the client's ``validator`` role (or the role ``use`` names)."""

    role = "validator"

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    def configured(self, use: str | None = None) -> bool:
        role, _ = resolve_use(use, self.role)
        return self.client.config.configured(role)

    async def validate(
        self,
        output: JSONValue,
        criteria: str,
        *,
        threshold: float | None = None,
        use: str | None = None,
        repeat: int = 0,
        **context: Unpack[ValidatorContext],
    ) -> dict[str, JSONValue]:
        """``{passed, score, threshold, reason, suggestions, model}``; raises LLMError on failure."""
        role, model = resolve_use(use, self.role)
        messages = validator_messages(output=output, criteria=criteria, **context)
        completion = await self.client.complete(
            role,
            messages,
            model=model,
            schema=SCHEMA,
            parse=parse_result,
            repeat=repeat,
            template=VALIDATOR_TEMPLATE_VERSION,
        )
        result: ValidatorResult = completion.parsed
        passed = result.passed if threshold is None else result.score >= threshold
        return {
            "passed": passed,
            "score": round(result.score, 4),
            "threshold": threshold,
            "reason": result.reason,
            "suggestions": list(result.suggestions),
            "model": completion.model,
        }


def validator_lines(result: Mapping[str, JSONValue]) -> list[str]:
    """``validator score: 0.4 < threshold 0.7 (not passed; model m)``, reason, suggestions."""
    score, threshold = result.get("score"), result.get("threshold")
    relation = ""
    if isinstance(score, (int, float)) and isinstance(threshold, (int, float)):
        relation = f" {'>=' if score >= threshold else '<'} threshold {threshold:g}"
    model = f"; model {result['model']}" if result.get("model") else ""
    shown = f"{score:g}" if isinstance(score, (int, float)) else repr(score)
    lines = [
        f"validator score: {shown}{relation} ({'passed' if result.get('passed') else 'not passed'}{model})"
    ]
    if result.get("reason"):
        lines.append(f"reason: {result['reason']}")
    for suggestion in result.get("suggestions") or []:
        lines.append(f"suggestion: {suggestion}")
    return lines


class ValidatorFixture:
    """``llm_validator.check(output, "criteria", input=..., threshold=0.8)`` fails the test with the
    validator's reason and suggestions when the output does not meet the criteria.

    ``evaluate`` returns the result dict without asserting; ``acheck``/``aevaluate`` in async tests.
    Without a configured validator the test is skipped (an error under
    ``--semantictest-require-judge``); an LLM failure raises ``LLMError``.
    """

    def __init__(self, client: LLMClient | None, run: Run, require: bool = False) -> None:
        self._validator = Validator(client) if client is not None else None
        self._run = run
        self._require = require

    def check(
        self, output: JSONValue, criteria: str, **options: Unpack[ValidateOptions]
    ) -> dict[str, JSONValue]:
        __tracebackhide__ = True
        return _assert_passed(self._run(self.aevaluate(output, criteria, **options)))

    async def acheck(
        self, output: JSONValue, criteria: str, **options: Unpack[ValidateOptions]
    ) -> dict[str, JSONValue]:
        __tracebackhide__ = True
        return _assert_passed(await self.aevaluate(output, criteria, **options))

    def evaluate(
        self, output: JSONValue, criteria: str, **options: Unpack[ValidateOptions]
    ) -> dict[str, JSONValue]:
        __tracebackhide__ = True
        return self._run(self.aevaluate(output, criteria, **options))

    async def aevaluate(
        self, output: JSONValue, criteria: str, **options: Unpack[ValidateOptions]
    ) -> dict[str, JSONValue]:
        __tracebackhide__ = True
        import pytest

        from ..run_context import llm_unavailable
        from .errors import NotConfigured

        use = options.get("use")
        validator = self._validator
        role = resolve_use(use, Validator.role)[0]
        configured = validator is not None and validator.configured(use)
        missing = llm_unavailable(role, configured=configured, require=self._require)
        if missing is not None or validator is None:
            if missing is not None and missing.error:
                raise NotConfigured(str(missing))
            pytest.skip(str(missing))
        return await validator.validate(output, criteria, **options)


def _assert_passed(result: dict[str, JSONValue]) -> dict[str, JSONValue]:
    __tracebackhide__ = True
    if not result["passed"]:
        import pytest

        pytest.fail(
            "LLM validator: the output does not meet the criteria\n"
            + "\n".join("  " + line for line in validator_lines(result)),
            pytrace=False,
        )
    return result
