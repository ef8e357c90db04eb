"""LLMJudge: semantic evaluation by an LLM (semantics in ``pytest_semantictest.llm.judge``).

Without a configured judge the step is not evaluated (the test is skipped, or an error under
``--semantictest-require-judge``); a judge that fails (unreachable, refusal, unparseable output,
replay miss) makes the test an ERROR. Neither is ever turned into a score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict

from ..evidence import Judgement
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError

if TYPE_CHECKING:
    from ..evidence import Evidence
    from ..step import StepContext

DEFAULT_CRITERIA = {"accuracy": 0.4, "completeness": 0.3, "relevance": 0.3}


def _number(value: JSONValue) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _templated(value: JSONValue) -> bool:
    return isinstance(value, str) and "${" in value


def _unless_templated(check: Callable[[JSONValue], str | None]) -> Callable[[JSONValue], JSONValue]:
    """A field check that lets an absent value and a ``${}`` reference (resolved when the step runs) through."""

    def validate(value: JSONValue) -> JSONValue:
        problem = None if value is None or _templated(value) else check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return validate


def _criteria(value: JSONValue) -> str | None:
    if (
        not isinstance(value, dict)
        or not value
        or not all(_number(v) and 0 <= v <= 1 for v in value.values())
    ):
        return "must map criterion names to weights between 0 and 1"
    total = sum(v for v in value.values() if isinstance(v, (int, float)))
    return None if abs(total - 1.0) <= 1e-6 else f"weights must sum to 1, they sum to {total:g}"


def _threshold(value: JSONValue) -> str | None:
    ok = _number(value) and 0 <= value <= 1
    return None if ok else f"must be a number between 0 and 1, got {value!r}"


def _max_turns(value: JSONValue) -> str | None:
    whole = isinstance(value, int) and not isinstance(value, bool)
    return None if whole and value >= 1 else f"must be a whole number >= 1, got {value!r}"


def _flag(value: JSONValue) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false, got {value!r}"


def _samples(value: JSONValue) -> str | None:
    whole = isinstance(value, int) and not isinstance(value, bool)
    return None if whole and 1 <= value <= 50 else f"must be a whole number from 1 to 50, got {value!r}"


def _model_name(value: JSONValue) -> str | None:
    return None if isinstance(value, str) and value.strip() else f"must be a model name, got {value!r}"


def _named_model(value: JSONValue) -> JSONValue:
    """``model`` is never a reference: it names the model the judge asks."""
    problem = None if value is None else _model_name(value)
    if problem is not None:
        raise ValueError(problem)
    return value


class LLMJudgeConfig(BaseModel):
    """An LLMJudge step's config. Any value but ``model`` may be a ``${}`` reference, checked when the step
    runs; keys it does not know are the loader's to name (``LLMJudge.config_keys``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    criteria: Annotated[JSONValue, BeforeValidator(_unless_templated(_criteria))] = None
    threshold: Annotated[JSONValue, BeforeValidator(_unless_templated(_threshold))] = None
    maxTurns: Annotated[JSONValue, BeforeValidator(_unless_templated(_max_turns))] = None
    continueConversation: Annotated[JSONValue, BeforeValidator(_unless_templated(_flag))] = None
    samples: Annotated[JSONValue, BeforeValidator(_unless_templated(_samples))] = None
    model: Annotated[JSONValue, BeforeValidator(_named_model)] = None


class LLMJudge(Block):
    name = "LLMJudge"
    concurrency_safe = True
    primary_input = "text"
    config_model = LLMJudgeConfig
    config_keys = frozenset(LLMJudgeConfig.model_fields)
    inputs = ("text", "toolCalls", "history", "expected")
    input_keys = frozenset(inputs) | {"body"}
    outputs = (
        "score",
        "passed",
        "threshold",
        "reasoning",
        "details",
        "constraints",
        "shouldContinue",
        "nextPrompt",
        "model",
    )
    concurrent: ClassVar[bool] = True  # independent judge steps of one pipeline run at the same time

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        from ..llm.errors import LLMError
        from ..llm.judge import Judge
        from ..llm.judge_request import JudgeRequest
        from ..step import JudgeError, JudgeUnavailable

        try:
            request = JudgeRequest.from_inputs(inputs, self.config)
        except ValueError as exc:
            raise BlockError(str(exc)) from None
        missing = ctx.run_context.llm_unavailable("judge")
        if missing is not None:
            raise (JudgeError if missing.error else JudgeUnavailable)(str(missing))
        judge = ctx.judge
        if not isinstance(judge, Judge):  # (the run context holds it as a Protocol: it sits below llm/)
            raise JudgeError(f"the run's judge is a {type(judge).__name__}, not the LLM judge")
        try:
            verdict: JSONObject = await judge.judge(
                request,
                repeat=ctx.repeat,
                samples=ctx.settings.judge_samples,
                fail_unstable=ctx.settings.fail_unstable,
            )
            return verdict
        except LLMError as exc:
            raise JudgeError(str(exc)) from None

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The judge's verdict, or why there is none (the step's error)."""
        out = trace.output
        if isinstance(out, Mapping) and "score" in out and "reasoning" in out:
            return [Judgement.from_output(out)]
        return [Judgement(error=trace.error or "not evaluated")]
