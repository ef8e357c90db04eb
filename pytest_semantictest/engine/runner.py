"""Runs a Case: steps over a DataBus (with Loop jumps), then checks, giving a Verdict."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field

from ..databus import DataBus
from ..errors import Problem
from ..evidence import Evidence
from ..json_types import JSONValue
from ..model import Case, Check, CheckResult, Failure, Outcome, Step, StepTrace, Verdict
from ..resolve import Resolver
from ..run_context import LLMUnavailable, RunContext
from ..shown import masking
from ..step import StepContext
from ..trace_context import tracing
from .batching import concurrent_run_end
from .inputs import failed_outputs, output_slots, write_outputs
from .judge_free import judge_free_failures
from .step_run import FATAL, UNAVAILABLE, UNSET, StepOutcome, timed_step, with_evidence


@dataclass
class Checked:
    """What a set of checks gave: failures, errors, reasons they were not evaluated, LLM verdicts."""

    failures: list[Failure] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)

    def add(self, other: Checked) -> None:
        self.failures += other.failures
        self.errors += other.errors
        self.skipped += other.skipped
        self.evidence += other.evidence


@dataclass
class PipelineResult:
    """Steps' trace plus the steps whose latest run failed or could not be judged."""

    trace: list[StepTrace] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)
    unavailable: dict[int, str] = field(default_factory=dict)
    fatal: str | None = None
    fatal_steps: set[int] = field(default_factory=set)
    gates: Checked = field(default_factory=Checked)
    running: int | None = None
    """The index of the step running now (a case's deadline names it)."""


def _loop_target(steps: Sequence[Step], target: JSONValue, current: int) -> int | None:
    if isinstance(target, int) and not isinstance(target, bool):
        return target if 0 <= target < current else None
    for i in range(current - 1, -1, -1):
        if steps[i].id == target:
            return i
    return None


def _record(
    result: PipelineResult,
    steps: Sequence[Step],
    index: int,
    outcome: StepOutcome,
    iteration: int,
    bus: DataBus,
    file: str,
) -> None:
    inputs, output, error, status, elapsed, emitted = outcome
    step = steps[index]
    result.trace.append(with_evidence(StepTrace(step, inputs, output, elapsed, error, iteration), emitted))
    result.errors.pop(index, None)
    result.unavailable.pop(index, None)
    if status == UNAVAILABLE:
        result.unavailable[index] = error or str(
            LLMUnavailable("judge", error=False)
        )  # (a bare JudgeUnavailable)
    elif status in (FATAL, UNSET):
        message = _stopping_message(step, status, error, file)
        result.errors[index] = message
        result.fatal = result.fatal or message
        result.fatal_steps.add(index)
    elif error is not None:
        result.errors[index] = error
    if output is not None:
        write_outputs(bus, step.output, step.id, output)


def _stopping_message(step: Step, status: str, error: str | None, file: str) -> str:
    """The error of a step that stops the pipeline: an LLM judge failure, or an unset variable."""
    if status == FATAL:
        where = f", line {step.line}" if step.line else ""
        return f"LLM judge error in step '{step.id}' ({step.block}{where}): {error}"
    # the one line of a spec problem, ``file:line: place: message``
    problem = Problem(step.place or f"step '{step.id}'", error or "", step.line)
    return problem.render(file) if file else f"{problem.place}: {problem.message}"


async def run_pipeline(
    steps: Sequence[Step], ctx: StepContext, into: PipelineResult | None = None, file: str = ""
) -> PipelineResult:
    """Execute steps in order, following Loop jumps; block failures become data (``file``: the spec
    file, named by an error that stops the pipeline).

    Consecutive steps whose blocks declare ``concurrent = True`` (LLMJudge) and that do not read
    each other's outputs run at once, so several judge calls in one test overlap.
    """
    result = PipelineResult() if into is None else into
    loops: dict[int, int] = {}
    index = 0
    limit = ctx.settings.max_loop_iterations
    while index < len(steps) and result.fatal is None:
        end = concurrent_run_end(steps, index, ctx.resolver.context)
        if end > index + 1:
            await _run_at_once(steps, index, end, ctx, result, loops, file)
            index = end
            continue
        step = steps[index]
        output = await _run_alone(steps, index, ctx, result, loops, file)
        if step.checks and (index in result.unavailable or not await _gate(step, ctx, result)):
            break
        index = await _next_index(steps, index, output, loops, limit, ctx.bus)
    return result


async def _run_at_once(
    steps: Sequence[Step],
    index: int,
    end: int,
    ctx: StepContext,
    result: PipelineResult,
    loops: dict[int, int],
    file: str,
) -> None:
    """Steps ``index``..``end`` (concurrent, none reading another's output) at once, recorded in order."""
    outcomes = await asyncio.gather(*(timed_step(step, ctx) for step in steps[index:end]))
    for offset, outcome in enumerate(outcomes):
        _record(result, steps, index + offset, outcome, loops.get(index + offset, 0), ctx.bus, file)


