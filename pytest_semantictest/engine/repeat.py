"""Running a case as its format asks: each phrasing (variations) ``repetition.runs`` times, judged k/n.

Runs and phrasings overlap (bounded by ``--semantictest-runs-at-once``) only when the first one's
trace records could all be attributed to their execution (:func:`.batching.runs_may_overlap`);
otherwise they go one after another, as highbar runs them: concurrency never changes a verdict.

A phrasing's runs stop once its outcome is decided (:func:`decided`: with ``runs: 10, min_pass: 8``,
8 passed or 3 failed), the runs still in flight are cancelled; ``--semantictest-no-early-stop`` makes
them all (flakiness measurement). The verdict's ``planned_runs`` says how many were planned.

A case (or the run, ``--semantictest-pass-rate``) may ask instead for a sequential decision on its
pass rate (:class:`.stats.PassRateTest`): runs go on in batches of the concurrency until it decides.

Either stopping rule is applied run by run in the planned order, to the first runs only: the
decision, its k and its n are those of the shortest prefix of runs that decides, whatever order
the runs finished in. Runs in flight finish or are cancelled; those that finished after that prefix
are kept in the verdict's ``beyond`` (reported, not counted). So the same outcomes give the same
verdict, k and n at any concurrency.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..blocks.registry import get_block
from ..databus import DataBus
from ..json_types import JSONValue
from ..model import Case, Failure, Outcome, Verdict
from ..run_context import RunContext
from ..stats import Decision, PassRateTest, interval_label, interval_text
from .batching import runs_may_overlap
from .runner import aggregate, combine, run_case

if TYPE_CHECKING:
    from ..evidence import Evidence


async def _run_phrasing(
    case: Case,
    run_context: RunContext,
    context: Mapping[str, JSONValue],
    parent: DataBus | None,
    limit: asyncio.Semaphore,
    label: str = "",
    batch: int = 1,
) -> Verdict:
    async def one(repeat: int) -> Verdict:
        async with limit:
            return await run_case(case, run_context, context, parent, repeat)

    test = case.repetition.decision or run_context.settings.pass_rate
    if test is not None:
        return await _sequential(
            one, test, batch, _reads_agent_traces(case), label, run_context.settings.inconclusive
        )
    if case.repetition.runs <= 1:
        verdict = await one(0)
        verdict.label = label
        return verdict
    return await _fixed_runs(one, case, run_context.settings.all_runs, label)


async def _fixed_runs(
    one: Callable[[int], Awaitable[Verdict]], case: Case, every: bool, label: str
) -> Verdict:
    """``runs`` runs judged k/n (``min_pass`` of them must pass), stopped once decided unless ``every``."""
    total, required = case.repetition.runs, case.repetition.required
    if _reads_agent_traces(case):
        made = await _attributed_runs(one, total, required, every)
    else:  # nothing to attribute: every run at once
        made = await _overlapping(one, [], total, required, every, start=0)
    counted = len(made) if every else _deciding_prefix(made, total, required)
    runs, beyond = made[:counted], made[counted:]
    outcome = aggregate(runs, required)
    first_bad = _shown_run(runs, outcome)
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
        planned_runs=total,
        sequential=not every,
        beyond=beyond,
    )


def _shown_run(runs: Sequence[Verdict], outcome: Outcome) -> Verdict:
    """The run a k/n verdict shows: the first with its outcome (unless passed), else the first that did
    not pass, else the first."""
    first_bad = next((r for r in runs if r.outcome is outcome and outcome is not Outcome.PASSED), None)
    return first_bad or next((r for r in runs if r.outcome is not Outcome.PASSED), runs[0])


async def _attributed_runs(
    one: Callable[[int], Awaitable[Verdict]],
    total: int,
    required: int,
    every: bool,
) -> list[Verdict]:
    """The first run alone; the others at once when its trace records were all attributed, else one
    after another (concurrency must never change a verdict: untagged records of overlapping runs mix)."""
    runs = [await one(0)]
    if runs_may_overlap(runs[0]):
        return runs + await _overlapping(one, runs, total, required, every)
    for i in range(1, total):
        if not every and decided(runs, total, required):
            break
        runs.append(await one(i))
    return runs


def _reads_agent_traces(case: Case) -> bool:
    """Whether a step of the case reads trace records that may need attributing to their run."""
    return any(getattr(get_block(step.block), "reads_agent_traces", False) for step in case.steps)


async def _overlapping(
    one: Callable[[int], Awaitable[Verdict]],
    first: list[Verdict],
    total: int,
    required: int,
    every: bool,
    start: int = 1,
) -> list[Verdict]:
    """Runs ``start``.. at once (bounded by ``one``'s semaphore); the ones not finished are cancelled
    once the first runs, in planned order, decide the outcome (unless ``every``). Returns every run
    that finished (after ``first``) in run order: the deciding prefix has no gap, what follows may."""
    pending = {asyncio.ensure_future(one(i)): i for i in range(start, total)}
    finished: dict[int, Verdict] = dict(enumerate(first))
    prefix = _Prefix(total, required)
    try:
        while pending and (every or not prefix.extend(finished)):
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                finished[pending.pop(task)] = task.result()
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    return [finished[i] for i in sorted(finished) if i >= len(first)]


class _Prefix:
    """The first runs, in planned order, as they finish: whether they decide the outcome yet."""

    def __init__(self, total: int, required: int) -> None:
        self.total, self.required = total, required
        self.runs: list[Verdict] = []

    def extend(self, finished: Mapping[int, Verdict]) -> bool:
        while len(self.runs) in finished:
            self.runs.append(finished[len(self.runs)])
            if decided(self.runs, self.total, self.required):
                return True
        return False


def _deciding_prefix(runs: Sequence[Verdict], total: int, required: int) -> int:
    """How many of the first ``runs`` the outcome counts: the shortest prefix that decides it."""
    prefix = _Prefix(total, required)
    prefix.extend(dict(enumerate(runs)))
    return len(prefix.runs)


async def _sequential(
    one: Callable[[int], Awaitable[Verdict]],
    test: PassRateTest,
    batch: int,
    attributed: bool,
    label: str,
    inconclusive: str = "fail",
) -> Verdict:
    """Runs in batches (in run order; each batch at once where the runs' records can be told apart),
    the rule applied run by run to the first runs, until it decides or the budget is spent
    (docs/statistics.md). ``inconclusive``: what an inconclusive decision is (``fail`` or ``skip``)."""
    made, counted, decision = await _runs_until_decided(one, test, batch, attributed)
    runs, beyond = made[:counted], made[counted:]
    text = _decision_text(decision, test, runs, beyond)
    said: str | None = text
    skip_reason = None
    if _all_skipped(runs):
        outcome, said = Outcome.SKIPPED, None
    else:
        outcome, skip_reason = _decided_outcome(decision, runs, text, inconclusive)
    bad = next((r for r in runs if r.outcome is not Outcome.PASSED), runs[0])
    failures = (
        []
        if outcome is not Outcome.FAILED
        else [Failure("pass rate", f"{said}: {_why_not_passed(decision)}"), *bad.failures]
    )
    return Verdict(
        outcome,
        failures=failures,
        trace=bad.trace,
        error=f"{_merged_errors(runs)}\n{said}" if outcome is Outcome.ERROR else None,
        skip_reason=skip_reason or bad.skip_reason,
        duration_ms=sum(r.duration_ms for r in made),
        runs=runs,
        bus=bad.bus,
        label=label,
        planned_runs=len(runs),
        decision=said,
        sequential=True,
        beyond=beyond,
    )


async def _runs_until_decided(
    one: Callable[[int], Awaitable[Verdict]], test: PassRateTest, batch: int, attributed: bool
) -> tuple[list[Verdict], int, Decision]:
    """Every run made, how many of the first ones the decision counts, and the decision."""
    made: list[Verdict] = []
    if attributed:  # the first run alone: do its trace records say which run made them?
        made.append(await one(0))
        batch = batch if runs_may_overlap(made[0]) else 1
    counted, decision = _first_decision(test, made)
    while decision is Decision.UNDECIDED and not _all_skipped(made):
        size = min(max(1, batch), test.max_runs - len(made))
        made += await asyncio.gather(*(one(len(made) + i) for i in range(size)))
        counted, decision = _first_decision(test, made)
    return made, counted, decision


def _decision_text(
    decision: Decision, test: PassRateTest, runs: Sequence[Verdict], beyond: Sequence[Verdict]
) -> str:
    passed = _passed(runs)
    return (
        f"{decision.value}: {passed}/{len(runs)} runs passed ({interval_label(True)} "
        f"{interval_text(passed, len(runs), anytime=True)}); {test.describe()}"
        + (f"; {len(beyond)} more run(s) finished after the decision, not counted" if beyond else "")
    )


def _why_not_passed(decision: Decision) -> str:
    if decision is Decision.INCONCLUSIVE:
        return (
            "the budget of runs was spent before the pass rate was shown to be above or below the threshold"
        )
    return "the pass rate is below the threshold"


def _decided_outcome(
    decision: Decision, runs: Sequence[Verdict], said: str, inconclusive: str
) -> tuple[Outcome, str | None]:
    """The outcome of runs not all skipped, and the skip reason when an inconclusive decision skips."""
    if decision is Decision.PASS:
        return Outcome.PASSED, None
    if decision is Decision.INCONCLUSIVE and inconclusive == "skip":
        why = _why_not_passed(decision)
        return Outcome.SKIPPED, f"pass rate: {said}: {why} (--semantictest-inconclusive=skip)"
    return (Outcome.ERROR if any(r.outcome is Outcome.ERROR for r in runs) else Outcome.FAILED), None


def _first_decision(test: PassRateTest, runs: Sequence[Verdict]) -> tuple[int, Decision]:
    """The rule applied run by run: the first ``n`` at which it decides, and the decision (the last
    run's, UNDECIDED, when none yet)."""
    passed = 0
    for n, run in enumerate(runs, 1):
        passed += run.outcome is Outcome.PASSED
        decision = test.decide(passed, n)
        if decision is not Decision.UNDECIDED:
            return n, decision
    return len(runs), Decision.UNDECIDED


def _passed(runs: Sequence[Verdict]) -> int:
    return sum(1 for r in runs if r.outcome is Outcome.PASSED)


def _all_skipped(runs: Sequence[Verdict]) -> bool:
    return bool(runs) and all(r.outcome is Outcome.SKIPPED for r in runs)


def decided(runs: Sequence[Verdict], total: int, required: int) -> bool:
    """Whether the runs still to make cannot change :func:`.runner.aggregate`'s outcome: with
    ``runs: 10, min_pass: 8``, once 8 passed or 3 failed (an error still counts towards ERROR)."""
    left = total - len(runs)
    if left <= 0:
        return True
    passed = _passed(runs)
    errored = sum(1 for r in runs if r.outcome is Outcome.ERROR)
    possible: set[Outcome] = {Outcome.PASSED} if passed + left >= required else set()
    if passed < required:
        possible |= _failing_outcomes(runs, passed + errored, left, required)
    return len(possible) == 1


def _failing_outcomes(
    runs: Sequence[Verdict], passed_or_errored: int, left: int, required: int
) -> set[Outcome]:
    """The outcomes other than PASSED still possible while fewer than ``required`` runs passed."""
    possible: set[Outcome] = set()
    if all(r.outcome is Outcome.SKIPPED for r in runs):
        possible.add(Outcome.SKIPPED)
    if passed_or_errored + left >= required:
        possible.add(Outcome.ERROR)
    if passed_or_errored < required:
        possible.add(Outcome.FAILED)
    return possible


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
    case: Case,
    run_context: RunContext,
    context: Mapping[str, JSONValue],
    parent: DataBus | None = None,
    concurrency: int = 10,
) -> Verdict:
    """Run a case: each phrasing ``repetition.runs`` times (overlapping, bounded, when their records are
    tagged), judged k/n."""
    limit = asyncio.Semaphore(max(1, concurrency))
    if case.variants is None:
        return await _run_phrasing(case, run_context, context, parent, limit, batch=concurrency)
    try:
        phrasings = await case.variants.resolve(run_context)
    except Exception as exc:  # no LLM, replay miss, bad cache: the test cannot run  # noqa: BLE001
        return Verdict(Outcome.ERROR, error=f"variations: {exc}")

    def phrasing(label: str, overlay: Mapping[str, JSONValue]) -> Awaitable[Verdict]:
        return _run_phrasing(case, run_context, {**context, **overlay}, parent, limit, label, concurrency)

    verdicts = await _each_phrasing(phrasing, phrasings)
    return _over_phrasings(verdicts, _variations_note(case, len(phrasings) - 1))


def _over_phrasings(verdicts: list[Verdict], evidence: list[Evidence]) -> Verdict:
    """The case's verdict over its phrasings: the worst outcome, every failure, each phrasing's error."""
    outcome = combine([v.outcome for v in verdicts])
    worst = next((v for v in verdicts if v.outcome is outcome), verdicts[0])
    return Verdict(
        outcome,
        failures=[f for v in verdicts if v.outcome is Outcome.FAILED for f in v.failures],
        trace=worst.trace,
        error=_phrasing_errors(verdicts),
        skip_reason=worst.skip_reason,
        duration_ms=sum(v.duration_ms for v in verdicts),
        runs=[r for v in verdicts for r in _runs_of(v)],
        bus=worst.bus,
        phrasings=verdicts,
        planned_runs=_planned_runs(verdicts),
        evidence=evidence,
    )


async def _each_phrasing(
    phrasing: Callable[[str, Mapping[str, JSONValue]], Awaitable[Verdict]],
    phrasings: Sequence[tuple[str, Mapping[str, JSONValue]]],
) -> list[Verdict]:
    """The first phrasing alone; the others at once when its runs' records were all attributed."""
    (label, overlay), rest = phrasings[0], phrasings[1:]
    verdicts = [await phrasing(label, overlay)]
    if runs_may_overlap(*_runs_of(verdicts[0])):
        verdicts += await asyncio.gather(*(phrasing(label, overlay) for label, overlay in rest))
    else:
        verdicts += [await phrasing(label, overlay) for label, overlay in rest]
    return verdicts


def _runs_of(verdict: Verdict) -> list[Verdict]:
    """A phrasing's runs (a single-run phrasing is its own run)."""
    return verdict.runs or [verdict]


def _planned_runs(verdicts: Sequence[Verdict]) -> int:
    return sum(v.planned_runs or len(_runs_of(v)) for v in verdicts)


def _phrasing_errors(verdicts: Sequence[Verdict]) -> str | None:
    errors = [f"{v.label}: {v.error}" for v in verdicts if v.outcome is Outcome.ERROR and v.error]
    return "\n".join(errors) or None


def _variations_note(case: Case, others: int) -> list[Evidence]:
    """highbar's "(4 of 3 variations)", when the case's variations say how many were tested."""
    from ..evidence import Note

    tested = getattr(case.variants, "tested", None)
    return [Note("variations", {"tested": tested(others)})] if callable(tested) else []
