"""Labelled examples for a judged check (``*.labels.jsonl``): what ``semantictest agreement`` reads.

One JSON object a line (blank and ``//`` lines skipped): ``text`` (the reply to judge), ``expected``
(the expected behaviour: a string, or ``{expectedBehavior, constraints}`` as LLMJudge takes it),
``label`` (true: the reply should pass), and optionally ``id``, ``threshold``, ``criteria``, ``model``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import Problem, SpecError
from .validation import problems_from
from .yao.reader import read_lines


class LabelSpec(BaseModel):
    """One labelled example."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str | None = None
    text: Any = Field(description="the reply to judge")
    expected: str | dict[str, Any] = Field(description="the expected behaviour, as LLMJudge's input 'expected'")
    label: bool = Field(description="true when the reply should pass the check")
    threshold: float | None = Field(default=None, ge=0, le=1)
    criteria: dict[str, float] | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class Labelled:
    """An example as the judge will be asked about it."""

    name: str
    line: int
    inputs: dict[str, Any]
    config: dict[str, Any]
    label: bool


def load_labels(path: Path) -> list[Labelled]:
    """Every example of ``path``; raises SpecError naming each problem's line (a bad ``expected``
    or ``criteria`` included, as the judge would reject it)."""
    from ..llm.judge import JudgeRequest

    lines, problems = read_lines(path)
    found: list[Labelled] = []
    for line in lines:
        try:
            spec = LabelSpec.model_validate(line.data)
        except ValidationError as exc:
            number = line.number
            problems += problems_from(exc, LabelSpec, lambda _at: number)
            continue
        config = {k: v for k, v in (("threshold", spec.threshold), ("criteria", spec.criteria), ("model", spec.model))
                  if v is not None}
        inputs = {"text": spec.text, "expected": spec.expected}
        try:
            JudgeRequest.from_inputs(inputs, config)
        except ValueError as exc:
            problems.append(Problem("", str(exc), line.number))
            continue
        found.append(Labelled(spec.id or f"line {line.number}", line.number, inputs, config, spec.label))
    if problems:
        raise SpecError(str(path), sorted(problems, key=lambda p: p.line or 0))
    return found