async def _run_alone(
    steps: Sequence[Step],
    index: int,
    ctx: StepContext,
    result: PipelineResult,
    loops: dict[int, int],
    file: str,
) -> JSONValue:
    """Step ``index`` run and recorded (the result names it while it runs); its output."""
    result.running = index
    outcome = await timed_step(steps[index], ctx)
    result.running = None
    _record(result, steps, index, outcome, loops.get(index, 0), ctx.bus, file)
    return outcome[1]


async def _next_index(
    steps: Sequence[Step], index: int, output: JSONValue, loops: dict[int, int], limit: int, bus: DataBus
) -> int:
    """The next step: the one a Loop jumps back to (after its ``_delayMs``), else the one after."""
    jump = _jump(steps, index, output, loops, limit, bus)
    if jump is None:
        return index + 1
    delay = output.get("_delayMs") if isinstance(output, dict) else None
    if isinstance(delay, (int, float)) and delay > 0:
        await asyncio.sleep(delay / 1000)
    return jump


async def _gate(step: Step, ctx: StepContext, result: PipelineResult) -> bool:
    """Evaluate a step's gate checks; False (stop the pipeline) when one did not pass."""
    checked = await evaluate_checks(step.checks, ctx.bus, ctx.run_context, set())
    result.gates.add(checked)
    return not checked.failures and not checked.errors


def _jump(
    steps: Sequence[Step], index: int, output: JSONValue, loops: dict[int, int], limit: int, bus: DataBus
) -> int | None:
    if not (isinstance(output, Mapping) and output.get("_shouldLoop") is True):
        return None
    target = _loop_target(steps, output.get("_loopTo"), index)
    if target is None:
        return None
    max_runs = min(int(output.get("_maxLoops") or 10), limit)
    done = loops.get(index, 0)
    if done + 1 >= max_runs:
        return None
    loops[index] = done + 1
    bus.set(f"_loopCount:{steps[target].id}", done + 1)
    return target


async def evaluate_checks(
    checks: Sequence[Check],
    bus: DataBus,
    run_context: RunContext,
    skip_slots: set[str],
    causes: Mapping[str, tuple[str, str]] | None = None,
) -> Checked:
    """Failures, errors, not-evaluated reasons and LLM verdicts from a case's checks; ``causes``
    (slot -> the error of the step that wrote it) are given to the failures of checks reading them."""
    out = Checked()
    results = await _check_results(checks, bus, run_context, skip_slots, out.skipped)
    known = causes or {}
    for check, res in results:
        _give_causes(res.failures, sorted(check.reads & known.keys()), known)
        out.failures.extend(res.failures)
        if res.error:
            out.errors.append(res.error)
        if res.skipped:
            out.skipped.append(res.skipped)
        out.evidence += res.evidence
    return out


async def _check_results(
    checks: Sequence[Check], bus: DataBus, run_context: RunContext, skip_slots: set[str], skipped: list[str]
) -> list[tuple[Check, CheckResult]]:
    """Each check's result (judged ones overlapping), but for those reading a slot in ``skip_slots``
    (added to ``skipped``): synchronous checks first, in order, then the others in order."""
    results: list[tuple[Check, CheckResult]] = []
    pending: list[Coroutine[object, None, CheckResult]] = []
    waiting: list[Check] = []
    for check in checks:
        if skip_slots and check.reads & skip_slots:
            skipped.append(check.describe())
            continue
        evaluate_sync = getattr(check, "evaluate_sync", None)
        if evaluate_sync:
            results.append((check, evaluate_sync(bus)))
        else:
            pending.append(check.evaluate(bus, run_context))
            waiting.append(check)
    if pending:  # judged checks call an LLM: let them overlap
        results.extend(zip(waiting, await asyncio.gather(*pending)))
    return results


def _give_causes(failures: list[Failure], read: list[str], known: Mapping[str, tuple[str, str]]) -> None:
    """Name the error of the step behind each failure's slots (``known``: slot -> (step id, its error))."""
    for failure in failures:  # a message that already tells the step's error needs no cause
        cause = "; ".join(known[slot][1] for slot in read if known[slot][0] not in failure.message)
        failure.cause = failure.cause or cause or None


def _unobserved(steps: Sequence[Step], pipeline: PipelineResult, checks: Sequence[Check]) -> list[Failure]:
    read: set[str] = set()
    for check in checks:
        read |= check.reads
    failures = []
    for index, message in pipeline.errors.items():
        step = steps[index]
        if not set(output_slots(step.output, step.id)) & read:
            failures.append(
                Failure(
                    check=f"block {step.id}",
                    message=f"block '{step.id}' ({step.block}) failed and no assertion checks its output: {message}",
                    line=step.line,
                )
            )
    return failures


async def run_case(
    case: Case,
    run_context: RunContext,
    context: Mapping[str, JSONValue],
    parent: DataBus | None = None,
    repeat: int = 0,
) -> Verdict:
    """Run one case once (``repeat`` is this run's index among repetitions) and judge it."""
    redactor = run_context.redactor
    with masking(redactor.text if redactor is not None else None):  # messages shortened: masked first
        return await _run_case(case, run_context, context, parent, repeat)


