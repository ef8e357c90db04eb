"""LLMJudge semantics: what is judged, how the score is computed, what the block outputs.

The model scores each criterion from 0 to 1 and says whether each constraint holds; the overall
``score`` is the weighted sum of the criterion scores, computed here (never taken from the model).
``passed`` means ``score >= threshold`` and every constraint met. Infrastructure failures raise
:class:`~pytest_semantictest.llm.errors.LLMError`; they are never turned into a score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..json_types import JSONValue
from .client import Completion, LLMClient
from .consistency import MAX_SAMPLES, combine_judge, sample
from .prompts import JUDGE_TEMPLATE_VERSION, judge_messages
from .verdict import JudgeVerdict, parse_verdict, verdict_schema

DEFAULT_CRITERIA: dict[str, float] = {"accuracy": 0.4, "completeness": 0.3, "relevance": 0.3}
DEFAULT_THRESHOLD = 0.7
DEFAULT_MAX_TURNS = 5


@dataclass
class JudgeRequest:
    """One evaluation, normalised from a block's inputs and config (or the fixture's arguments)."""

    text: JSONValue
    expected_behavior: str
    constraints: list[str] = field(default_factory=list)
    tool_calls: JSONValue = None
    has_tool_calls: bool = False
    history: list[JSONValue] = field(default_factory=list)
    criteria: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_CRITERIA))
    threshold: float = DEFAULT_THRESHOLD
    model: str | None = None
    continue_conversation: bool = False
    max_turns: int = DEFAULT_MAX_TURNS
    samples: int | None = None
    """How many times the judge is asked (``config.samples``); None: the run's setting."""

    @classmethod
    def from_inputs(cls, inputs: Mapping[str, JSONValue], config: Mapping[str, JSONValue]) -> JudgeRequest:
        """Read LLMJudge inputs (``text``, ``toolCalls``, ``history``, ``expected``) and config.

        Raises ValueError naming the input that is missing or malformed.
        """
        if "text" in inputs:
            text = inputs["text"]
        elif "body" in inputs:
            text = inputs["body"]
        else:
            raise ValueError("LLMJudge needs input 'text' (the response to judge); it is missing or names nothing")
        behavior, constraints = _expected(inputs.get("expected"))
        history = inputs.get("history")
        if history is None:
            history = []
        if not isinstance(history, list):
            raise ValueError(f"LLMJudge input 'history' must be a list of messages, got {type(history).__name__}")
        model = config.get("model")
        try:
            criteria = {str(k): float(v) for k, v in (config.get("criteria") or DEFAULT_CRITERIA).items()}
            threshold = float(config.get("threshold", DEFAULT_THRESHOLD))
            max_turns = int(config.get("maxTurns", DEFAULT_MAX_TURNS))
            samples = None if config.get("samples") is None else int(config["samples"])
        except (AttributeError, TypeError, ValueError):
            raise ValueError("LLMJudge config: criteria must map names to weights, threshold be a number, "
                             "maxTurns and samples integers") from None
        if samples is not None and not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"LLMJudge config.samples must be between 1 and {MAX_SAMPLES}, got {samples}")
        if not criteria or abs(sum(criteria.values()) - 1.0) > 1e-6:
            raise ValueError("LLMJudge config.criteria must map criterion names to weights summing to 1")
        return cls(
            text=text,
            expected_behavior=behavior,
            constraints=constraints,
            tool_calls=inputs.get("toolCalls"),
            has_tool_calls="toolCalls" in inputs,
            history=history,
            criteria=criteria,
            threshold=threshold,
            model=str(model) if model else None,
            continue_conversation=bool(config.get("continueConversation", False)),
            max_turns=max(1, max_turns),
            samples=samples,
        )

    @property
    def turn(self) -> int:
        """The conversation turn being judged: the number of user messages so far (at least 1)."""
        users = sum(1 for m in self.history if isinstance(m, Mapping) and m.get("role") == "user")
        return max(1, users)

    def messages(self) -> list[dict[str, str]]:
        return judge_messages(self)


def _expected(expected: JSONValue) -> tuple[str, list[str]]:
    if isinstance(expected, str) and expected.strip():
        return expected, []
    if not isinstance(expected, Mapping):
        raise ValueError("LLMJudge needs input 'expected' with 'expectedBehavior' (what the response should do)")
    behavior = expected.get("expectedBehavior")
    if not isinstance(behavior, str) or not behavior.strip():
        raise ValueError("LLMJudge needs input 'expected.expectedBehavior' (a non-empty string)")
    constraints = expected.get("constraints") or []
    if isinstance(constraints, str):
        constraints = [constraints]
    if not isinstance(constraints, list):
        raise ValueError("LLMJudge input 'expected.constraints' must be a list of strings")
    return behavior, [str(c) for c in constraints]


class Judge:
    """Evaluates :class:`JudgeRequest` objects with the client's ``judge`` role."""

    role = "judge"

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def evaluate(self, inputs: Mapping[str, JSONValue], config: Mapping[str, JSONValue], repeat: int = 0) -> dict[str, JSONValue]:
        """The LLMJudge block's output for raw inputs and config."""
        return await self.judge(JudgeRequest.from_inputs(inputs, config), repeat=repeat)

    async def judge(self, request: JudgeRequest, repeat: int = 0, samples: int = 1,
                    fail_unstable: bool = False) -> dict[str, JSONValue]:
        """Ask the model, validate its verdict, compute the score; raises LLMError on failure.
        With ``samples`` > 1 (or the request's own), it is asked that many times and the answers are
        combined (:mod:`.consistency`)."""
        criteria = list(request.criteria)
        count = len(request.constraints)
        samples = request.samples or samples
        messages = request.messages()

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
        {"constraint": text, "met": verdict.constraints[str(n)].met, "reason": verdict.constraints[str(n)].reason}
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
