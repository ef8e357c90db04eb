"""Report sections attached to items (shown by pytest on failure and by pytest-html)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..model import Outcome, Verdict

if TYPE_CHECKING:
    from ..redact import Redactor


def add_sections(item: pytest.Item, verdict: Verdict, redactor: Redactor, limit: int = 2000) -> None:
    """Attach the pipeline trace (and the LLM judges' verdicts, and other evidence) when the case did
    not pass, or with ``-vv`` (``-rA`` then shows passed tests' traces too). The trace is brief but
    with ``-vv``, which shows it whole (headers, bookkeeping, whole values). The HTML report shows
    the same in its extras and leaves these sections out of its log (:mod:`.html`)."""
    wanted = verdict.outcome is not Outcome.PASSED or item.config.get_verbosity() >= 2
    if not wanted or not verdict.trace:
        return
    # the renderers are imported here: a passing test (the common case) shows no section
    from .brief_trace import render_brief_trace
    from .conversation import has_conversation, render_conversation
    from .failure import render_trace
    from .judge import has_judgements, render_judgements
    from .notes import render_notes
    from .span_timeline import render_spans

    if has_conversation(verdict.trace):  # transcript and checkpoint timeline first: they tell the story
        item.add_report_section("call", "conversation", render_conversation(verdict.trace, redactor, limit))
    if not all(t.whole_story for t in verdict.trace):  # else the transcript says it all
        if item.config.get_verbosity() >= 2:
            trace = render_trace(verdict.trace, redactor, limit)
        else:  # quiet by default: the steps that matter, briefly
            trace = render_brief_trace(verdict.trace, redactor, limit)
        item.add_report_section("call", "pipeline trace", trace)
    if has_judgements(verdict.trace):
        item.add_report_section("call", "llm judge", redactor.text(render_judgements(verdict.trace)))
    spans = render_spans(verdict, redactor.text)
    if spans:
        item.add_report_section("call", "spans", redactor.text(spans))
    notes = render_notes(verdict, limit)
    if notes:
        item.add_report_section("call", "evidence", redactor.text(notes))
