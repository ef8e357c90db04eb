"""pytest-html extras: what a spec test did, for people reading the HTML report.

Registered by the plugin only when pytest-html is active and ``--html`` is given.
Per spec test, one HTML extra with: an overview (outcome, k/n runs, judge score vs threshold),
requests and responses (pretty JSON, trimmed), parsed streams, tool calls as a table, each LLM
judge's verdict with its per-criterion details, the conversation transcript and checkpoint timeline,
and a table of runs. Above the results: a summary table (pass rate per format, flaky tests, LLM
calls, cache hits, tokens). Every value passes through the redactor before it is escaped.

Every section renders evidence records (:mod:`pytest_semantictest.evidence`) by kind, whatever
block or check gave them. A new kind of content is one function ``(Render, item, verdict) -> str``
in :data:`SECTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from html import escape
from typing import Protocol

import pytest

from ..errors import shown_paths
from ..evidence import (
    HttpExchange,
    JudgedItems,
    Judgement,
    ParsedStream,
    ToolCalls,
    ValidatorVerdict,
    tool_call,
)
from ..json_types import JSONValue
from ..llm.verdict import samples_text
from ..model import Outcome, Suite, Verdict
from ..redact import Redactor
from ..spec_nodes import is_spec_item, verdict_of
from ..stats import interval_label, interval_text
from .conversation import conversation_data
from .html_count import RunCount, skip_reason
from .html_values import STYLE, Render
from .html_values import table as _table
from .judge import judged_items
from .junit import deciding_judgement, run_verdicts
from .notes import notes_html
from .records import in_verdict, step_name
from .span_timeline import spans_html
from .summary import OUTCOMES, Tally, run_rows


class _SpecFile(Protocol):
    @property
    def suite(self) -> Suite: ...


class ReportedItem(Protocol):
    """What the HTML report reads of a spec test (``nodes.SpecItem``): the file it is from."""

    @property
    def spec_file(self) -> _SpecFile: ...

    @property
    def config(self) -> pytest.Config: ...


NAME = "semantictest-html"
_ATTACHED = pytest.StashKey[bool]()
OWN_SECTIONS = frozenset({"conversation", "pipeline trace", "llm judge", "evidence", "spans"})
"""Report sections the extras show better: left out of the HTML log (the console keeps them)."""
REASONS = 5
"""How many failed checks a test's overview names."""


# --------------------------------------------------------------------------- sections


def overview(r: Render, item: ReportedItem, verdict: Verdict) -> str:
    """Outcome, k/n runs, the deciding judge's score, and why the test did not pass."""
    runs = run_verdicts(verdict)
    passed = sum(1 for _, v in runs if v.passed)
    parts = [
        f'<span class="st-outcome st-{verdict.outcome.value}">{verdict.outcome.value}</span>',
        f"format {escape(item.spec_file.suite.format)}",
    ]
    if verdict.outcome is Outcome.SKIPPED:
        parts.append(f"not evaluated: {r.cell(verdict.skip_reason or '')}")
    else:
        anytime = verdict.anytime
        shown = f"{interval_label(anytime)} {interval_text(passed, len(runs), anytime)}"
        interval = f" ({shown})" if len(runs) > 1 else ""
        parts.append(f'<span class="st-kn">{passed}/{len(runs)} runs passed{interval}</span>')
    judged = deciding_judgement(verdict)
    if judged is not None:
        parts.append(f"judge score {r.text(judged.score)} vs threshold {r.text(judged.threshold)}")
    if verdict.error:
        # redacted whole before its first line is taken: a secret with a newline has no masked prefix
        error = shown_paths(r.redactor.text(verdict.error), item.config.rootpath)  # as the log names files
        parts.append(f"error: {r.cell(error.splitlines()[0])}")
    why = "".join(f"<li>{r.cell(reason)}</li>" for reason in _reasons(verdict))
    return (
        '<div class="st-overview">'
        + " · ".join(parts)
        + "</div>"
        + (f'<ul class="st-why">{why}</ul>' if why else "")
    )


def _reasons(verdict: Verdict) -> list[str]:
    """The checks that did not hold (for a repeated test: each failed run's first one)."""
    if verdict.outcome is not Outcome.FAILED:
        return []
    found = [f.headline() for f in verdict.failures]
    if not found:
        found = [
            f"{label}: {run.failures[0].check}: {run.failures[0].message}"
            if run.failures
            else f"{label}: {run.error or run.outcome.value}"
            for label, run in run_verdicts(verdict)
            if run.outcome is not Outcome.PASSED
        ]
    return found[:REASONS] + ([f"... and {len(found) - REASONS} more"] if len(found) > REASONS else [])


