"""What each step of a test did, as plain data for the results file (``steps``) and the viewer.

One entry a step that left evidence (and one for the checks' own, named ``check``): its name and
time, then its HTTP exchanges (request line, status, bodies), tool calls (name, arguments, result
or error), parsed streams, judge verdicts (score, threshold, reasoning, per-criterion figures,
constraints) and validator verdicts. Values are redacted first and only then shortened to the
run's trace limit, so a cut can never leave part of a secret in clear.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..evidence import (
    Evidence,
    HttpExchange,
    Judgement,
    ParsedStream,
    SpanTimeline,
    ToolCalls,
    ValidatorVerdict,
)
from ..json_types import JSONObject, JSONValue
from ..shown import shorten
from .records import step_name

if TYPE_CHECKING:
    from ..model import StepTrace, Verdict
    from ..redact import Redactor

_Text = Callable[[JSONValue], JSONValue]


def steps_data(verdict: Verdict, redactor: Redactor, limit: int) -> list[JSONObject]:
    """The steps of ``verdict`` that left evidence, in order, then the checks' evidence."""

    def text(value: JSONValue) -> JSONValue:
        if value is None:
            return None
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        return shorten(shown, limit, redactor.text, tell=True)

    entries: list[JSONObject] = []
    for t in verdict.trace:
        entry = _entry(t, t.evidence, text)
        if entry is not None:
            entries.append(entry)
    checks = _entry(None, verdict.evidence, text)
    if checks is not None:
        entries.append(checks)
    return entries


def _entry(t: StepTrace | None, evidence: Sequence[Evidence], text: _Text) -> JSONObject | None:
    http: list[JSONValue] = []
    tools: list[JSONValue] = []
    streams: list[JSONValue] = []
    judges: list[JSONValue] = []
    for record in evidence:
        if isinstance(record, HttpExchange):
            http.append(_exchange(record, text))
        elif isinstance(record, ToolCalls):
            tools += [
                {
                    "name": text(c.name),
                    "arguments": text(c.arguments),
                    "result": text(c.result),
                    "error": text(c.error),
                    "where": record.where,
                }
                for c in record.calls
            ]
        elif isinstance(record, ParsedStream):
            streams.append(text(record.text))
        elif isinstance(record, Judgement):
            judges.append(_judgement(record, text))
        elif isinstance(record, ValidatorVerdict):
            judges.append(
                {
                    "kind": "validator",
                    "assertion": text(record.assertion),
                    "score": _number(record.score),
                    "threshold": _number(record.threshold),
                    "passed": record.passed,
                    "reasoning": text(record.reason),
                    "model": record.model,
                }
            )
    spans = _spans(t, evidence, text)
    if not (http or tools or streams or judges or spans) and (t is None or t.error is None):
        return None
    entry: JSONObject = {"step": step_name(t)}
    if t is not None:
        entry["ms"] = round(t.duration_ms, 1)
        if t.error is not None:
            entry["error"] = text(t.error)
    if spans:
        entry["spans"] = spans
    for key, found in (("http", http), ("tools", tools), ("streams", streams), ("judges", judges)):
        if found:
            entry[key] = found
    return entry


def _spans(t: StepTrace | None, evidence: Sequence[Evidence], text: _Text) -> list[JSONValue]:
    """The spans a step read, as a timeline: name, status, start (ms after the first) and duration;
    from its :class:`SpanTimeline` records, else from a spans step's output (recognised by its shape:
    the report layer names no block)."""
    found = [s for r in evidence if isinstance(r, SpanTimeline) for s in r.spans]
    if not found and t is not None and isinstance(t.output, dict) and "traceId" in t.output:
        found = [s for s in t.output.get("spans") or [] if isinstance(s, dict)]
    starts = [s["startUnixNano"] for s in found if isinstance(s.get("startUnixNano"), int)]
    first = min(starts, default=0)
    return [
        {
            "name": text(s.get("name")),
            "status": s.get("status"),
            "startMs": round((s["startUnixNano"] - first) / 1e6, 3)
            if isinstance(s.get("startUnixNano"), int)
            else 0,
            "durationMs": s.get("durationMs"),
        }
        for s in found[:200]
    ]


def _exchange(x: HttpExchange, text: _Text) -> JSONObject:
    req, res = x.request, x.response
    return {
        "method": text(req.get("method") or "GET"),
        "url": text(req.get("url") or res.get("url")),
        "status": res.get("status") or None,
        "request": text(req.get("body")),
        "response": text(res.get("body")),
        "error": text(res.get("error")),
    }


def _judgement(j: Judgement, text: _Text) -> JSONObject:
    if not j.has_verdict:
        return {"kind": "judge", "error": text(j.error)}
    criteria = {str(k): v for k, v in _flat_numbers(j.details).items() if isinstance(v, (int, float))}
    return {
        "kind": "judge",
        "score": _number(j.score),
        "threshold": _number(j.threshold),
        "passed": j.passed,
        "reasoning": text(j.reasoning),
        "model": j.model,
        "criteria": criteria,
        "constraints": [
            {
                "constraint": text(c.get("constraint")),
                "met": bool(c.get("met")),
                "reason": text(c.get("reason")),
            }
            for c in j.constraints
        ],
    }


def _flat_numbers(details: Mapping[str, JSONValue], prefix: str = "") -> dict[str, JSONValue]:
    """Per-criterion figures: the numbers among a judge's details, nested names joined by dots."""
    found: dict[str, JSONValue] = {}
    for key, value in details.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            found.update(_flat_numbers(value, name + "."))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            found[name] = value
    return found


def _number(value: JSONValue) -> JSONValue:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
