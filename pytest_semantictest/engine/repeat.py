"""Running a case as its format asks: each phrasing (variations) ``repetition.runs`` times, judged k/n.

Runs and phrasings overlap (bounded by ``--semantictest-concurrency``) only when the first one's
trace records could all be attributed to their execution (:func:`.batching.runs_may_overlap`);
otherwise they go one after another, as highbar runs them: concurrency never changes a verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from ..model import Case, Outcome, Verdict
from .batching import runs_may_overlap
from .context import RunContext
from .databus import DataBus
from .runner import aggregate, combine, run_case


async def _run_phrasing(
    case: Case, session: RunContext, context: Mapping[str, Any], parent: DataBus | None,
    limit: asyncio.Semaphore, label: str = "",
) -> Verdict:
    async def one(repeat: int) -> Verdict:
        async with limit:
            return await run_case(case, session, context, parent, repeat)

    if case.repetition.runs <= 1:
        verdict = await one(0)
        verdict.label = label
        return verdict
    runs = [await one(0)]  # concurrency must never change a verdict: overlap only runs whose records are tagged
    if runs_may_overlap(runs[0]):
        runs += await asyncio.gather(*(one(i) for i in range(1, case.repetition.runs)))
    else:
        runs += [await one(i) for i in range(1, case.repetition.runs)]
    outcome = aggregate(runs, case.repetition.required)
    first_bad = next((r for r in runs if r.outcome is outcome and outcome is not Outcome.PASSED), None)
    first_bad = first_bad or next((r for r in runs if r.outcome is not Outcome.PASSED), runs[0])
    return Verdict(
        outcome,
        failures=first_bad.failures if outcome is Outcome.FAILED else [],
        trace=first_bad.trace,
        error=_merged_errors(runs) if outcome is Outcome.ERROR else None,
        skip_reason=first_bad.skip_reason,
        duration_ms=sum(r.duration_ms for r in runs),
        runs=runs,
        bus=first_bad.bus,
        label=label,
    )


def _merged_errors(runs: Sequence[Verdict]) -> str:
    """Distinct error messages, each with how many runs it hit: "x (2 of 5 runs)"."""
    counts: dict[str, int] = {}
    for r in runs:
        if r.outcome is Outcome.ERROR and r.error:
            counts[r.error] = counts.get(r.error, 0) + 1
    if len(runs) == 1:
        return next(iter(counts), "")
    return "\n".join(f"{message} ({n} of {len(runs)} runs)" for message, n in counts.items())


async def run_repeated(
    case: Case, session: RunContext, context: Mapping[str, Any], parent: DataBus | None = None,
    concurrency: int = 10,
) -> Verdict:
    """Run a case: each phrasing ``repetition.runs`` times (overlapping, bounded, when their records are
    tagged), judged k/n."""
    limit = asyncio.Semaphore(max(1, concurrency))
    if case.variants is None:
        return await _run_phrasing(case, session, context, parent, limit)
    try:
        phrasings = await case.variants.resolve(session)
    except Exception as exc:  # no LLM, replay miss, bad cache: the test cannot run
        return Verdict(Outcome.ERROR, error=f"variations: {exc}")

    def phrasing(label: str, overlay: Mapping[str, Any]) -> Any:
        return _run_phrasing(case, session, {**context, **overlay}, parent, limit, label)

    (label, overlay), rest = phrasings[0], phrasings[1:]
    verdicts = [await phrasing(label, overlay)]
    if runs_may_overlap(*(verdicts[0].runs or verdicts)):
        verdicts += await asyncio.gather(*(phrasing(label, overlay) for label, overlay in rest))
    else:
        verdicts += [await phrasing(label, overlay) for label, overlay in rest]
    outcome = combine([v.outcome for v in verdicts])
    worst = next((v for v in verdicts if v.outcome is outcome), verdicts[0])
    return Verdict(
        outcome,
        failures=[f for v in verdicts if v.outcome is Outcome.FAILED for f in v.failures],
        trace=worst.trace,
        error="\n".join(f"{v.label}: {v.error}" for v in verdicts if v.outcome is Outcome.ERROR and v.error) or None,
        skip_reason=worst.skip_reason,
        duration_ms=sum(v.duration_ms for v in verdicts),
        runs=[r for v in verdicts for r in (v.runs or [v])],
        bus=worst.bus,
        phrasings=verdicts,
    )
