"""pytest-html extras: what a spec test did, for people reading the HTML report.

Registered only when pytest-html is active and ``--html`` is given (see :func:`.summary.install`).
Per spec test, one HTML extra with: an overview (outcome, k/n runs, judge score vs threshold),
requests and responses (pretty JSON, trimmed), parsed streams, tool calls as a table, each LLM
judge's verdict with its per-criterion details, the conversation transcript and checkpoint timeline,
and a table of runs. Above the results: a summary table (pass rate per format, flaky tests, LLM
calls, cache hits, tokens). Every value passes through the redactor before it is escaped.

A new kind of content is one function ``(Render, item, verdict) -> str`` in :data:`SECTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

import pytest

from ..model import Outcome, StepTrace, Verdict
from .conversation import conversation_data
from .html_values import STYLE, Render
from .html_values import table as _table
from .judge import JUDGE_BLOCKS, is_judgement
from .junit import deciding_judgement, run_verdicts
from .redact import Redactor
from .summary import OUTCOMES, Tally, run_rows, spec_item, summary_plugin

_ATTACHED = pytest.StashKey[bool]()
OWN_SECTIONS = frozenset({"conversation", "pipeline trace", "llm judge"})
"""Report sections the extras show better: left out of the HTML log (the console keeps them)."""
REASONS = 5
"""How many failed checks a test's overview names."""


def _step_name(t: StepTrace) -> str:
    return t.step.id if t.step.id == t.step.block else f"{t.step.id} ({t.step.block})"


# --------------------------------------------------------------------------- sections


def overview(r: Render, item: Any, verdict: Verdict) -> str:
    """Outcome, k/n runs, the deciding judge's score, and why the test did not pass."""
    runs = run_verdicts(verdict)
    passed = sum(1 for _, v in runs if v.passed)
    parts = [f'<span class="st-outcome st-{verdict.outcome.value}">{verdict.outcome.value}</span>',
             f"format {escape(item.spec_file.suite.format)}"]
    if verdict.outcome is Outcome.SKIPPED:
        parts.append(f"not evaluated: {r.cell(verdict.skip_reason or '')}")
    else:
        parts.append(f'<span class="st-kn">{passed}/{len(runs)} runs passed</span>')
    judged = deciding_judgement(verdict)
    if judged is not None:
        parts.append(f"judge score {r.text(judged.get('score'))} vs threshold {r.text(judged.get('threshold'))}")
    if verdict.error:
        parts.append(f"error: {r.cell(verdict.error.splitlines()[0])}")
    why = "".join(f"<li>{r.cell(reason)}</li>" for reason in _reasons(verdict))
    return ('<div class="st-overview">' + " · ".join(parts) + "</div>"
            + (f'<ul class="st-why">{why}</ul>' if why else ""))


def _reasons(verdict: Verdict) -> list[str]:
    """The checks that did not hold (for a repeated test: each failed run's first one)."""
    if verdict.outcome is not Outcome.FAILED:
        return []
    found = [f"{f.check}{f' (line {f.line})' if f.line else ''}: {f.message}" for f in verdict.failures]
    if not found:
        found = [f"{label}: {run.failures[0].check}: {run.failures[0].message}" if run.failures
                 else f"{label}: {run.error or run.outcome.value}"
                 for label, run in run_verdicts(verdict) if run.outcome is not Outcome.PASSED]
    return found[:REASONS] + ([f"... and {len(found) - REASONS} more"] if len(found) > REASONS else [])


def _request(t: StepTrace) -> Mapping[str, Any] | None:
    """What an HTTP step sent: its resolved input (HttpRequest) or the ``request`` it reports."""
    out = t.output
    if not (isinstance(out, Mapping) and "status" in out and ("body" in out or "error" in out)):
        return None
    if isinstance(t.input, Mapping) and "url" in t.input:
        return t.input
    return out["request"] if isinstance(out.get("request"), Mapping) else None


