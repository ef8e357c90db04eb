""":class:`~pytest_semantictest.evidence.Note` records (a block's own facts and text) in every report:
the console's "evidence" section, an HTML extra, JUnit properties and the results file."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..evidence import Note
from ..json_types import JSONValue
from ..model import StepTrace, Verdict
from ..redact import Redactor
from .records import in_verdict, step_name

if TYPE_CHECKING:
    from .html_values import Render


def _where(t: StepTrace | None, note: Note) -> str:
    return f"{t.step.id} ({t.step.block}): {note.title}" if t is not None else note.title


def render_notes(verdict: Verdict, limit: int = 2000) -> str:
    """The console's "evidence" section ("" when there are no notes); the caller redacts it."""
    from .failure import dump  # (the failure renderer: only a test that shows its sections needs it)

    lines: list[str] = []
    for t, note in in_verdict(verdict, Note):
        lines.append(_where(t, note))
        lines += [f"  {key}: {dump(value, limit)}" for key, value in note.fields.items()]
        lines += ["  " + line for line in note.text.splitlines()]
    return "\n".join(lines)


def notes_html(r: Render, item: object, verdict: Verdict) -> str:
    """Each note: its title, a table of its facts, its text."""
    from .html_values import table

    parts = []
    for t, note in in_verdict(verdict, Note):
        title = f"{step_name(t)}: {note.title}" if t is not None else note.title
        body = (
            table("st-facts", ["fact", "value"], [[r.cell(k), r.cell(v)] for k, v in note.fields.items()])
            if note.fields
            else ""
        )
        body += r.pre(note.text) if note.text else ""
        parts.append(f'<div class="st-note"><h4>{r.text(title)}</h4>{body}</div>')
    return "<h4>Evidence</h4>" + "".join(parts) if parts else ""


def _scalar(value: JSONValue) -> JSONValue:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def note_properties(verdict: Verdict, redactor: Redactor | None) -> list[tuple[str, object]]:
    """``("<title>: <fact>", value)`` for every note's facts (text values redacted)."""
    props = []
    for _, note in in_verdict(verdict, Note):
        for key, value in note.fields.items():
            shown = _scalar(value)
            if isinstance(shown, str) and redactor is not None:
                shown = redactor.text(shown)
            props.append((f"{note.title}: {key}", shown))
    return props


def note_records(verdict: Verdict) -> list[dict[str, JSONValue]]:
    """The notes for the results file (the writer redacts the whole record)."""
    return [
        {
            "step": t.step.id if t is not None else None,
            "title": note.title,
            "fields": dict(note.fields),
            **({"text": note.text} if note.text else {}),
        }
        for t, note in in_verdict(verdict, Note)
    ]
