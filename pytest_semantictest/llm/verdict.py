"""The judge's structured verdict: the JSON schema we ask for and the pydantic model that checks it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

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
    return model_schema(JudgeVerdict, SCHEMA_NAME, keys={"details": criteria, "constraints": numbered}, exclude=exclude)


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
