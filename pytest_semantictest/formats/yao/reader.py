"""Read a Yao test file: JSON Lines, one case a line, with the line number of each.

Blank lines and ``//`` comment lines are skipped. Every line that is not a JSON object or repeats
an earlier case's ``id`` is a :class:`Problem` of the file naming its line; a duplicate key inside a
case is a problem of that case (``Line.problems``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import Problem, clip
from ...files import UnreadableFile, read_text
from ...json_types import JSONObject
from ..jsonsource import JsonError, load_json

MAX_BYTES = 20 * 1024 * 1024
_AT_LINE = re.compile(r"^invalid JSON at line \d+ column (\d+)")


@dataclass
class Line:
    """One case as written: its line number and parsed object."""

    number: int
    data: JSONObject
    problems: list[Problem] = field(default_factory=list)
    """Problems confined to this case (a duplicate key): the case's error, not the file's."""


def read_lines(path: Path) -> tuple[list[Line], list[Problem]]:
    """The cases of ``path`` and the problems found reading it (never raises for bad content)."""
    try:
        text = read_text(path, MAX_BYTES)
    except UnreadableFile as exc:
        return [], [Problem("", str(exc), exc.line)]
    return parse_lines(text)


def is_skipped(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith("//")


def _parse_line(content: str, number: int) -> Line | Problem:
    """One line of the file as a case (a JSON object, its duplicate keys noted), or why it is not one."""
    try:
        source = load_json(content)
    except JsonError as exc:
        message = _AT_LINE.sub(r"invalid JSON at column \1", str(exc))
        return Problem(exc.place, message, number)
    duplicates = [Problem(dup.place, dup.message, number) for dup in source.duplicates]
    data = source.data
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else type(data).__name__
        return Problem("", f"each line must be one test case (a JSON object), got {kind}", number)
    return Line(number, data, duplicates)


def parse_lines(text: str) -> tuple[list[Line], list[Problem]]:
    lines: list[Line] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for number, content in enumerate(text.splitlines(), 1):
        if is_skipped(content):
            continue
        line = _parse_line(content, number)
        if isinstance(line, Problem):
            problems.append(line)
            continue
        case_id = line.data.get("id")
        if isinstance(case_id, str) and case_id in first_line:
            problems.append(
                Problem(
                    "id", f"duplicate id '{clip(case_id)}' (first used on line {first_line[case_id]})", number
                )
            )
        elif isinstance(case_id, str):
            first_line[case_id] = number
        lines.append(line)
    if not lines and not problems:
        problems.append(Problem("", "no test cases: write one JSON object per line"))
    return lines, problems
