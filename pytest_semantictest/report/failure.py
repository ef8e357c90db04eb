"""Failure output that reads like pytest's own: path, operator, expected, actual, diff."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..engine.databus import MISSING, split_path
from ..model import Failure, StepTrace, Verdict
from .judge import judge_lines, judge_outputs
from .redact import Redactor

Differ = Callable[[Any, Any], list[str] | None]


def dump(value: Any, limit: int = 2000) -> str:
    """Compact, readable JSON-ish text of a value, trimmed to ``limit`` characters."""
    if value is MISSING:
        return "undefined"
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)
            if len(text) > 100:
                text = json.dumps(value, indent=2, ensure_ascii=False, default=repr)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit} more characters)"
    return text


def render_failure(f: Failure, redactor: Redactor, differ: Differ | None = None) -> list[str]:
    where = f" (line {f.line})" if f.line else ""
    lines = [f"{f.check}{where}: {redactor.text(f.message)}"]
    if f.operator is None:
        lines.extend(f"  {key}: {redactor.text(str(value))}" for key, value in f.details.items())
        return lines
    lines.append(f"  operator: {f.operator}")
    lines.append(f"  expected: {_inline(redactor.data(f.expected))}")
    lines.append(f"  actual:   {_inline(redactor.data(f.actual))}")
    diffable = isinstance(f.actual, (str, list, dict)) and type(f.actual) is type(f.expected)
    if differ and f.operator == "equals" and diffable:
        explanation = differ(redactor.data(f.actual), redactor.data(f.expected))
        if explanation:
            lines.extend("  " + line for line in explanation[1:])
    for key, value in f.details.items():
        lines.append(f"  {key}: {redactor.text(str(value))}")
    return lines


def _inline(value: Any) -> str:
    if value is MISSING:
        return "undefined (the path names nothing)"
    text = json.dumps(value, ensure_ascii=False, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


def render_verdict(title: str, verdict: Verdict, redactor: Redactor, differ: Differ | None = None) -> str:
    lines = [title]
    judged = judge_outputs(verdict.trace)
    for failure in verdict.failures:
        lines.extend(render_failure(failure, redactor, differ))
        judgement = judged.get(_head(failure.check)) if judged else None
        if judgement is not None:
            lines.extend("  " + redactor.text(line) for line in judge_lines(judgement))
    if verdict.runs:
        counts = [r.outcome.value for r in verdict.runs]
        passed = counts.count("passed")
        lines.append(f"runs: {passed}/{len(counts)} passed ({', '.join(counts)})")
    return "\n".join(lines)


def _head(path: str) -> str | None:
    try:
        parts = split_path(path)
    except Exception:  # a check name that is not a path
        return None
    return parts[0] if parts and isinstance(parts[0], str) else None


def render_trace(trace: list[StepTrace], redactor: Redactor, limit: int = 2000) -> str:
    """Each executed step with its resolved input and its output, trimmed."""
    out: list[str] = []
    for n, t in enumerate(trace):
        again = f" (loop iteration {t.iteration + 1})" if t.iteration else ""
        line = f" line {t.step.line}" if t.step.line else ""
        out.append(f"[{n}] {t.step.id} ({t.step.block}){line}{again} {t.duration_ms:.1f} ms")
        if t.input not in (None, {}):
            out.append("  input:  " + _indent(dump(redactor.data(t.input), limit)))
        out.append("  output: " + _indent(dump(redactor.data(t.output), limit)))
        if t.error:
            out.append(f"  error:  {redactor.text(t.error)}")
    return "\n".join(out)


def _indent(text: str) -> str:
    return text.replace("\n", "\n          ")
