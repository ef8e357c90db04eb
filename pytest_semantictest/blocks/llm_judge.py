"""LLMJudge: semantic evaluation by an LLM (semantics in ``pytest_semantictest.llm.judge``).

Without a configured judge the step is not evaluated (the test is skipped, or an error under
``--semantictest-require-judge``); a judge that fails (unreachable, refusal, unparseable output,
replay miss) makes the test an ERROR. Neither is ever turned into a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

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


class LLMJudge(Block):
    name = "LLMJudge"
    concurrency_safe = True
    primary_input = "text"
    config_keys = frozenset({"model", "criteria", "threshold", "continueConversation", "maxTurns", "samples"})
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

    @classmethod
    def validate_config(cls, config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        problems = []
        criteria = config.get("criteria")
        if criteria is not None and not _templated(criteria):
            if (
                not isinstance(criteria, dict)
                or not criteria
                or not all(_number(v) and 0 <= v <= 1 for v in criteria.values())
            ):
                problems.append(("criteria", "must map criterion names to weights between 0 and 1"))
            elif abs(sum(criteria.values()) - 1.0) > 1e-6:
                problems.append(
                    ("criteria", f"weights must sum to 1, they sum to {sum(criteria.values()):g}")
                )
        threshold = config.get("threshold")
        if (
            threshold is not None
            and not _templated(threshold)
            and (not _number(threshold) or not 0 <= threshold <= 1)
        ):
            problems.append(("threshold", f"must be a number between 0 and 1, got {threshold!r}"))
        turns = config.get("maxTurns")
        whole = isinstance(turns, int) and not isinstance(turns, bool)
        if turns is not None and not _templated(turns) and (not whole or turns < 1):
            problems.append(("maxTurns", f"must be a whole number >= 1, got {turns!r}"))
        flag = config.get("continueConversation")
        if flag is not None and not _templated(flag) and not isinstance(flag, bool):
            problems.append(("continueConversation", f"must be true or false, got {flag!r}"))
        samples = config.get("samples")
        if (
            samples is not None
            and not _templated(samples)
            and (not isinstance(samples, int) or isinstance(samples, bool) or not 1 <= samples <= 50)
        ):
            problems.append(("samples", f"must be a whole number from 1 to 50, got {samples!r}"))
        model = config.get("model")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            problems.append(("model", f"must be a model name, got {model!r}"))
        return problems

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
