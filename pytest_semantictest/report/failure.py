"""Failure output that reads like pytest's own: path, operator, expected, actual, diff."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..databus import MISSING, split_path
from ..json_types import JSONValue
from ..llm.verdict import judge_lines
from ..model import Failure, StepTrace, Verdict
from ..redact import Redactor
from ..shown import shorten
from ..stats import interval_label, interval_text
from .judge import judge_outputs

Differ = Callable[[JSONValue, JSONValue], list[str] | None]
MESSAGE_LIMIT = 500
"""A failure's headline (and each detail) is cut to this many characters, keeping both ends."""
CAUSE_LIMIT = 300
"""The step error a headline names after the message (``Failure.cause``) is cut to this many."""
SAME_MIN = 200
"""A string this long that a trace already showed is named, not printed again."""


def sized(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut and the full size."""
    return shorten(text, limit, tell=True)


def clip_middle(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` cut in the middle (a headline's end names the expectation), saying the full size."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    return (
        f"{head} ... ({len(text) - len(head) - len(tail):,} characters cut; {len(text):,} in all) ... {tail}"
    )


def dump(value: object, limit: int = 2000) -> str:
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
    return sized(text, limit)


def render_failure(f: Failure, redactor: Redactor, differ: Differ | None = None) -> list[str]:
    where = f" (line {f.line})" if f.line else ""
    cause = f", because {clip_middle(redactor.text(f.cause), CAUSE_LIMIT)}" if f.cause else ""
    lines = [f"{f.check}{where}: {clip_middle(redactor.text(f.message))}{cause}"]
    if f.operator is None:
        lines.extend(f"  {key}: {clip_middle(redactor.text(str(value)))}" for key, value in f.details.items())
        return lines
    lines.append(f"  operator: {f.operator}")
    lines.append(f"  expected: {_inline(redactor.data(f.expected))}")
    lines.append(f"  actual:   {_inline(redactor.data(f.actual))}")
    lines += _diff(f, redactor, differ)
    for key, value in f.details.items():
        lines.append(f"  {key}: {clip_middle(redactor.text(str(value)))}")
    return lines


def _diff(f: Failure, redactor: Redactor, differ: Differ | None) -> list[str]:
    """pytest's explanation of how the actual value differs from the expected one, for ``equals``."""
    if differ is None or f.operator != "equals" or not _diffable(f):
        return []
    explanation = differ(redactor.data(f.actual), redactor.data(f.expected))
    return ["  " + line for line in explanation[1:]] if explanation else []


def _diffable(f: Failure) -> bool:
    """Whether pytest's diff of actual and expected is worth showing: two strings, lists or objects,
    not too large (difflib is quadratic)."""
    return (
        isinstance(f.actual, (str, list, dict))
        and type(f.actual) is type(f.expected)
        and len(_inline_full(f.actual)) + len(_inline_full(f.expected)) <= 100_000
    )


def _inline_full(value: object) -> str:
    if value is MISSING:
        return "undefined (the path names nothing)"
    return json.dumps(value, ensure_ascii=False, default=repr) if not isinstance(value, str) else repr(value)


def _inline(value: object) -> str:
    text = _inline_full(value)
    return shorten(text, 300, tell=True)


def render_verdict(title: str, verdict: Verdict, redactor: Redactor, differ: Differ | None = None) -> str:
    lines = [title]
    judged = judge_outputs(verdict.trace)
    for failure in verdict.failures:
        lines.extend(render_failure(failure, redactor, differ))
        head = _head(failure.check)
        judgement = judged.get(head) if judged and head is not None else None
        if judgement is not None:
            # masked whole before it is cut into lines: a secret with a newline is one value
            lines.extend(
                "  " + line for line in redactor.text("\n".join(judge_lines(judgement))).splitlines()
            )
    if verdict.runs:
        lines.append(_runs_line(verdict))
    return "\n".join(lines)


def _runs_line(verdict: Verdict) -> str:
    """A repeated test's runs: how many passed, the interval, each outcome, and where it stopped."""
    counts = [r.outcome.value for r in verdict.runs]
    passed = counts.count("passed")
    stopped = (
        f"; stopped after {len(counts)} of {verdict.planned_runs} runs, the outcome was decided"
        if verdict.planned_runs > len(counts)
        else ""
    )
    anytime = verdict.anytime
    interval = (
        f", {interval_label(anytime)} {interval_text(passed, len(counts), anytime)}"
        if len(counts) > 1
        else ""
    )
    beyond = [r.outcome.value for r in verdict.beyond]
    if beyond:
        stopped += f"; {len(beyond)} more finished after that, not counted ({', '.join(beyond)})"
    return f"runs: {passed}/{len(counts)} passed{interval} ({', '.join(counts)}){stopped}"


def _head(path: str) -> str | None:
    try:
        parts = split_path(path)
    except Exception:  # a check name that is not a path  # noqa: BLE001
        return None
    return parts[0] if parts and isinstance(parts[0], str) else None


def render_trace(trace: list[StepTrace], redactor: Redactor, limit: int = 2000) -> str:
    """Each executed step with its resolved input and its output, trimmed."""
    out: list[str] = []
    seen: dict[str, str] = {}
    for n, t in enumerate(trace):
        again = f" (loop iteration {t.iteration + 1})" if t.iteration else ""
        line = f" line {t.step.line}" if t.step.line else ""
        out.append(f"[{n}] {t.step.id} ({t.step.block}){line}{again} {t.duration_ms:.1f} ms")
        if t.input not in (None, {}):
            out.append(
                "  input:  " + _indent(dump(_once(redactor.data(t.input), seen, f"[{n}] input"), limit))
            )
        out.append("  output: " + _indent(dump(_once(redactor.data(t.output), seen, f"[{n}] output"), limit)))
        if t.error:
            out.append(f"  error:  {redactor.text(t.error)}")
    return "\n".join(out)


def _indent(text: str) -> str:
    return text.replace("\n", "\n          ")


def _once(value: JSONValue, seen: dict[str, str], where: str, depth: int = 0) -> JSONValue:
    """``value`` with every long string the trace showed before replaced by a note naming where
    (a stream body is the HTTP step's output and the parser's input: printed once)."""
    if isinstance(value, str):
        if len(value) < SAME_MIN:
            return value
        if value in seen:
            return f"<the same {len(value):,} characters as {seen[value]}>"
        seen[value] = where
        return value
    if depth > 3:
        return value
    if isinstance(value, dict):
        return {k: _once(v, seen, f"{where}.{k}", depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_once(v, seen, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    return value
