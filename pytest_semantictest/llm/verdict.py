"""The judge's structured verdict: the JSON schema we ask for, the pydantic model that checks it, and the
lines that show a verdict to a person (a failing ``llm_judge`` fixture, the reports)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ..evidence import Judgement
from ..json_types import JSONValue
from .structured import model_schema, parse_answer

SCHEMA_NAME = "judge_verdict"

Score = Annotated[float, Field(ge=0.0, le=1.0, description="score from 0.0 to 1.0")]


class ConstraintVerdict(BaseModel):
    """Whether one numbered constraint holds."""

    model_config = ConfigDict(extra="forbid")

    met: bool
    reason: str = ""


class JudgeVerdict(BaseModel):
    """What the model answers. The overall score is computed by us from ``details``."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str
    details: dict[str, Score]
    constraints: dict[str, ConstraintVerdict] = Field(default_factory=dict)
    shouldContinue: bool = False
    nextPrompt: str | None = None


def verdict_schema(
    criteria: Sequence[str], constraints: int = 0, continue_conversation: bool = False
) -> dict[str, JSONValue]:
    """``{name, schema}`` for ``response_format``: :class:`JudgeVerdict` scoring exactly ``criteria``
    and answering constraints 1 to ``constraints``; the next-turn keys only when asked for."""
    exclude = [] if constraints else ["constraints"]
    if not continue_conversation:
        exclude += ["shouldContinue", "nextPrompt"]
    numbered = [str(n) for n in range(1, constraints + 1)]
    return model_schema(
        JudgeVerdict, SCHEMA_NAME, keys={"details": criteria, "constraints": numbered}, exclude=exclude
    )


def parse_verdict(text: str, criteria: Sequence[str], constraints: int = 0) -> JudgeVerdict:
    """Validate the model's JSON; raises ValueError saying what is wrong (used for the re-ask)."""
    verdict = parse_answer(JudgeVerdict, text, "verdict")
    missing = [name for name in criteria if name not in verdict.details]
    unknown = [name for name in verdict.details if name not in criteria]
    if missing or unknown:
        names = ", ".join(criteria)
        raise ValueError(f"details must score exactly {names} (missing {missing}, unexpected {unknown})")
    expected = {str(n) for n in range(1, constraints + 1)}
    if set(verdict.constraints) != expected:
        wanted, got = sorted(expected, key=int), sorted(verdict.constraints)
        raise ValueError(f"constraints must answer exactly {wanted}, got {got}")
    return verdict


def relation_to_threshold(score: object, threshold: object) -> str:
    """`` >= threshold 0.7`` (or ``<``) when both are numbers, else nothing."""
    if isinstance(score, (int, float)) and isinstance(threshold, (int, float)):
        return f" {'>=' if score >= threshold else '<'} threshold {threshold:g}"
    return ""


def judge_lines(j: Judgement | Mapping[str, JSONValue]) -> list[str]:
    """Lines like ``judge score: 0.15 < threshold 0.7 (not passed; model gpt-4o-mini)`` (of a
    verdict, or of a dict with the LLMJudge block's output keys)."""
    if isinstance(j, Mapping):
        j = Judgement.from_output(j)
    model = f"; model {j.model}" if j.model else ""
    shown = f"{j.score:g}" if isinstance(j.score, (int, float)) else repr(j.score)
    lines = [
        f"judge score: {shown}{relation_to_threshold(j.score, j.threshold)} ({'passed' if j.passed else 'not passed'}{model})"
    ]
    if j.details:
        lines.append("criteria: " + ", ".join(f"{k} {_num(v)}" for k, v in j.details.items()))
    lines += _constraint_lines(j.constraints)
    if j.samples:
        lines.append(f"samples: {samples_text(j.samples)}")
    if j.reasoning:
        lines.append(f"reasoning: {j.reasoning}")
    if j.continues:
        lines.append(f"next prompt: {j.next_prompt}")
    return lines


def _constraint_lines(constraints: Sequence[Mapping[str, JSONValue]]) -> list[str]:
    """``constraint 1 VIOLATED: <constraint> (<reason>)`` for each constraint the judge answered."""
    lines = []
    for n, c in enumerate(constraints, 1):
        state = "met" if c.get("met") else "VIOLATED"
        reason = f" ({c['reason']})" if c.get("reason") else ""
        lines.append(f"constraint {n} {state}: {c.get('constraint', '')}{reason}")
    return lines


def samples_text(samples: Mapping[str, JSONValue]) -> str:
    """``3/5 passed, scores 0.40-0.90 (sd 0.21), UNSTABLE; 5 live, 0 replayed``."""
    scores = (
        f", scores {_num(samples['min'])}-{_num(samples['max'])} (sd {_num(samples['sd'])})"
        if "min" in samples
        else ""
    )
    unstable = ", UNSTABLE" if samples.get("unstable") else ""
    return (
        f"{samples.get('passed')}/{samples.get('n')} passed{scores}{unstable}; "
        f"{samples.get('live', 0)} live, {samples.get('replayed', 0)} replayed"
    )


def _num(value: object) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)