def exchanges(r: Render, item: Any, verdict: Verdict) -> str:
    """Each HTTP request the pipeline sent, and the response: headers, then the body (JSON
    pretty-printed, an SSE stream as its frames)."""
    parts = []
    for t in verdict.trace:
        req = _request(t)
        if req is None:
            continue
        res = t.output
        status = res.get("status") if res.get("status") else "no response"
        request = "".join(_part(r, label, req.get(key), req.get("headers"))
                          for label, key in (("headers", "headers"), ("body", "body")))
        response = "".join(_part(r, label, res.get(key), res.get("headers"))
                           for label, key in (("headers", "headers"), ("body", "body"), ("error", "error")))
        parts.append(
            f'<div class="st-exchange"><h4>{r.text(_step_name(t))}: {r.text(req.get("method") or "GET")} '
            f'{r.text(req.get("url") or res.get("url"))} &rarr; {r.text(status)} ({t.duration_ms:.0f} ms)</h4>'
            f'<div class="st-request"><div class="st-label">request</div>{request or "<p>no headers, no body</p>"}</div>'
            f'<div class="st-response"><div class="st-label">response {r.text(status)}</div>{response}</div></div>'
        )
    return "<h4>Requests and responses</h4>" + "".join(parts) if parts else ""


def _part(r: Render, label: str, value: Any, headers: Any) -> str:
    if value in (None, "", {}):
        return ""
    shown = r.body(value, headers) if label == "body" else r.pre(value)
    return f'<div class="st-{label}">{escape(label)}{shown}</div>'


def streams(r: Render, item: Any, verdict: Verdict) -> str:
    """What each StreamParser made of its stream."""
    parts = []
    for t in verdict.trace:
        out = t.output
        if t.step.block != "StreamParser" or not isinstance(out, Mapping):
            continue
        meta = out.get("metadata") or {}
        facts = ", ".join(f"{k} {r.text(v)}" for k, v in meta.items() if v not in (None, ""))
        parts.append(f'<div class="st-stream"><h4>{r.text(_step_name(t))}: {facts}</h4>text{r.pre(out.get("text", ""))}</div>')
    return "<h4>Parsed streams</h4>" + "".join(parts) if parts else ""


def _call_fields(call: Any) -> tuple[Any, Any, Any]:
    """(name, arguments, result or error) of a tool call in any shape the blocks write."""
    if not isinstance(call, Mapping):
        return call, None, None
    raw_function = call.get("function")
    function: Mapping[str, Any] = raw_function if isinstance(raw_function, Mapping) else {}
    name = call.get("name") or call.get("fn") or call.get("toolName") or function.get("name")
    args = next((call[k] for k in ("args", "arguments", "input") if k in call), function.get("arguments"))
    outcome = f"error: {call['error']}" if call.get("error") else call.get("result")
    return name, args, outcome


def _tool_calls(trace: Sequence[StepTrace]) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for t in trace:
        out = t.output
        if not isinstance(out, Mapping):
            continue
        where = _step_name(t)
        for key in ("toolCalls", "calls", "actualTools"):
            if isinstance(out.get(key), list):
                found += [(where, c) for c in out[key]]
        for turn in out.get("turns") or []:
            if isinstance(turn, Mapping):
                found += [(f"{where} turn {turn.get('turn', '?')}", c) for c in turn.get("tool_calls") or []]
    return found


def tool_calls(r: Render, item: Any, verdict: Verdict) -> str:
    rows = []
    for n, (where, call) in enumerate(_tool_calls(verdict.trace), 1):
        name, args, outcome = _call_fields(call)
        rows.append([str(n), r.cell(where), f"<code>{r.cell(name)}</code>", r.pre(args) if args is not None else "",
                     r.cell(outcome) if outcome is not None else ""])
    return "<h4>Tool calls</h4>" + _table("st-tools", ["#", "step", "tool", "arguments", "result"], rows) if rows else ""