def exchanges(r: Render, item: ReportedItem, verdict: Verdict) -> str:
    """Each HTTP request the pipeline sent, and the response: headers, then the body (JSON
    pretty-printed, an SSE stream as its frames)."""
    parts = []
    for t, x in in_verdict(verdict, HttpExchange):
        req, res = x.request, x.response
        status = res.get("status") if res.get("status") else "no response"
        request = "".join(
            _part(r, label, req.get(key), req.get("headers"))
            for label, key in (("headers", "headers"), ("body", "body"))
        )
        response = "".join(
            _part(r, label, res.get(key), res.get("headers"))
            for label, key in (("headers", "headers"), ("body", "body"), ("error", "error"))
        )
        took = f" ({t.duration_ms:.0f} ms)" if t is not None else ""
        parts.append(
            f'<div class="st-exchange"><h4>{r.text(step_name(t))}: {r.text(req.get("method") or "GET")} '
            f"{r.text(req.get('url') or res.get('url'))} &rarr; {r.text(status)}{took}</h4>"
            f'<div class="st-request"><div class="st-label">request</div>{request or "<p>no headers, no body</p>"}</div>'
            f'<div class="st-response"><div class="st-label">response {r.text(status)}</div>{response}</div></div>'
        )
    return "<h4>Requests and responses</h4>" + "".join(parts) if parts else ""


def _part(r: Render, label: str, value: JSONValue, headers: JSONValue) -> str:
    if value in (None, "", {}):
        return ""
    shown = r.body(value, headers) if label == "body" else r.pre(value)
    return f'<div class="st-{label}">{escape(label)}{shown}</div>'


def streams(r: Render, item: ReportedItem, verdict: Verdict) -> str:
    """What each stream parser made of its stream."""
    parts = []
    for t, p in in_verdict(verdict, ParsedStream):
        facts = ", ".join(f"{k} {r.text(v)}" for k, v in p.metadata.items() if v not in (None, ""))
        parts.append(
            f'<div class="st-stream"><h4>{r.text(step_name(t))}: {facts}</h4>text{r.pre(p.text)}</div>'
        )
    return "<h4>Parsed streams</h4>" + "".join(parts) if parts else ""


def tool_calls(r: Render, item: ReportedItem, verdict: Verdict) -> str:
    rows = []
    found = [
        (f"{step_name(t)} {calls.where}" if calls.where else step_name(t), call)
        for t, calls in in_verdict(verdict, ToolCalls)
        for call in calls.calls
    ]
    for n, (where, call) in enumerate(found, 1):
        outcome = f"error: {call.error}" if call.error else call.result
        rows.append(
            [
                str(n),
                r.cell(where),
                f"<code>{r.cell(call.name)}</code>",
                r.pre(call.arguments) if call.arguments is not None else "",
                r.cell(outcome) if outcome is not None else "",
            ]
        )
    return (
        "<h4>Tool calls</h4>" + _table("st-tools", ["#", "step", "tool", "arguments", "result"], rows)
        if rows
        else ""
    )


def judges(r: Render, item: ReportedItem, verdict: Verdict) -> str:
    """Each LLM judge: score against threshold, reasoning, per-criterion scores, constraints."""
    parts = [_judgement(r, step_name(t), j) for t, j in in_verdict(verdict, Judgement)]
    parts += [_judged_items(r, j) for j in judged_items(verdict)]
    parts += [_validation(r, v) for _, v in in_verdict(verdict, ValidatorVerdict)]
    return "<h4>LLM judge</h4>" + "".join(parts) if parts else ""


