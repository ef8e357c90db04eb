"""LLMJudge semantics: what is judged, how the score is computed, what the block outputs.

The model scores each criterion from 0 to 1 and says whether each constraint holds; the overall
``score`` is the weighted sum of the criterion scores, computed here (never taken from the model).
``passed`` means ``score >= threshold`` and every constraint met. Infrastructure failures raise
:class:`~pytest_semantictest.llm.errors.LLMError`; they are never turned into a score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..json_types import JSONValue
from .client import Completion, LLMClient
from .consistency import combine_judge, sample
from .judge_request import DEFAULT_CRITERIA, DEFAULT_THRESHOLD, JudgeRequest
from .prompts import JUDGE_TEMPLATE_VERSION, judge_messages
from .verdict import JudgeVerdict, parse_verdict, verdict_schema


class Judge:
    """Evaluates :class:`JudgeRequest` objects with the client's ``judge`` role."""

    role = "judge"

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def evaluate(
        self, inputs: Mapping[str, JSONValue], config: Mapping[str, JSONValue], repeat: int = 0
    ) -> dict[str, JSONValue]:
        """The LLMJudge block's output for raw inputs and config."""
        return await self.judge(JudgeRequest.from_inputs(inputs, config), repeat=repeat)

    async def judge(
        self, request: JudgeRequest, repeat: int = 0, samples: int = 1, fail_unstable: bool = False
    ) -> dict[str, JSONValue]:
        """Ask the model, validate its verdict, compute the score; raises LLMError on failure.
        With ``samples`` > 1 (or the request's own), it is asked that many times and the answers are
        combined (:mod:`.consistency`)."""
        criteria = list(request.criteria)
        count = len(request.constraints)
        samples = request.samples or samples
        messages = judge_messages(request)

        async def ask(index: int) -> Completion[JudgeVerdict]:
            return await self.client.complete(
                self.role,
                messages,
                model=request.model,
                schema=verdict_schema(criteria, count, request.continue_conversation),
                parse=lambda text: parse_verdict(text, criteria, count),
                repeat=repeat,
                template=JUDGE_TEMPLATE_VERSION,
                sample=index,
                samples=samples,
            )

        if samples <= 1:
            completion = await ask(0)
            return outcome(request, completion.parsed, completion.model)
        completions = await sample(ask, samples)
        outputs = [outcome(request, c.parsed, c.model) for c in completions]
        return combine_judge(outputs, sum(1 for c in completions if c.cached), fail_unstable)


def outcome(request: JudgeRequest, verdict: JudgeVerdict, model: str) -> dict[str, JSONValue]:
    """The block output: our weighted score, pass/fail against the threshold, the model's reasons."""
    details = {name: round(float(verdict.details[name]), 4) for name in request.criteria}
    score = round(sum(weight * details[name] for name, weight in request.criteria.items()), 4)
    constraints = [
        {
            "constraint": text,
            "met": verdict.constraints[str(n)].met,
            "reason": verdict.constraints[str(n)].reason,
        }
        for n, text in enumerate(request.constraints, 1)
    ]
    passed = score >= request.threshold and all(c["met"] for c in constraints)
    go_on = request.continue_conversation and verdict.shouldContinue and request.turn < request.max_turns
    return {
        "score": score,
        "passed": passed,
        "threshold": request.threshold,
        "reasoning": verdict.reasoning,
        "details": details,
        "constraints": constraints,
        "shouldContinue": bool(go_on),
        "nextPrompt": (verdict.nextPrompt or None) if go_on else None,
        "model": model,
    }


def request_from_args(
    text: JSONValue,
    expected_behavior: str,
    *,
    constraints: Sequence[str] = (),
    threshold: float = DEFAULT_THRESHOLD,
    criteria: Mapping[str, float] | None = None,
    history: Sequence[JSONValue] = (),
    tool_calls: JSONValue = None,
    model: str | None = None,
) -> JudgeRequest:
    """A request from Python arguments (the ``llm_judge`` fixture)."""
    inputs: dict[str, JSONValue] = {
        "text": text,
        "expected": {"expectedBehavior": expected_behavior, "constraints": list(constraints)},
        "history": list(history),
    }
    if tool_calls is not None:
        inputs["toolCalls"] = tool_calls
    config: dict[str, JSONValue] = {"threshold": threshold, "criteria": dict(criteria or DEFAULT_CRITERIA)}
    if model:
        config["model"] = model
    return JudgeRequest.from_inputs(inputs, config)