def judges(r: Render, item: Any, verdict: Verdict) -> str:
    """Each LLM judge: score against threshold, reasoning, per-criterion scores, constraints."""
    parts = []
    for t in verdict.trace:
        if t.step.block not in JUDGE_BLOCKS:
            continue
        if not is_judgement(t.output):
            parts.append(f'<div class="st-judge"><h4>{r.text(_step_name(t))}</h4>no verdict: '
                         f"{r.text(t.error or 'not evaluated')}</div>")
            continue
        out = t.output
        score, threshold = out.get("score"), out.get("threshold")
        state = "passed" if out.get("passed") else "failed"
        head = (f'<h4>{r.text(_step_name(t))}: <span class="st-score">score {r.text(score)}</span> vs '
                f'<span class="st-threshold">threshold {r.text(threshold)}</span> '
                f'<span class="st-{state}">{state}</span>'
                + (f" (model {r.text(out['model'])})" if out.get("model") else "") + "</h4>")
        body = f'<p class="st-reasoning">{r.text(out.get("reasoning") or "")}</p>'
        details = out.get("details")
        if isinstance(details, Mapping) and details:
            body += _table("st-criteria", ["criterion", "score"], [[r.cell(k), r.cell(v)] for k, v in details.items()])
        constraints = [c for c in out.get("constraints") or [] if isinstance(c, Mapping)]
        if constraints:
            body += _table("st-constraints", ["constraint", "met", "reason"],
                           [[r.cell(c.get("constraint", "")), "yes" if c.get("met") else "<b>no</b>", r.cell(c.get("reason") or "")]
                            for c in constraints])
        parts.append(f'<div class="st-judge">{head}{body}</div>')
    parts += [_judged_items(r, j) for j in verdict.judgements]
    parts += [_validation(r, turn, a) for turn in conversation_data(verdict.trace)[0]
              for a in turn.get("assertions") or [] if isinstance(a.get("validator"), Mapping)]
    return "<h4>LLM judge</h4>" + "".join(parts) if parts else ""


def _judged_items(r: Render, judgement: Mapping[str, Any]) -> str:
    """A judged check's verdict per item (compliance bullets): held or not, and why."""
    rows = [[r.cell(i.get("text")), "yes" if i.get("passed") else "<b>no</b>", r.cell(i.get("reason") or "")]
            for i in judgement.get("items") or []]
    held = sum(1 for i in judgement.get("items") or [] if i.get("passed"))
    head = (f'<h4>{r.text(judgement.get("check"))}: {held}/{len(rows)} held'
            + (f" (model {r.text(judgement['model'])})" if judgement.get("model") else "") + "</h4>")
    return f'<div class="st-judge">{head}{_table("st-judged", ["assertion", "held", "reason"], rows)}</div>'


def _validation(r: Render, turn: Mapping[str, Any], assertion: Mapping[str, Any]) -> str:
    """A validator agent's verdict on one reply: score against threshold, reason, suggestions."""
    v = assertion["validator"]
    state = "passed" if v.get("passed") else "failed"
    where = f"turn {turn.get('turn', '?')}" + (f", checkpoint {assertion['checkpoint']}" if assertion.get("checkpoint") else "")
    threshold = f' vs <span class="st-threshold">threshold {r.text(v["threshold"])}</span>' if v.get("threshold") is not None else ""
    head = (f'<h4>{r.text(where)}: {r.text(assertion.get("assertion"))}: <span class="st-score">score '
            f'{r.text(v.get("score"))}</span>{threshold} <span class="st-{state}">{state}</span>'
            + (f" (model {r.text(v['model'])})" if v.get("model") else "") + "</h4>")
    body = f'<p class="st-reasoning">{r.text(v.get("reason") or "")}</p>'
    if v.get("suggestions"):
        body += '<ul class="st-suggestions">' + "".join(f"<li>{r.text(s)}</li>" for s in v["suggestions"]) + "</ul>"
    return f'<div class="st-judge st-validator">{head}{body}</div>'


