"""Read a compliance Markdown file into a :class:`~.models.Document`.

``parse_file(path)`` / ``parse_text(text, path)`` raise ``SpecError`` naming every problem
found, each with the file line and what to write instead. The front matter is validated
with pydantic; ``## Setup`` is read tolerantly (it is prose with bullets); every
``### N. Title`` under ``## Test Cases`` becomes a :class:`~.models.TestCase`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from ...errors import Problem, SpecError, clip, did_you_mean
from ...json_types import JSONObject
from ...problems import problems_from
from ..source import read_spec
from ..yamlsource import YamlError, YamlSource, load_yaml
from .agent_bullets import agent_from_items
from .cases import parse_case
from .markdown import (
    Fence,
    Line,
    Section,
    bullet_tree,
    flatten,
    key_value,
    sections,
    text_of,
    tokenize,
    unquote,
)
from .models import Document, EnvVar, FrontMatter, Setup, TestCase

MAX_BYTES = 5 * 1024 * 1024
_CASE_HEADING = re.compile(r"^(?:(\d+)\s*[.):-]\s*)?(.*)$")
_AGENT_HEADING = re.compile(r"^agent\s*:\s*(.+)$", re.I)
_DEFAULT = re.compile(r"\(\s*default\s*:\s*([^)\s]+)\s*\)", re.I)


def parse_file(path: Path) -> Document:
    return parse_text(read_spec(path, MAX_BYTES), path)


def parse_text(text: str, path: Path | str) -> Document:
    problems: list[Problem] = []
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    front, front_lines, body_start = _front_matter(lines, problems)
    tokens = tokenize(lines, body_start, problems)
    _, roots = sections(tokens)
    title, description = _title(roots)
    setup = _setup(_find(roots, "setup"), problems)
    setup.document, setup.path = (front.name if front else ""), str(path)
    cases = _cases(_find(roots, "test cases"), roots, body_start + 1, problems)
    if problems or front is None:
        raise SpecError(str(path), sorted(problems, key=lambda p: p.line or 0))
    return Document(
        path=str(path),
        front=front,
        front_lines=front_lines,
        title=title,
        description=description,
        setup=setup,
        cases=cases,
    )


# --- front matter ---------------------------------------------------------------------------


def _front_matter(
    lines: list[str], problems: list[Problem]
) -> tuple[FrontMatter | None, dict[tuple[str | int, ...], int], int]:
    """The validated front matter, the file line of each key, and the index of the first body line."""
    if not lines or lines[0].strip() != "---":
        problems.append(
            Problem(
                "front matter",
                "a compliance file starts with YAML front matter: a line '---', "
                "then name, version and transport, then '---'",
                1,
            )
        )
        return None, {}, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        problems.append(
            Problem("front matter", "the front matter is never closed: add a line '---' after it", 1)
        )
        return None, {}, len(lines)
    source = _front_yaml(lines[1:end], problems)
    if source is None:
        return None, {}, end + 1
    lines_of = {path: line + 1 for path, line in source.lines.items()}
    if not isinstance(source.data, dict):
        problems.append(Problem("front matter", "must be a mapping with name, version and transport", 2))
        return None, lines_of, end + 1
    return _validated_front(source, source.data, problems), lines_of, end + 1


def _front_yaml(lines: list[str], problems: list[Problem]) -> YamlSource | None:
    """The front matter's YAML, its problems placed at their file lines (None when it cannot be read)."""
    try:
        source = load_yaml("\n".join(lines))
    except YamlError as exc:
        message = re.sub(r"at line (\d+)", lambda m: f"at line {int(m.group(1)) + 1}", str(exc))
        problems.append(Problem("front matter", message, (exc.line or 0) + 1))
        return None
    problems.extend(Problem(p.place or "front matter", p.message, (p.line or 0) + 1) for p in source.problems)
    return source


def _validated_front(source: YamlSource, mapping: JSONObject, problems: list[Problem]) -> FrontMatter | None:
    """The front matter's model (``x-`` keys are the user's own), or None with its problems."""
    data = {k: v for k, v in mapping.items() if not (isinstance(k, str) and k.startswith("x-"))}
    try:
        return FrontMatter.model_validate(data)
    except ValidationError as exc:

        def line_of(path: Sequence[str | int]) -> int:
            return (source.line(path) or 1) + 1

        for problem in problems_from(exc, FrontMatter, line_of):
            problems.append(
                Problem(
                    "front matter" + (f".{problem.place}" if problem.place else ""),
                    problem.message,
                    problem.line,
                )
            )
        return None


# --- sections -------------------------------------------------------------------------------


def _walk(roots: list[Section]) -> list[Section]:
    out: list[Section] = []
    for section in roots:
        out.append(section)
        out.extend(_walk(section.children))
    return out


def _find(roots: list[Section], title: str) -> Section | None:
    return next(
        (s for s in _walk(roots) if s.level <= 2 and s.title.strip().rstrip(":").lower() == title), None
    )


def _title(roots: list[Section]) -> tuple[str, str]:
    first = next((s for s in _walk(roots) if s.level == 1), None)
    if first is None:
        return "", ""
    prose = [t.text.strip() for t in first.body if t.fence is None and t.text.strip()]
    return first.title, " ".join(prose)