def _judgement(r: Render, name: str, j: Judgement) -> str:
    if not j.has_verdict:
        return f'<div class="st-judge"><h4>{r.text(name)}</h4>no verdict: {r.text(j.error)}</div>'
    state = "passed" if j.passed else "failed"
    head = (
        f'<h4>{r.text(name)}: <span class="st-score">score {r.text(j.score)}</span> vs '
        f'<span class="st-threshold">threshold {r.text(j.threshold)}</span> '
        f'<span class="st-{state}">{state}</span>'
        + (f" (model {r.text(j.model)})" if j.model else "")
        + "</h4>"
    )
    body = f'<p class="st-reasoning">{r.text(j.reasoning)}</p>'
    if j.samples:
        body += f'<p class="st-samples{" st-unstable" if j.unstable else ""}">samples: {r.text(samples_text(j.samples))}</p>'
    if j.details:
        body += _table(
            "st-criteria", ["criterion", "score"], [[r.cell(k), r.cell(v)] for k, v in j.details.items()]
        )
    if j.constraints:
        body += _table(
            "st-constraints",
            ["constraint", "met", "reason"],
            [
                [
                    r.cell(c.get("constraint", "")),
                    "yes" if c.get("met") else "<b>no</b>",
                    r.cell(c.get("reason") or ""),
                ]
                for c in j.constraints
            ],
        )
    return f'<div class="st-judge">{head}{body}</div>'


def _judged_items(r: Render, judged: JudgedItems) -> str:
    """A judged check's verdict per item (compliance bullets): held or not, and why."""
    rows = [
        [r.cell(i.text), "yes" if i.passed else "<b>no</b>", r.cell(i.reason or "")] for i in judged.items
    ]
    held = sum(1 for i in judged.items if i.passed)
    head = (
        f"<h4>{r.text(judged.check)}: {held}/{len(rows)} held"
        + (f" (model {r.text(judged.model)})" if judged.model else "")
        + "</h4>"
    )
    return f'<div class="st-judge">{head}{_table("st-judged", ["assertion", "held", "reason"], rows)}</div>'


def _validation(r: Render, v: ValidatorVerdict) -> str:
    """A validator agent's verdict on one reply: score against threshold, reason, suggestions."""
    state = "passed" if v.passed else "failed"
    where = f"turn {v.turn if v.turn is not None else '?'}" + (
        f", checkpoint {v.checkpoint}" if v.checkpoint else ""
    )
    threshold = (
        f' vs <span class="st-threshold">threshold {r.text(v.threshold)}</span>'
        if v.threshold is not None
        else ""
    )
    head = (
        f'<h4>{r.text(where)}: {r.text(v.assertion)}: <span class="st-score">score '
        f'{r.text(v.score)}</span>{threshold} <span class="st-{state}">{state}</span>'
        + (f" (model {r.text(v.model)})" if v.model else "")
        + "</h4>"
    )
    body = f'<p class="st-reasoning">{r.text(v.reason)}</p>'
    if v.suggestions:
        body += (
            '<ul class="st-suggestions">' + "".join(f"<li>{r.text(s)}</li>" for s in v.suggestions) + "</ul>"
        )
    return f'<div class="st-judge st-validator">{head}{body}</div>'


def conversation(r: Render, item: ReportedItem, verdict: Verdict) -> str:
    """The transcript turn by turn (tool calls are in the tool table) and the checkpoint timeline."""
    turns, checkpoints = conversation_data(verdict.trace)
    html = ""
    if turns:
        rows = []
        for turn in turns:
            said = (
                r.cell(turn.get("output") or "")
                if not turn.get("error")
                else f"<b>error</b>: {r.cell(turn['error'])}"
            )
            calls = ", ".join(r.cell(tool_call(c).name) for c in turn.get("tool_calls") or [])
            rows.append(
                [
                    r.cell(turn.get("turn", "")),
                    r.cell(turn.get("input") or ""),
                    said,
                    calls,
                    r.cell(", ".join(turn.get("checkpoints") or [])),
                ]
            )
        html += "<h4>Conversation</h4>" + _table(
            "st-transcript", ["turn", "user", "agent", "tools", "reached"], rows
        )
    if checkpoints:
        rows = [
            [
                r.cell(c.get("id")),
                "yes" if c.get("required", True) else "no",
                r.cell(f"turn {c['turn']}") if c.get("reached") else "<b>not reached</b>",
                r.cell(c.get("description") or ""),
            ]
            for c in checkpoints
        ]
        html += "<h4>Checkpoints</h4>" + _table(
            "st-checkpoints", ["checkpoint", "required", "reached", "description"], rows
        )
    return html


def runs(r: Render, item: ReportedItem, verdict: Verdict) -> str:
    rows = run_rows(verdict, r.redactor)
    if len(rows) < 2:
        return ""
    body = [
        [escape(label), f'<span class="st-{outcome}">{escape(outcome)}</span>', f"{ms:g} ms", escape(why)]
        for label, outcome, ms, why in rows
    ]
    return "<h4>Runs</h4>" + _table("st-runs", ["run", "outcome", "duration", "why"], body)