def conversation(r: Render, item: Any, verdict: Verdict) -> str:
    """The transcript turn by turn (tool calls are in the tool table) and the checkpoint timeline."""
    turns, checkpoints = conversation_data(verdict.trace)
    html = ""
    if turns:
        rows = []
        for turn in turns:
            said = r.cell(turn.get("output") or "") if not turn.get("error") else f"<b>error</b>: {r.cell(turn['error'])}"
            calls = ", ".join(r.cell(_call_fields(c)[0]) for c in turn.get("tool_calls") or [])
            rows.append([r.cell(turn.get("turn", "")), r.cell(turn.get("input") or ""), said, calls,
                         r.cell(", ".join(turn.get("checkpoints") or []))])
        html += "<h4>Conversation</h4>" + _table("st-transcript", ["turn", "user", "agent", "tools", "reached"], rows)
    if checkpoints:
        rows = [[r.cell(c.get("id")), "yes" if c.get("required", True) else "no",
                 r.cell(f"turn {c['turn']}") if c.get("reached") else "<b>not reached</b>",
                 r.cell(c.get("description") or "")] for c in checkpoints]
        html += "<h4>Checkpoints</h4>" + _table("st-checkpoints", ["checkpoint", "required", "reached", "description"], rows)
    return html


def runs(r: Render, item: Any, verdict: Verdict) -> str:
    rows = run_rows(verdict, r.redactor)
    if len(rows) < 2:
        return ""
    body = [[escape(label), f'<span class="st-{outcome}">{escape(outcome)}</span>', f"{ms:g} ms", escape(why)]
            for label, outcome, ms, why in rows]
    return "<h4>Runs</h4>" + _table("st-runs", ["run", "outcome", "duration", "why"], body)


SECTIONS: list[Callable[[Render, Any, Verdict], str]] = [
    overview, runs, judges, conversation, tool_calls, streams, exchanges,
]
"""What an item's extra shows, in order; each returns HTML ("" when it has nothing to show)."""


def render_item(item: Any, verdict: Verdict, redactor: Redactor, limit: int) -> str:
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
    html = STYLE + "<h3>semantictest</h3>" + _table(
        "st-summary st-formats", ["format", "tests", *OUTCOMES, "pass rate", "flaky"], rows)
    html += _table("st-summary st-llm", ["LLM calls", "cache hits", "tokens"],
                   [[str(usage.get(k, 0)) for k in ("calls", "cache_hits", "tokens")]])
    return html


def _json(value: Any) -> str | None:
    import json

    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=repr)
    except (TypeError, ValueError):
        return None


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return report.longreprtext


class HtmlPlugin:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        verdict = getattr(item, "verdict", None)
        deciding = call.when == "call" or (call.when == "setup" and not report.passed)
        if verdict is not None and deciding and spec_item(item) and not item.stash.get(_ATTACHED, False):
            from pytest_html import extras

            from ..plugin import runtime

            item.stash[_ATTACHED] = True
            state = runtime(self.config)
            limit = state.context.settings.trace_value_chars
            html = render_item(item, verdict, state.redactor, limit)
            report.extras = [*getattr(report, "extras", []), extras.html(html), *self._attachments(verdict, state, limit)]
        return report

    def _attachments(self, verdict: Verdict, state: Any, limit: int) -> list[Any]:
        """A failed check's value too long to show, as a file next to the report (not with
        ``--self-contained-html``: the page would carry it all again)."""
        if self.config.getoption("self_contained_html", False):
            return []
        from pytest_html import extras

        found = []
        for f in verdict.failures:
            value = f.actual if isinstance(f.actual, str) else _json(f.actual)
            if value is not None and len(value) > limit:
                found.append(extras.text(state.redactor.text(value),
                                         name=f"actual value of {f.check} ({len(value):,} characters)"))
        return found

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        """A spec test's log: the failure text or the skip reason (not pytest's raw tuple), and the
        captured output, without the sections the extras already show."""
        if "format" not in dict(getattr(report, "user_properties", ())):
            return
        log = [escape(_skip_reason(report) if report.skipped else report.longreprtext) + "\n"] \
            if report.longrepr else []
        for header, content in report.sections:
            if " ".join(header.split()[1:-1]) not in OWN_SECTIONS:  # "Captured <name> <when>"
                log.append(f"{' ' + escape(header) + ' ':-^80}\n{escape(content)}")
        data[:] = log or ["No log output captured."]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str],
                                    session: pytest.Session) -> None:
        plugin = summary_plugin(self.config)
        if plugin is None or not plugin.tally.tests:
            return
        from ..plugin import llm_usage

        prefix.append(summary_table(plugin.tally, llm_usage(self.config)))
