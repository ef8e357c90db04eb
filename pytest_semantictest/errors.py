"""Errors users see: spec errors with file, place and a did-you-mean."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .shown import shorten


class SemanticTestWarning(UserWarning):
    """The base of every warning the plugin gives (public): ``-W ignore::pytest_semantictest.SemanticTestWarning``
    or a ``filterwarnings`` line silences or raises them all at once."""


def clip(text: object, limit: int = 60) -> str:
    """``text`` as a string, secrets masked and shortened (``shown.shorten``) when longer than ``limit``."""
    text = str(text)
    if not text.isprintable():  # keep a message on one line: show line breaks and controls escaped
        text = repr(text)[1:-1]
    return shorten(text, limit)


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """`` — did you mean 'x'?`` when a close choice exists, else an empty string."""
    if len(word) > 100:  # no sensible suggestion, and difflib is slow on huge strings
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" — did you mean '{close[0]}'?" if close else ""


def shown_paths(text: str, root: Path) -> str:
    """``text`` with every path under ``root`` spelled relative to it, as pytest spells node ids:
    spec errors are made with the file's full path, and every artefact of a run shows them this way
    (the one spelling of a place: ``specs/orders.json:12: tests[0]: message``)."""
    prefix = str(root).rstrip(os.sep) + os.sep
    return text.replace(prefix, "") if prefix != os.sep else text


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a spec file: where (path like ``tests[1].pipeline[0]``) and what.

    Every format renders its problems this one way, ``file:line: place: message``."""

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
    """A ``${...}`` reference inside a longer string names nothing.

    ``unset_env``: it names nothing because an environment variable is not set, a problem of the
    run's set-up rather than of what the agent did (the test ERRORs with this one line)."""

    def __init__(self, message: str, *, unset_env: bool = False) -> None:
        super().__init__(message)
        self.unset_env = unset_env