SECTIONS: list[Callable[[Render, ReportedItem, Verdict], str]] = [
    overview,
    runs,
    judges,
    conversation,
    tool_calls,
    spans_html,
    streams,
    exchanges,
    notes_html,
]
"""What an item's extra shows, in order; each returns HTML ("" when it has nothing to show)."""


def render_item(item: ReportedItem, verdict: Verdict, redactor: Redactor, limit: int) -> str:
    r = Render(redactor, limit)
    body = "".join(section(r, item, verdict) for section in SECTIONS)
    return redactor.text(f'<div class="st-extra">{body}</div>')


def summary_table(tally: Tally, usage: Mapping[str, int]) -> str:
    """Pass rate per format, flaky tests, LLM use."""
    rows = []
    for fmt, counts in sorted(tally.by_format().items()):
        total = sum(counts.values())
        ran = total - counts["skipped"]
        rate = f"{100 * counts['passed'] / ran:.0f}%" if ran else "-"
        flaky = sum(1 for e in tally.flaky() if e.format == fmt)
        rows.append([escape(fmt), str(total), *(str(counts[o]) for o in OUTCOMES), rate, str(flaky)])
    html = (
        STYLE
        + "<h3>semantictest</h3>"
        + _table("st-summary st-formats", ["format", "tests", *OUTCOMES, "pass rate", "flaky"], rows)
    )
    html += _table(
        "st-summary st-llm",
        ["LLM calls", "cache hits", "tokens"],
        [[str(usage.get(k, 0)) for k in ("calls", "cache_hits", "tokens")]],
    )
    return html


def _json(value: object) -> str | None:
    import json

    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=repr)
    except (TypeError, ValueError):
        return None


class HtmlPlugin(RunCount):
    """Registered by the plugin with what it reads of the session: the summary's ``tally``,
    ``usage()`` (LLM usage, with an xdist controller's workers'), ``redactor()`` and ``limit()``
    (how many characters of a value to show), the last three read when a report is made."""

    def __init__(
        self,
        config: pytest.Config,
        tally: Tally,
        usage: Callable[[], Mapping[str, int]],
        redactor: Callable[[], Redactor],
        limit: Callable[[], int],
    ) -> None:
        self.config = config
        self.tally = tally
        self.usage = usage
        self.redactor = redactor
        self.limit = limit

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        verdict = verdict_of(item)
        deciding = call.when == "call" or (call.when == "setup" and not report.passed)
        if verdict is not None and deciding and is_spec_item(item) and not item.stash.get(_ATTACHED, False):
            from pytest_html import extras

            item.stash[_ATTACHED] = True
            redactor, limit = self.redactor(), self.limit()
            html = render_item(item, verdict, redactor, limit)
            setattr(
                report,
                "extras",
                [
                    *getattr(report, "extras", []),
                    extras.html(html),  # pytest-html's attribute
                    *self._attachments(verdict, redactor, limit),
                ],
            )
        return report

    def _attachments(self, verdict: Verdict, redactor: Redactor, limit: int) -> list[dict[str, str]]:
        """A failed check's value too long to show, as a file next to the report (not with
        ``--self-contained-html``: the page would carry it all again)."""
        if self.config.getoption("self_contained_html", False):
            return []
        from pytest_html import extras

        found = []
        for f in verdict.failures:
            value = f.actual if isinstance(f.actual, str) else _json(f.actual)
            if value is not None and len(value) > limit:
                found.append(
                    extras.text(
                        redactor.text(value), name=f"actual value of {f.check} ({len(value):,} characters)"
                    )
                )
        return found

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        """A spec test's log: the failure text or the skip reason (not pytest's raw tuple), and the
        captured output, without the sections the extras already show."""
        if "format" not in dict(getattr(report, "user_properties", ())):
            return
        log = (
            [escape(skip_reason(report) if report.skipped else report.longreprtext) + "\n"]
            if report.longrepr
            else []
        )
        for header, content in report.sections:
            if " ".join(header.split()[1:-1]) not in OWN_SECTIONS:  # "Captured <name> <when>"
                log.append(f"{' ' + escape(header) + ' ':-^80}\n{escape(content)}")
        data[:] = log or ["No log output captured."]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        if self.tally.tests:
            prefix.append(summary_table(self.tally, self.usage()))
