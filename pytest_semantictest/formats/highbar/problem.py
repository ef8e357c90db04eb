"""A problem of a highbar spec (the typed spec and the validator give them), rendered as every format's
are: ``file:line: place: message`` (highbar itself prints ``file: place: message (line N)``; one
spelling across the four formats is the deliberate difference, see docs/highbar.md)."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import Problem


@dataclass(frozen=True)
class HighbarProblem(Problem):
    """A problem with the column a YAML syntax error names: ``file:line: place: message (column N)``."""

    column: int | None = None

    def render(self, file: str) -> str:
        text = super().render(file)
        return f"{text} (column {self.column})" if self.line and self.column else text