def _cases(
    section: Section | None, roots: list[Section], first_line: int, problems: list[Problem]
) -> list[TestCase]:
    if section is None:
        problems.append(_no_cases_section(roots, first_line))
        return []
    cases = []
    for child in section.children:
        if child.level == 3:
            case = _case_under(child, problems)
            if case is not None:
                cases.append(case)
    if not cases and not any(p.line and p.line > section.line for p in problems):
        problems.append(
            Problem("Test Cases", "has no test cases: start each with a heading '### 1. Title'", section.line)
        )
    return cases


def _no_cases_section(roots: list[Section], first_line: int) -> Problem:
    """The file's problem when it has no ``## Test Cases`` section (naming a heading close to it)."""
    titles = [s.title for s in _walk(roots) if s.level <= 2]
    hint = next((did_you_mean(t, ["Test Cases"]) for t in titles if did_you_mean(t, ["Test Cases"])), "")
    return Problem(
        "",
        "no '## Test Cases' section: write the cases as '### 1. Title' under a "
        f"'## Test Cases' heading{hint}",
        first_line,
    )


def _case_under(child: Section, problems: list[Problem]) -> TestCase | None:
    """The case a ``### 1. Title`` heading starts; None when unusable (its problems then are the file's)."""
    match = _CASE_HEADING.match(child.title)
    number, title = (
        (int(match.group(1)) if match and match.group(1) else None),
        (match.group(2).strip() if match else ""),
    )
    if not title:
        problems.append(Problem("", "a test case heading needs a title: '### 1. Simple Message'", child.line))
        return None
    own: list[Problem] = []  # confined to this case: its ERROR, not the file's (see compile.py)
    case = parse_case(number, title, child.line, flatten(child), own)
    if case is None:
        problems.extend(own)
        return None
    case.problems = own
    return case


# --- setup ----------------------------------------------------------------------------------


def _setup(section: Section | None, problems: list[Problem]) -> Setup:
    if section is None:
        return Setup()
    setup = Setup(text=text_of(flatten(section)), line=section.line)
    _agents_from(section.body, None, section.line, setup, problems)
    for child in section.children:
        agent = _AGENT_HEADING.match(child.title)
        key = child.title.strip().rstrip(":").lower()
        if agent:
            _agents_from(flatten(child), unquote(agent.group(1)), child.line, setup, problems)
        elif key in ("tool definitions", "tools"):
            setup.tool_definitions.extend(_tool_definitions(child, problems))
        elif key in ("environment", "environment variables"):
            setup.environment.update(_environment(flatten(child)))
        elif did_you_mean(key, ["tool definitions", "environment"], 0.8):
            problems.append(
                Problem(
                    "Setup",
                    f"unknown section '### {clip(child.title)}'"
                    f"{did_you_mean(key, ['Tool Definitions', 'Environment'], 0.6)}",
                    child.line,
                )
            )
    return setup


def _agents_from(
    tokens: list[Line], heading_id: str | None, line: int, setup: Setup, problems: list[Problem]
) -> None:
    """Agent bullets (``- Name: ...``) of a ``### Agent: id`` block or of the setup's own text."""
    items, _ = bullet_tree(tokens)
    agent = agent_from_items(items, heading_id, line, problems)
    if agent is not None:
        setup.agents.append(agent)


def _tool_definitions(section: Section, problems: list[Problem]) -> list[JSONObject]:
    fences = [t.fence for t in flatten(section) if t.fence is not None]
    if not fences:
        problems.append(
            Problem("Tool Definitions", "needs a ```json block with a list of tool definitions", section.line)
        )
        return []
    return [tool for fence in fences for tool in _fence_tools(fence, problems)]


def _fence_tools(fence: Fence, problems: list[Problem]) -> list[JSONObject]:
    """The tool definitions of one ```json block (one, or a list); an entry that is none is a problem."""
    try:
        data = json.loads(fence.content)
    except (ValueError, RecursionError) as exc:
        line = fence.first + getattr(exc, "lineno", 1) - 1
        why = getattr(exc, "msg", None) or "nested too deeply"
        problems.append(Problem("Tool Definitions", f"not valid JSON: {why}", line))
        return []
    out: list[JSONObject] = []
    for n, tool in enumerate(data if isinstance(data, list) else [data]):
        if not isinstance(tool, dict) or not _tool_name(tool):
            problems.append(
                Problem(
                    "Tool Definitions",
                    f"entry {n + 1} is not a tool definition "
                    '({"type": "function", "function": {"name": ..., "parameters": ...}})',
                    fence.line,
                )
            )
            continue
        out.append(tool)
    return out


def _tool_name(tool: JSONObject) -> str | None:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return name if isinstance(name, str) and name else None


def _environment(tokens: list[Line]) -> dict[str, EnvVar]:
    items, _ = bullet_tree(tokens)
    out: dict[str, EnvVar] = {}
    for item in items:
        pair = key_value(item.text.replace("`", ""))
        if pair is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", pair[0]):
            continue
        default = _DEFAULT.search(pair[1])
        out[pair[0]] = EnvVar(
            name=pair[0], description=pair[1], default=default.group(1) if default else None, line=item.line
        )
    return out
