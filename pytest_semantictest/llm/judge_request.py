"""What one judge evaluation is about (:class:`JudgeRequest`), read from an LLMJudge block's inputs and
config or the ``llm_judge`` fixture's arguments; the prompt (:mod:`.prompts`) and the judge
(:mod:`.judge`) take it from here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..json_types import JSONValue
from .consistency import MAX_SAMPLES

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
        text = _judged_text(inputs)
        behavior, constraints = _expected(inputs.get("expected"))
        history = _history(inputs.get("history"))
        criteria, threshold, max_turns, samples = _scoring(config)
        model = config.get("model")
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


def _judged_text(inputs: Mapping[str, JSONValue]) -> JSONValue:
    """Input ``text`` (or ``body``): the response to judge."""
    if "text" in inputs:
        return inputs["text"]
    if "body" in inputs:
        return inputs["body"]
    raise ValueError("LLMJudge needs input 'text' (the response to judge); it is missing or names nothing")


def _history(history: JSONValue) -> list[JSONValue]:
    if history is None:
        return []
    if not isinstance(history, list):
        raise ValueError(f"LLMJudge input 'history' must be a list of messages, got {type(history).__name__}")
    return history


def _scoring(config: Mapping[str, JSONValue]) -> tuple[dict[str, float], float, int, int | None]:
    """Config ``criteria`` (weights summing to 1), ``threshold``, ``maxTurns`` and ``samples``."""
    try:
        criteria = {str(k): float(v) for k, v in (config.get("criteria") or DEFAULT_CRITERIA).items()}
        threshold = float(config.get("threshold", DEFAULT_THRESHOLD))
        max_turns = int(config.get("maxTurns", DEFAULT_MAX_TURNS))
        samples = None if config.get("samples") is None else int(config["samples"])
    except (AttributeError, TypeError, ValueError):
        raise ValueError(
            "LLMJudge config: criteria must map names to weights, threshold be a number, "
            "maxTurns and samples integers"
        ) from None
    if samples is not None and not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"LLMJudge config.samples must be between 1 and {MAX_SAMPLES}, got {samples}")
    if not criteria or abs(sum(criteria.values()) - 1.0) > 1e-6:
        raise ValueError("LLMJudge config.criteria must map criterion names to weights summing to 1")
    return criteria, threshold, max_turns, samples


def _expected(expected: JSONValue) -> tuple[str, list[str]]:
    if isinstance(expected, str) and expected.strip():
        return expected, []
    if not isinstance(expected, Mapping):
        raise ValueError(
            "LLMJudge needs input 'expected' with 'expectedBehavior' (what the response should do)"
        )
    behavior = expected.get("expectedBehavior")
    if not isinstance(behavior, str) or not behavior.strip():
        raise ValueError("LLMJudge needs input 'expected.expectedBehavior' (a non-empty string)")
    constraints = expected.get("constraints") or []
    if isinstance(constraints, str):
        constraints = [constraints]
    if not isinstance(constraints, list):
        raise ValueError("LLMJudge input 'expected.constraints' must be a list of strings")
    return behavior, [str(c) for c in constraints]
