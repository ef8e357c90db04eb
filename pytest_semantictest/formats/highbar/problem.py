"""A problem of a highbar spec, in highbar's one-line form (the typed spec and the validator give them)."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import Problem


@dataclass(frozen=True)
class HighbarProblem(Problem):
    """A problem rendered the highbar way: ``file: place: message (line N)``.

    The file and path come first, exactly as highbar prints them; the line follows.
    """

    column: int | None = None

    def render(self, file: str) -> str:
        where = f" {self.place}:" if self.place else ""
        at = ""
        if self.line:
            at = f" (line {self.line}, column {self.column})" if self.column else f" (line {self.line})"
        return f"{file}:{where} {self.message}{at}"