async def _run_case(
    case: Case,
    run_context: RunContext,
    context: Mapping[str, JSONValue],
    parent: DataBus | None,
    repeat: int,
) -> Verdict:
    start = time.perf_counter()
    bus = DataBus(parent)
    ctx = StepContext(
        run_context,
        bus,
        Resolver(bus, context, run_context.env, run_context.secret_env),
        repeat,
        uuid.uuid4().hex,
    )
    pipeline = PipelineResult()
    # with the OTLP receiver on, the execution's requests carry its trace id (docs/traces.md)
    traced = tracing(ctx.execution_id) if run_context.spans is not None else contextlib.nullcontext()
    with traced:
        try:
            pipeline = await _run_steps(case, ctx, pipeline)
        except asyncio.TimeoutError:
            return _timed_out(case, pipeline, start)
        finally:
            if case.cleanup:
                pipeline.trace.extend((await run_pipeline(case.cleanup, ctx, file=case.file)).trace)
    if pipeline.fatal is not None:  # an LLM failure is never a verdict, but a failure not depending on it is
        return _fatal_verdict(case, pipeline, bus, start)
    return await _judged(case, pipeline, bus, run_context, start)


async def _run_steps(case: Case, ctx: StepContext, pipeline: PipelineResult) -> PipelineResult:
    if case.timeout_s:  # the pipeline so far is kept: a timeout reports what the steps did
        return await asyncio.wait_for(run_pipeline(case.steps, ctx, pipeline, case.file), case.timeout_s)
    return await run_pipeline(case.steps, ctx, file=case.file)


def _timed_out(case: Case, pipeline: PipelineResult, start: float) -> Verdict:
    running = case.steps[pipeline.running].id if pipeline.running is not None else None
    return Verdict(
        Outcome.ERROR,
        error=f"timed out after {case.timeout_s:g} s" + (f" while step '{running}' ran" if running else ""),
        trace=pipeline.trace,
        duration_ms=_ms(start),
    )


def _fatal_verdict(case: Case, pipeline: PipelineResult, bus: DataBus, start: float) -> Verdict:
    """An LLM judge failed: ERROR, unless a check that does not depend on it failed."""
    failures = pipeline.gates.failures + judge_free_failures(
        case.steps, pipeline.trace, pipeline.fatal_steps, case.checks, bus
    )
    return Verdict(
        Outcome.FAILED if failures else Outcome.ERROR,
        failures,
        trace=pipeline.trace,
        error=pipeline.fatal,
        duration_ms=_ms(start),
        bus=bus.snapshot(),
    )


async def _judged(
    case: Case, pipeline: PipelineResult, bus: DataBus, run_context: RunContext, start: float
) -> Verdict:
    """The verdict of a pipeline that ran: its checks (but those reading what an unavailable judge did
    not write) and its steps' errors no check reads."""
    checked = pipeline.gates
    checked.add(
        await evaluate_checks(
            case.checks,
            bus,
            run_context,
            _unjudged_slots(case, pipeline),
            failed_outputs(case.steps, pipeline.errors),
        )
    )
    failures, errors, skipped = checked.failures, checked.errors, checked.skipped
    gates = [check for step in case.steps for check in step.checks]
    failures.extend(_unobserved(case.steps, pipeline, [*case.checks, *gates]))
    verdict = Verdict(
        Outcome.PASSED,
        failures,
        pipeline.trace,
        duration_ms=_ms(start),
        bus=bus.snapshot(),
        evidence=checked.evidence,
    )
    if failures:
        verdict.outcome = Outcome.FAILED
    elif errors:
        verdict.outcome, verdict.error = Outcome.ERROR, "\n".join(errors)
    elif pipeline.unavailable or skipped:
        reasons = list(dict.fromkeys(pipeline.unavailable.values())) or skipped
        verdict.outcome, verdict.skip_reason = Outcome.SKIPPED, "; ".join(reasons)
    return verdict


def _unjudged_slots(case: Case, pipeline: PipelineResult) -> set[str]:
    """The slots of the steps whose judge was unavailable: the checks reading them are not evaluated."""
    skip_slots: set[str] = set()
    for index in pipeline.unavailable:
        skip_slots |= set(output_slots(case.steps[index].output, case.steps[index].id))
    return skip_slots


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def aggregate(runs: list[Verdict], required: int) -> Outcome:
    """highbar's rule: passed >= required -> passed; passed + errored >= required -> error."""
    passed = sum(1 for r in runs if r.outcome is Outcome.PASSED)
    errored = sum(1 for r in runs if r.outcome is Outcome.ERROR)
    if passed >= required:
        return Outcome.PASSED
    if all(r.outcome is Outcome.SKIPPED for r in runs):
        return Outcome.SKIPPED
    if passed + errored >= required:
        return Outcome.ERROR
    return Outcome.FAILED


def combine(outcomes: Sequence[Outcome]) -> Outcome:
    """Across phrasings: any failed -> failed, else any error -> error, else passed."""
    if Outcome.FAILED in outcomes:
        return Outcome.FAILED
    if Outcome.ERROR in outcomes:
        return Outcome.ERROR
    if outcomes and all(o is Outcome.SKIPPED for o in outcomes):
        return Outcome.SKIPPED
    return Outcome.PASSED
