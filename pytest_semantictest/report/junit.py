"""Per-test properties (``item.user_properties``): JUnit XML ``<property>`` elements, and the data the
terminal and HTML summaries read on the xdist controller.

Names: ``format``; with a verdict ``runs`` (``k/n`` runs passed), ``min_pass`` and ``run_outcomes``
(repeated tests), ``score`` and ``threshold`` (the deciding LLM judge or validator), ``judged``
(``k/n`` natural-language assertions held), ``llm_calls``, ``cache_hits`` and ``tokens`` (LLM use
while the test ran). ERROR vs FAILURE needs nothing here: a case that errors
does so in the setup phase (``<error>``), one whose checks fail in the call phase (``<failure>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Outcome, Verdict
from .conversation import conversation_data
from .judge import JUDGE_BLOCKS, is_judgement


def run_verdicts(verdict: Verdict) -> list[tuple[str, Verdict]]:
    """Each run of a case with its label (``run 2``, ``phrasing 1 run 2``); one entry when run once."""
    if verdict.phrasings:
        out = []
        for p, phrasing in enumerate(verdict.phrasings, 1):
            name = phrasing.label or f"phrasing {p}"
            runs = phrasing.runs or [phrasing]
            out += [(f"{name} run {n}" if len(runs) > 1 else name, r) for n, r in enumerate(runs, 1)]
        return out
    return [(f"run {n}", r) for n, r in enumerate(verdict.runs or [verdict], 1)]


def validations(verdict: Verdict) -> list[Mapping[str, Any]]:
    """Validator verdicts of a conversation: each turn assertion's, and each checkpoint's last one."""
    found: dict[Any, Mapping[str, Any]] = {}
    for turn in conversation_data(verdict.trace)[0]:
        for n, a in enumerate(turn.get("assertions") or []):
            if isinstance(a.get("validator"), Mapping):
                key = ("checkpoint", a["checkpoint"]) if a.get("checkpoint") else (turn.get("turn"), n)
                found[key] = a["validator"]
    return list(found.values())


def deciding_judgement(verdict: Verdict) -> Mapping[str, Any] | None:
    """The judge output that decided the case: the lowest score among its judge steps and validators."""
    found = [t.output for t in verdict.trace if t.step.block in JUDGE_BLOCKS and is_judgement(t.output)]
    found += validations(verdict)
    scored = [j for j in found if isinstance(j.get("score"), (int, float)) and not isinstance(j.get("score"), bool)]
    return min(scored, key=lambda j: j["score"]) if scored else (found[0] if found else None)


def properties(fmt: str, verdict: Verdict | None, required: int | None, usage: Mapping[str, int]) -> list[tuple[str, Any]]:
    """The properties of one test (``required``: runs that must pass, when the case repeats)."""
    props: list[tuple[str, Any]] = [("format", fmt)]
    if verdict is None:
        return props
    runs = run_verdicts(verdict)
    passed = sum(1 for _, r in runs if r.outcome is Outcome.PASSED)
    props.append(("runs", f"{passed}/{len(runs)}"))
    if len(runs) > 1:
        if required is not None:
            props.append(("min_pass", required))
        props.append(("run_outcomes", ",".join(r.outcome.value for _, r in runs)))
    judged = deciding_judgement(verdict)
    if judged is not None:
        for key in ("score", "threshold"):
            if isinstance(judged.get(key), (int, float)):
                props.append((key, judged[key]))
    items = [i for j in verdict.judgements for i in j.get("items") or []]
    if items:
        props.append(("judged", f"{sum(1 for i in items if i.get('passed'))}/{len(items)}"))
    if usage.get("calls") or usage.get("cache_hits") or usage.get("tokens"):
        props += [("llm_calls", usage.get("calls", 0)), ("cache_hits", usage.get("cache_hits", 0)),
                  ("tokens", usage.get("tokens", 0))]
    return props
