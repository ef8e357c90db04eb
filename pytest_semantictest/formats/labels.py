"""Labelled examples for a judged check (``*.labels.jsonl``): what ``semantictest agreement`` reads.

One JSON object a line (blank and ``//`` lines skipped): ``text`` (the reply to judge), ``expected``
(the expected behaviour: a string, or ``{expectedBehavior, constraints}`` as LLMJudge takes it),
``label`` (true: the reply should pass), and optionally ``id``, ``threshold``, ``criteria``, ``model``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import Problem, SpecError
from ..json_types import JSONObject, JSONValue
from ..problems import problems_from
from .yao.reader import read_lines


class LabelSpec(BaseModel):
    """One labelled example."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str | None = None
    text: JSONValue = Field(description="the reply to judge")
    expected: str | JSONObject = Field(description="the expected behaviour, as LLMJudge's input 'expected'")
    label: bool = Field(description="true when the reply should pass the check")
    threshold: float | None = Field(default=None, ge=0, le=1)
    criteria: dict[str, float] | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class Labelled:
    """An example as the judge will be asked about it."""

    name: str
    line: int
    inputs: JSONObject
    config: JSONObject
    label: bool


def load_labels(
    path: Path, check: Callable[[Labelled], str | None] = lambda _example: None
) -> list[Labelled]:
    """Every example of ``path``; raises SpecError naming each problem's line, those ``check`` finds
    too (the judge's own rules for ``expected`` and ``criteria``: the caller knows the judge)."""
    lines, problems = read_lines(path)
    found: list[Labelled] = []
    for line in lines:
        try:
            spec = LabelSpec.model_validate(line.data)
        except ValidationError as exc:
            number = line.number
            problems += problems_from(exc, LabelSpec, lambda _at: number)  # noqa: B023
            continue
        config = {
            k: v
            for k, v in (("threshold", spec.threshold), ("criteria", spec.criteria), ("model", spec.model))
            if v is not None
        }
        example = Labelled(
            spec.id or f"line {line.number}",
            line.number,
            {"text": spec.text, "expected": spec.expected},
            config,
            spec.label,
        )
        problem = check(example)
        if problem is not None:
            problems.append(Problem("", problem, line.number))
            continue
        found.append(example)
    if problems:
        raise SpecError(str(path), sorted(problems, key=lambda p: p.line or 0))
    return found
