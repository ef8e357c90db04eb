"""What an LLM judge said, for people: score against threshold, reasoning, per-criterion scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import StepTrace

JUDGE_BLOCKS = frozenset({"LLMJudge"})


def is_judgement(value: Any) -> bool:
    return isinstance(value, Mapping) and "score" in value and "reasoning" in value


def judge_outputs(trace: Sequence[StepTrace]) -> dict[str, Mapping[str, Any]]:
    """DataBus slot -> the latest judge output written there (mapped outputs point to the whole output)."""
    found: dict[str, Mapping[str, Any]] = {}
    for t in trace:
        if t.step.block not in JUDGE_BLOCKS or not is_judgement(t.output):
            continue
        out = t.step.output
        slots = [out] if isinstance(out, str) else list(out.values()) if isinstance(out, dict) else [t.step.id]
        for slot in slots:
            found[slot] = t.output
    return found


def judge_lines(output: Mapping[str, Any]) -> list[str]:
    """Lines like ``judge score: 0.15 < threshold 0.7 (not passed; model gpt-4o-mini)``."""
    score, threshold = output.get("score"), output.get("threshold")
    passed = bool(output.get("passed"))
    relation = ""
    if isinstance(score, (int, float)) and isinstance(threshold, (int, float)):
        relation = f" {'>=' if score >= threshold else '<'} threshold {threshold:g}"
    model = f"; model {output['model']}" if output.get("model") else ""
    shown = f"{score:g}" if isinstance(score, (int, float)) else repr(score)
    lines = [f"judge score: {shown}{relation} ({'passed' if passed else 'not passed'}{model})"]
    details = output.get("details")
    if isinstance(details, Mapping) and details:
        lines.append("criteria: " + ", ".join(f"{k} {_num(v)}" for k, v in details.items()))
    for n, c in enumerate(output.get("constraints") or [], 1):
        if isinstance(c, Mapping):
            state = "met" if c.get("met") else "VIOLATED"
            reason = f" ({c['reason']})" if c.get("reason") else ""
            lines.append(f"constraint {n} {state}: {c.get('constraint', '')}{reason}")
    if output.get("reasoning"):
        lines.append(f"reasoning: {output['reasoning']}")
    if output.get("shouldContinue"):
        lines.append(f"next prompt: {output.get('nextPrompt')}")
    return lines


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)


def render_judgements(trace: Sequence[StepTrace]) -> str:
    """The "llm judge" report section: every judge step, its verdict or why it has none."""
    out: list[str] = []
    for t in trace:
        if t.step.block not in JUDGE_BLOCKS:
            continue
        line = f" line {t.step.line}" if t.step.line else ""
        out.append(f"{t.step.id} ({t.step.block}){line}")
        if is_judgement(t.output):
            out.extend("  " + text for text in judge_lines(t.output))
        else:
            out.append(f"  no verdict: {t.error or 'not evaluated'}")
    return "\n".join(out)


def _clip(text: Any, limit: int = 200) -> str:
    line = " ".join(str(text or "").split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _scored(name: str, out: Mapping[str, Any], reason_key: str) -> str:
    score, threshold = out.get("score"), out.get("threshold")
    relation = ""
    if isinstance(score, (int, float)) and isinstance(threshold, (int, float)):
        relation = f" {'>=' if score >= threshold else '<'} threshold {threshold:g}"
    shown = f"{score:g}" if isinstance(score, (int, float)) else repr(score)
    state = "passed" if out.get("passed") else "not passed"
    return f"{name}: score {shown}{relation} ({state}): {_clip(out.get(reason_key))}"


def verdict_counts(verdict: Any) -> tuple[int, int, list[str]]:
    """(judge verdicts that passed, that did not, one line each: score or held, and the reason)
    over a case's LLMJudge steps, validator verdicts and judged natural-language assertions."""
    from .junit import validations

    passed = failed = 0
    lines: list[str] = []
    for t in verdict.trace:
        if t.step.block in JUDGE_BLOCKS and is_judgement(t.output):
            lines.append(_scored(t.step.id, t.output, "reasoning"))
            passed, failed = (passed + 1, failed) if t.output.get("passed") else (passed, failed + 1)
    for v in validations(verdict):
        lines.append(_scored("validator", v, "reason"))
        passed, failed = (passed + 1, failed) if v.get("passed") else (passed, failed + 1)
    for judgement in verdict.judgements:
        for item in judgement.get("items") or []:
            state = "held" if item.get("passed") else "NOT held"
            lines.append(f"{state}: {_clip(item.get('text'), 80)}: {_clip(item.get('reason'))}")
            passed, failed = (passed + 1, failed) if item.get("passed") else (passed, failed + 1)
    return passed, failed, lines
