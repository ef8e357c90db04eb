"""Read and check the cases of a Yao file, keeping apart what is wrong with the file and with a case.

A problem that makes the file unreadable (not UTF-8, a line that is not JSON or not an object, a
repeated ``id``, no cases at all) is the file's: a collection error. Everything confined to one
case (an unknown key, a bad value, a duplicate key, an ``after`` cycle, a missing attachment or
image file, a hook that cannot run) is that case's ``Case.error``: it ERRORs, the others run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ...errors import Problem
from ...json_types import JSONValue
from ...problems import problems_from
from ..validation import check_node_id
from .models import CaseSpec
from .reader import Line, read_lines

SOURCE_PARTS = ("image", "audio", "file", "text")
"""Content part types that may name a file with ``source`` (Yao's ``{"type": "image", "source": "file://..."}``)."""


@dataclass
class ParsedCase:
    """One line of the file: its case when valid, and the problems confined to it."""

    line: Line
    spec: CaseSpec | None
    problems: list[Problem] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The case's id, or ``line-<n>`` when it has no usable one."""
        raw = self.line.data.get("id")
        if isinstance(raw, str):
            try:
                return check_node_id(raw)
            except ValueError:
                pass
        return f"line-{self.line.number}"

    @property
    def skip(self) -> str | None:
        raw = self.line.data.get("skip")
        if raw is True:
            return "skip: true in the test case"
        return raw if isinstance(raw, str) and raw.strip() else None


def parse_file(path: Path) -> tuple[list[ParsedCase], list[Problem]]:
    """Every case of the file with its own problems, and the file's problems."""
    lines, file_problems = read_lines(path)
    parsed: list[ParsedCase] = []
    for line in lines:
        problems = list(line.problems)
        spec: CaseSpec | None = None
        try:
            spec = CaseSpec.model_validate(line.data)
        except ValidationError as exc:
            problems += problems_from(exc, CaseSpec, lambda _loc: line.number)  # called here, not kept  # noqa: B023
        if spec is not None:
            problems += [Problem(p.place, p.message, line.number) for p in case_problems(spec, path.parent)]
        parsed.append(ParsedCase(line, spec if not problems else None, problems))
    return parsed, file_problems


def case_problems(spec: CaseSpec, base: Path) -> list[Problem]:
    """What the models cannot see: ``after`` orders, files that are not there, hooks that cannot run."""
    from ...blocks.simulated_conversation import order_problems

    found = [Problem(f"checkpoints[{i}].after", m) for i, m in order_problems(spec.checkpoints or [])]
    found += _attachment_problems(spec, base)
    inputs = [("input", spec.input)] + [
        (f"turns[{i}].input", t.input) for i, t in enumerate(spec.turns or [])
    ]
    for where, value in inputs:
        found += [Problem(place, message) for place, message in part_problems(value, where, base)]
    found += _hook_problems(spec, base)
    found += _script_problems(spec, base)
    return found


def _attachment_problems(spec: CaseSpec, base: Path) -> list[Problem]:
    """Attachments (of the case and of its turns) naming a local file that is not there."""
    from ...agents.chat import resolve_source

    places = [("attachments", spec.attachments)] + [
        (f"turns[{i}].attachments", t.attachments) for i, t in enumerate(spec.turns or [])
    ]
    found = []
    for where, attachments in places:
        for j, attachment in enumerate(attachments):
            local = resolve_source(attachment.source, base)
            if local is not None and not local.is_file():
                found.append(Problem(f"{where}[{j}].source", f"file not found: {local}"))
    return found


def _hook_problems(spec: CaseSpec, base: Path) -> list[Problem]:
    """The ``before``/``after`` hooks that cannot run."""
    from .hooks import hook_problem

    found = []
    for key in ("before", "after"):
        hook = getattr(spec, key)
        if hook is not None and (message := hook_problem(hook, base)):
            found.append(Problem(key, message))
    return found


def _script_problems(spec: CaseSpec, base: Path) -> list[Problem]:
    """Script assertions whose module is nowhere: found before the agent is called."""
    from .hooks import script_problem

    lists = [("assertions", spec.assertions)]
    lists += [(f"turns[{i}].assertions", t.assertions) for i, t in enumerate(spec.turns or [])]
    lists += [(f"checkpoints[{i}].assertion", c.assertion) for i, c in enumerate(spec.checkpoints or [])]
    found = []
    for where, assertions in lists:
        for k, assertion in enumerate(assertions):
            if assertion.type == "script" and (message := script_problem(assertion.callable_ref, base)):
                found.append(Problem(f"{where}[{k}]", message))
    return found


def _parts(value: JSONValue, where: str) -> Iterator[tuple[str, Mapping[str, JSONValue]]]:
    """Every content part of an input (a message or a list of them), with its place."""
    messages = value if isinstance(value, list) else [value]
    for i, message in enumerate(messages):
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            continue
        at = f"{where}[{i}]" if isinstance(value, list) else where
        for j, part in enumerate(content):
            if isinstance(part, Mapping):
                yield f"{at}.content[{j}]", part


def part_problems(value: JSONValue, where: str, base: Path) -> list[tuple[str, str]]:
    """Content parts that name a file that is not there, or name nothing at all."""
    found = []
    for place, part in _parts(value, where):
        kind = part.get("type")
        source = part.get("source")
        if kind not in SOURCE_PARTS or kind == "text" and source is None:
            continue
        if source is None:
            if not any(k in part for k in ("url", "image_url", "input_audio", "file", "data")):
                found.append(
                    (place, f"an {kind} part needs 'source' (file://path, relative to this file) or 'url'")
                )
            continue
        if (message := _source_problem(source, base)) is not None:
            found.append((f"{place}.source", message))
    return found


def _source_problem(source: JSONValue, base: Path) -> str | None:
    """Why a part's ``source`` names no file that can be read, or None."""
    from ...agents.chat import resolve_source

    if not isinstance(source, str) or not source:
        return "must be file://path, a path, an https URL or a data URL"
    local = resolve_source(source, base)
    if local is not None and not local.is_file():
        return f"file not found: {local}"
    return None
