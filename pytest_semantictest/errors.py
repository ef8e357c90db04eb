"""Errors users see: spec errors with file, place and a did-you-mean."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


class SemanticTestWarning(UserWarning):
    """The base of every warning the plugin gives (public): ``-W ignore::pytest_semantictest.SemanticTestWarning``
    or a ``filterwarnings`` line silences or raises them all at once."""


def clip(text: object, limit: int = 60) -> str:
    """``text`` as a string, shortened with ``...`` when longer than ``limit`` (for messages)."""
    text = str(text)
    if not text.isprintable():  # keep a message on one line: show line breaks and controls escaped
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """`` — did you mean 'x'?`` when a close choice exists, else an empty string."""
    if len(word) > 100:  # no sensible suggestion, and difflib is slow on huge strings
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" — did you mean '{close[0]}'?" if close else ""


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a spec file: where (path like ``tests[1].pipeline[0]``) and what."""

    place: str
    message: str
    line: int | None = None

    def render(self, file: str) -> str:
        loc = f"{file}:{self.line}" if self.line else file
        where = f" {self.place}:" if self.place else ""
        return f"{loc}:{where} {self.message}"


class SpecError(Exception):
    """A spec file cannot be used; carries every problem found in it."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = problems
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(p.render(self.file) for p in self.problems)


class ReferenceError_(Exception):  # noqa: N801
    """A ``${...}`` reference inside a longer string names nothing."""
