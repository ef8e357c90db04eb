"""What an LLM judge said, for people: score against threshold, reasoning, per-criterion scores
(from :class:`~pytest_semantictest.evidence.Judgement` records, whatever block gave them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..evidence import JudgedItems, Judgement, ValidatorVerdict
from ..json_types import JSONValue
from ..model import StepTrace, Verdict
from ..shown import one_line
from .records import has, in_trace, step_name


def has_judgements(trace: Sequence[StepTrace]) -> bool:
    return has(trace, Judgement)


def judge_outputs(trace: Sequence[StepTrace]) -> dict[str, Judgement]:
    """DataBus slot -> the latest verdict a step wrote there (mapped outputs point to the whole output)."""
    found: dict[str, Judgement] = {}
    for t, j in in_trace(trace, Judgement):
        if not j.has_verdict:
            continue
        out = t.step.output
        slots = (
            [out] if isinstance(out, str) else list(out.values()) if isinstance(out, dict) else [t.step.id]
        )
        for slot in slots:
            found[slot] = j
    return found


def unstable_judgements(verdict: Verdict) -> list[str]:
    """Each judged step of the case (any run) whose samples disagreed: ``step 'judge': 3/5 ...``."""
    found = []
    for run in verdict.runs or [verdict]:
        for t, j in in_trace(run.trace, Judgement):
            if j.unstable and j.samples is not None:
                found.append(f"{step_name(t)} (line {t.step.line}): {_samples_text(j.samples)}")
        found += [
            f"{items.check}: {_samples_text(items.samples)}"
            for items in judged_items(run)
            if items.unstable and items.samples is not None
        ]
    return list(dict.fromkeys(found))


def _samples_text(samples: Mapping[str, JSONValue]) -> str:
    # the judge's wording is imported where a test was judged: its module builds the verdict's models
    from ..llm.verdict import samples_text

    return samples_text(samples)


def render_judgements(trace: Sequence[StepTrace]) -> str:
    """The "llm judge" report section: every judge verdict of the steps, or why there is none."""
    from ..llm.verdict import judge_lines

    out: list[str] = []
    for t, j in in_trace(trace, Judgement):
        line = f" line {t.step.line}" if t.step.line else ""
        out.append(f"{t.step.id} ({t.step.block}){line}")
        if j.has_verdict:
            out.extend("  " + text for text in judge_lines(j))
        else:
            out.append(f"  no verdict: {j.error}")
    return "\n".join(out)


def _clip(text: object, limit: int = 200) -> str:
    return one_line(text or "", limit)


def _scored(name: str, score: object, threshold: object, passed: bool, reason: str) -> str:
    from ..llm.verdict import relation_to_threshold

    shown = f"{score:g}" if isinstance(score, (int, float)) else repr(score)
    state = "passed" if passed else "not passed"
    return f"{name}: score {shown}{relation_to_threshold(score, threshold)} ({state}): {_clip(reason)}"


def _same(text: str) -> str:
    return text


def verdict_counts(verdict: Verdict, redact: Callable[[str], str] = _same) -> tuple[int, int, list[str]]:
    """(judge verdicts that passed, that did not, one line each: score or held, and the reason)
    over a case's judge verdicts, validator verdicts and judged natural-language assertions; each
    reason passed through ``redact`` whole, before it is put on one line and clipped."""
    outcomes: list[bool] = []
    lines: list[str] = []
    for t, j in in_trace(verdict.trace, Judgement):
        if j.has_verdict:
            lines.append(_scored(t.step.id, j.score, j.threshold, j.passed, redact(str(j.reasoning or ""))))
            outcomes.append(j.passed)
    for v in validations(verdict):
        lines.append(_scored("validator", v.score, v.threshold, v.passed, redact(str(v.reason or ""))))
        outcomes.append(v.passed)
    for judged in judged_items(verdict):
        for item in judged.items:
            state = "held" if item.passed else "NOT held"
            lines.append(
                f"{state}: {_clip(redact(str(item.text)), 80)}: {_clip(redact(str(item.reason or '')))}"
            )
            outcomes.append(item.passed)
    return outcomes.count(True), outcomes.count(False), lines


def validations(verdict: Verdict) -> list[ValidatorVerdict]:
    """Validator verdicts: each turn assertion's, and each checkpoint's last one."""
    found: dict[tuple[object, ...], ValidatorVerdict] = {}
    for _, v in in_trace(verdict.trace, ValidatorVerdict):
        found[("checkpoint", v.checkpoint) if v.checkpoint else (v.turn, v.index)] = v
    return list(found.values())


def judged_items(verdict: Verdict) -> list[JudgedItems]:
    """Judged checks' per-item verdicts: the checks' records, then any a step gave."""
    found = [r for r in verdict.evidence if isinstance(r, JudgedItems)]
    return found + [r for _, r in in_trace(verdict.trace, JudgedItems)]
