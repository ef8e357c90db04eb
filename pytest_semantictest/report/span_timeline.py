""":class:`~pytest_semantictest.evidence.SpanTimeline` records (the spans an agent exported for a test)
in the console and in pytest-html: a failing test's spans as a list (the console's "spans" section)
and as a small timeline (an HTML extra: each span a bar on one time axis, errors in red, nested
under its parent), whatever step read them (``Spans``, a highbar or Yao turn, a compliance case).

Every value passes through the session's redactor (the console's caller redacts the section; the
HTML goes through :class:`~.html_values.Render`), and then is shortened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..evidence import SpanTimeline
from ..json_types import JSONObject, JSONValue
from ..model import Outcome, StepTrace, Verdict
from ..shown import Mask, shorten
from .html_values import Render
from .records import in_verdict, step_name

MAX_SPANS = 60
"""Spans shown per record (the rest counted)."""
_FACTS = (
    "gen_ai.tool.name",
    "tool.name",
    "gen_ai.tool.call.arguments",
    "input.value",
    "gen_ai.request.model",
    "gen_ai.response.model",
)
"""The attributes a line names after the span's name (what a reader looks for first)."""

CSS = (
    "<style>.st-spans{margin:2px 0 6px;font-size:12px}.st-spans .st-row{display:flex;align-items:center;"
    "height:16px}.st-spans .st-name{width:38%;overflow:hidden;white-space:nowrap;text-overflow:ellipsis}"
    ".st-spans .st-axis{position:relative;flex:1;height:10px;background:#f6f8fa}.st-spans .st-bar{position:"
    "absolute;top:0;height:10px;min-width:2px;background:#4c78a8}.st-spans .st-bar.st-err{background:#d1242f}"
    ".st-spans .st-ms{width:70px;text-align:right;color:#57606a}</style>"
)


def _laid_out(spans: Sequence[JSONObject]) -> list[tuple[JSONObject, int, float, float]]:
    """``(span, depth, start ms after the first span, duration ms)``, parents before their children,
    in start order."""
    starts = [s.get("startUnixNano") for s in spans]
    first = min((v for v in starts if isinstance(v, int)), default=0)
    ids = {s.get("spanId") for s in spans}
    children: dict[object, list[JSONObject]] = {}
    for s in sorted(spans, key=lambda s: _int(s.get("startUnixNano"))):
        parent = s.get("parentId") if s.get("parentId") in ids else None
        children.setdefault(parent, []).append(s)
    out: list[tuple[JSONObject, int, float, float]] = []

    def walk(parent: object, depth: int) -> None:
        for s in children.get(parent, []):
            start = (_int(s.get("startUnixNano")) - first) / 1e6 if s.get("startUnixNano") else 0.0
            out.append((s, depth, start, _float(s.get("durationMs"))))
            if s.get("spanId") != parent and depth < 30:
                walk(s.get("spanId"), depth + 1)

    walk(None, 0)
    return out


def _int(value: JSONValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: JSONValue) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _facts(span: JSONObject, limit: int, mask: Mask | None) -> str:
    attributes = span.get("attributes")
    found = attributes if isinstance(attributes, Mapping) else {}
    facts = [f"{k}={shorten(str(found[k]), limit, mask)}" for k in _FACTS if k in found]
    if span.get("status") == "error":
        facts.append(f"error: {shorten(str(span.get('statusMessage') or 'error status'), limit, mask)}")
    return "  ".join(facts)


def _where(t: StepTrace | None) -> str:
    return step_name(t) if t is not None else "check"


def _wanted(verdict: Verdict) -> bool:
    return verdict.outcome is not Outcome.PASSED


def render_spans(verdict: Verdict, mask: Mask | None, limit: int = 200) -> str:
    """The console's "spans" section of a test that did not pass ("" when it read none); one line a
    span: start and duration in ms, status, name (indented under its parent), its key attributes.
    Values are masked with ``mask`` before they are shortened (the caller redacts the whole again)."""
    if not _wanted(verdict):
        return ""
    lines: list[str] = []
    for t, record in in_verdict(verdict, SpanTimeline):
        lines.append(f"{_where(t)}: {len(record.spans)} span(s) of trace {record.trace or '?'}")
        if record.note:
            lines.append(f"  {record.note}")
        laid = _laid_out(record.spans)
        for span, depth, start, duration in laid[:MAX_SPANS]:
            status = str(span.get("status") or "unset")
            name = "  " * depth + shorten(str(span.get("name")), 80, mask)
            facts = _facts(span, limit, mask)
            lines.append(
                f"  +{start:9.1f} ms {duration:9.1f} ms  {status:<5}  {name}"
                + (f"  {facts}" if facts else "")
            )
        if len(laid) > MAX_SPANS:
            lines.append(f"  ... {len(laid) - MAX_SPANS} more span(s) (the results file keeps them)")
    return "\n".join(lines)


def spans_html(r: Render, item: object, verdict: Verdict) -> str:
    """A test's spans as a small timeline (an extra of a test that did not pass)."""
    if not _wanted(verdict):
        return ""
    parts = []
    for t, record in in_verdict(verdict, SpanTimeline):
        laid = _laid_out(record.spans)[:MAX_SPANS]
        end = max((start + duration for _, _, start, duration in laid), default=0.0) or 1e-3
        rows = []
        for span, depth, start, duration in laid:
            error = span.get("status") == "error"
            tip = f"{span.get('name')}: {duration:g} ms from {start:g} ms, {span.get('status')}"
            facts = _facts(span, 120, r.redactor.text)
            rows.append(
                f'<div class="st-row" title="{r.cell(tip + ("; " + facts if facts else ""))}">'
                f'<span class="st-name" style="padding-left:{depth * 10}px">{r.cell(span.get("name"))}</span>'
                f'<span class="st-axis"><span class="st-bar{" st-err" if error else ""}" '
                f'style="left:{100 * start / end:.2f}%;width:{100 * duration / end:.2f}%"></span></span>'
                f'<span class="st-ms">{duration:.1f} ms</span></div>'
            )
        more = len(record.spans) - len(laid)
        title = f"{_where(t)}: {len(record.spans)} span(s) of trace {record.trace or '?'}"
        note = f"<p>{r.text(record.note)}</p>" if record.note else ""
        tail = f"<p>{more} more span(s)</p>" if more > 0 else ""
        parts.append(
            f'<h4>Spans</h4><p>{r.text(title)}</p>{note}<div class="st-spans">{"".join(rows)}</div>{tail}'
        )
    return CSS + "".join(parts) if parts else ""
