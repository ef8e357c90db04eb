"""Per-test properties (``item.user_properties``): JUnit XML ``<property>`` elements, and the data the
terminal and HTML summaries read on the xdist controller.

Names: ``format``; with a verdict ``runs`` (``k/n`` runs passed), ``min_pass``, ``run_outcomes`` and
``pass_rate`` with its 95% Wilson interval ``pass_rate_low``/``pass_rate_high`` (repeated tests),
``decision`` (a sequential pass-rate test's conclusion), ``unstable_judgement`` (judged steps whose
samples disagreed), ``score`` and ``threshold`` (the deciding LLM judge or validator), ``judged``
(``k/n`` natural-language assertions held), ``llm_calls``, ``cache_hits`` and ``tokens`` (LLM use
while the test ran), and ``<note title>: <fact>`` for every fact of a
:class:`~pytest_semantictest.evidence.Note` a block or check gave. ERROR vs FAILURE needs nothing here: a case that errors
does so in the setup phase (``<error>``), one whose checks fail in the call phase (``<failure>``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..evidence import Judgement, ValidatorVerdict
from ..model import Outcome, Verdict
from ..redact import Redactor
from ..stats import rate_interval
from .judge import judged_items, unstable_judgements, validations
from .notes import note_properties
from .records import in_trace


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


def run_tally(verdict: Verdict) -> tuple[int, int]:
    """``(passed, total)`` over every run of the case (every phrasing's)."""
    runs = run_verdicts(verdict)
    return sum(1 for _, r in runs if r.outcome is Outcome.PASSED), len(runs)


def deciding_judgement(verdict: Verdict) -> Judgement | ValidatorVerdict | None:
    """The verdict that decided the case: the lowest score among its judge and validator verdicts."""
    found: list[Judgement | ValidatorVerdict] = [
        j for _, j in in_trace(verdict.trace, Judgement) if j.has_verdict
    ]
    found += validations(verdict)
    scored = [j for j in found if isinstance(j.score, (int, float)) and not isinstance(j.score, bool)]
    return min(scored, key=lambda j: j.score) if scored else (found[0] if found else None)


def properties(
    fmt: str,
    verdict: Verdict | None,
    required: int | None,
    usage: Mapping[str, int],
    redactor: Redactor | None = None,
) -> list[tuple[str, object]]:
    """The properties of one test (``required``: runs that must pass, when the case repeats)."""
    props: list[tuple[str, object]] = [("format", fmt)]
    if verdict is None:
        return props
    props += _run_properties(verdict, required)
    props += _judge_properties(verdict)
    if usage.get("calls") or usage.get("cache_hits") or usage.get("tokens"):
        props += [
            ("llm_calls", usage.get("calls", 0)),
            ("cache_hits", usage.get("cache_hits", 0)),
            ("tokens", usage.get("tokens", 0)),
        ]
    return props + note_properties(verdict, redactor)


def _run_properties(verdict: Verdict, required: int | None) -> list[tuple[str, object]]:
    """How many runs passed; for a repeated test its outcomes and pass rate; the decision, and the runs
    planned when it stopped early."""
    props: list[tuple[str, object]] = []
    passed, total = run_tally(verdict)
    if verdict.outcome is not Outcome.SKIPPED:  # a skipped test made no run: no "0/1"
        props.append(("runs", f"{passed}/{total}"))  # for people; the summary reads numbers (COUNT_ATTR)
    if total > 1:
        props += _repeated_properties(verdict, required, passed, total)
    if verdict.decision:
        props.append(("decision", verdict.decision))
    if verdict.planned_runs > len(verdict.runs):  # stopped once the outcome was decided
        props.append(("runs_planned", verdict.planned_runs))
    return props


def _repeated_properties(
    verdict: Verdict, required: int | None, passed: int, total: int
) -> list[tuple[str, object]]:
    """A repeated test's minimum, each run's outcome, and its pass rate with the interval."""
    props: list[tuple[str, object]] = []
    if required is not None:
        props.append(("min_pass", required))
    props.append(("run_outcomes", ",".join(r.outcome.value for _, r in run_verdicts(verdict))))
    low, high = rate_interval(passed, total, verdict.anytime)
    props += [
        ("pass_rate_interval", "confidence sequence" if verdict.anytime else "Wilson"),
        ("pass_rate", round(passed / total, 4)),
        ("pass_rate_low", round(low, 4)),
        ("pass_rate_high", round(high, 4)),
    ]
    return props


def _judge_properties(verdict: Verdict) -> list[tuple[str, object]]:
    """The deciding verdict's score and threshold, judgements whose samples disagreed, and how many
    natural-language assertions held."""
    props: list[tuple[str, object]] = []
    judged = deciding_judgement(verdict)
    if judged is not None:
        for key, value in (("score", judged.score), ("threshold", judged.threshold)):
            if isinstance(value, (int, float)):
                props.append((key, value))
    unstable = unstable_judgements(verdict)
    if unstable:
        props.append(("unstable_judgement", "; ".join(unstable)))
    items = [i for j in judged_items(verdict) for i in j.items]
    if items:
        props.append(("judged", f"{sum(1 for i in items if i.passed)}/{len(items)}"))
    return props
