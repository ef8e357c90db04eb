"""Runs a Case: steps over a DataBus (with Loop jumps), then checks, giving a Verdict."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field

from ..blocks.base import Block, BlockError
from ..blocks.registry import get_block
from ..databus import DataBus
from ..errors import Problem, ReferenceError_
from ..evidence import Evidence, Note, collecting
from ..json_types import JSONValue
from ..model import Case, Check, CheckResult, Failure, Outcome, Step, StepTrace, Verdict
from ..resolve import Resolver
from ..run_context import LLMUnavailable, RunContext
from ..shown import masking
from ..step import JudgeError, JudgeUnavailable, StepContext
from ..trace_context import tracing
from .batching import concurrent_run_end
from .inputs import failed_outputs, output_slots, resolve_inputs, write_outputs
from .judge_free import judge_free_failures

_Outcome = tuple[JSONValue, JSONValue, str | None, str | None, float, list[Evidence]]
"""What a timed step gave: inputs, output, error, status, milliseconds, emitted evidence."""

UNAVAILABLE = "unavailable"
FATAL = "fatal"
UNSET = "unset"
"""The step read an environment variable that is not set: the run's set-up, not the agent, is wrong,
so the test ERRORs with that one line (its checks would only repeat it as "Expected undefined")."""


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


async def run_step(step: Step, ctx: StepContext) -> tuple[JSONValue, JSONValue, str | None, str | None]:
    """Run one step; returns (inputs, output, error, status). Errors are data.

    ``status`` is None, ``UNAVAILABLE`` (no judge configured) or ``FATAL`` (an LLM judge failure:
    the pipeline stops and the test is an ERROR).
    """
    cls = get_block(step.block)
    if cls is None:
        raise BlockError(f"unknown block '{step.block}'")
    inputs: JSONValue = step.input
    recorded: JSONValue = None
    try:
        inputs = resolve_inputs(step.input, ctx.resolver, cls.primary_input)
        recorded = _recorded(step, ctx.resolver, cls.primary_input)
        config = ctx.resolver.resolve(step.config) if step.config and cls.resolve_config else step.config
        block: Block = cls(config)
        if step.compiled is not None:
            block.compiled = step.compiled
        try:
            result = await block.process(inputs, ctx)
        except (BlockError, ReferenceError_) as exc:
            unset = UNSET if isinstance(exc, ReferenceError_) and exc.unset_env else None
            return _shown(recorded, inputs), block.error_output(inputs, str(exc)), str(exc), unset
        except JudgeUnavailable as exc:  # a block may attach what it did so far as ``exc.output``
            return _shown(recorded, inputs), getattr(exc, "output", None), str(exc), UNAVAILABLE
        except JudgeError as exc:
            return _shown(recorded, inputs), getattr(exc, "output", None), str(exc), FATAL
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a block's bug is reported as its error, not a crash  # noqa: BLE001
            message = f"{type(exc).__name__}: {exc}"
            return _shown(recorded, inputs), block.error_output(inputs, message), message, None
    except ReferenceError_ as exc:
        message = f"cannot resolve input: {exc}"
        return _shown(recorded, inputs), {"error": message}, message, UNSET if exc.unset_env else None
    error = result.get("error") if isinstance(result, dict) and isinstance(result.get("error"), str) else None
    return _shown(recorded, inputs), result, error, None


def _recorded(step: Step, resolver: Resolver, primary: str) -> JSONValue:
    """The step's input as its trace records it: a secret's ``${env.NAME}`` left as written (the block
    got the value); None when the input reads no secret (the resolved input is what is recorded)."""
    if not resolver.reads_secrets(step.input):
        return None
    shown = resolver.shown()
    try:
        return resolve_inputs(step.input, shown, primary) if shown is not None else step.input
    except ReferenceError_:
        return step.input


def _shown(recorded: JSONValue, inputs: JSONValue) -> JSONValue:
    return inputs if recorded is None else recorded


def _loop_target(steps: Sequence[Step], target: JSONValue, current: int) -> int | None:
    if isinstance(target, int) and not isinstance(target, bool):
        return target if 0 <= target < current else None
    for i in range(current - 1, -1, -1):
        if steps[i].id == target:
            return i
    return None


async def _timed(step: Step, ctx: StepContext) -> _Outcome:
    start = time.perf_counter()
    with collecting() as emitted:
        inputs, output, error, status = await run_step(step, ctx)
    return inputs, output, error, status, (time.perf_counter() - start) * 1000, emitted


def _with_evidence(trace: StepTrace, emitted: list[Evidence]) -> StepTrace:
    """``trace`` with what its block emitted while running and what ``Block.evidence_of`` reads from it."""
    cls = get_block(trace.step.block)
    trace.evidence = list(emitted)
    if cls is not None:
        trace.whole_story = cls.whole_story
        try:
            trace.evidence += cls.evidence_of(trace)
        except Exception as exc:  # noqa: BLE001  a block's bug here must not lose the verdict
            trace.evidence.append(
                Note(
                    f"{trace.step.id}: no evidence",
                    text=f"{trace.step.block}.evidence_of failed: {type(exc).__name__}: {exc}",
                )
            )
    return trace


def _record(
    result: PipelineResult,
    steps: Sequence[Step],
    index: int,
    outcome: _Outcome,
    iteration: int,
    bus: DataBus,
    file: str,
) -> None:
    inputs, output, error, status, elapsed, emitted = outcome
    step = steps[index]
    result.trace.append(_with_evidence(StepTrace(step, inputs, output, elapsed, error, iteration), emitted))
    result.errors.pop(index, None)
    result.unavailable.pop(index, None)
    if status == UNAVAILABLE:
        result.unavailable[index] = error or str(
            LLMUnavailable("judge", error=False)
        )  # (a bare JudgeUnavailable)
    elif status in (FATAL, UNSET):
        if status == FATAL:
            where = f", line {step.line}" if step.line else ""
            message = f"LLM judge error in step '{step.id}' ({step.block}{where}): {error}"
        else:  # the one line of a spec problem, ``file:line: place: message``
            problem = Problem(step.place or f"step '{step.id}'", error or "", step.line)
            message = problem.render(file) if file else f"{problem.place}: {problem.message}"
        result.errors[index] = message
        result.fatal = result.fatal or message
        result.fatal_steps.add(index)
    elif error is not None:
        result.errors[index] = error
    if output is not None:
        write_outputs(bus, step.output, step.id, output)


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
            outcomes = await asyncio.gather(*(_timed(step, ctx) for step in steps[index:end]))
            for offset, outcome in enumerate(outcomes):
                _record(result, steps, index + offset, outcome, loops.get(index + offset, 0), ctx.bus, file)
            index = end
            continue
        step = steps[index]
        result.running = index
        outcome = await _timed(step, ctx)
        result.running = None
        _record(result, steps, index, outcome, loops.get(index, 0), ctx.bus, file)
        if step.checks and (index in result.unavailable or not await _gate(step, ctx, result)):
            break
        output = outcome[1]
        jump = _jump(steps, index, output, loops, limit, ctx.bus)
        if jump is None:
            index += 1
            continue
        delay = output.get("_delayMs") if isinstance(output, dict) else None
        if isinstance(delay, (int, float)) and delay > 0:
            await asyncio.sleep(delay / 1000)
        index = jump
    return result


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
    results: list[tuple[Check, CheckResult]] = []
    pending: list[Coroutine[object, None, CheckResult]] = []
    waiting: list[Check] = []
    for check in checks:
        if skip_slots and check.reads & skip_slots:
            out.skipped.append(check.describe())
            continue
        evaluate_sync = getattr(check, "evaluate_sync", None)
        if evaluate_sync:
            results.append((check, evaluate_sync(bus)))
        else:
            pending.append(check.evaluate(bus, run_context))
            waiting.append(check)
    if pending:  # judged checks call an LLM: let them overlap
        results.extend(zip(waiting, await asyncio.gather(*pending)))
    known = causes or {}
    for check, res in results:
        read = sorted(check.reads & known.keys())
        for failure in res.failures:  # a message that already tells the step's error needs no cause
            cause = "; ".join(known[slot][1] for slot in read if known[slot][0] not in failure.message)
            failure.cause = failure.cause or cause or None
        out.failures.extend(res.failures)
        if res.error:
            out.errors.append(res.error)
        if res.skipped:
            out.skipped.append(res.skipped)
        out.evidence += res.evidence
    return out


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
            if case.timeout_s:  # the pipeline so far is kept: a timeout reports what the steps did
                pipeline = await asyncio.wait_for(
                    run_pipeline(case.steps, ctx, pipeline, case.file), case.timeout_s
                )
            else:
                pipeline = await run_pipeline(case.steps, ctx, file=case.file)
        except asyncio.TimeoutError:
            running = case.steps[pipeline.running].id if pipeline.running is not None else None
            return Verdict(
                Outcome.ERROR,
                error=f"timed out after {case.timeout_s:g} s"
                + (f" while step '{running}' ran" if running else ""),
                trace=pipeline.trace,
                duration_ms=_ms(start),
            )
        finally:
            if case.cleanup:
                pipeline.trace.extend((await run_pipeline(case.cleanup, ctx, file=case.file)).trace)
    if pipeline.fatal is not None:  # an LLM failure is never a verdict, but a failure not depending on it is
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
    skip_slots: set[str] = set()
    for index in pipeline.unavailable:
        skip_slots |= set(output_slots(case.steps[index].output, case.steps[index].id))
    checked = pipeline.gates
    checked.add(
        await evaluate_checks(
            case.checks, bus, run_context, skip_slots, failed_outputs(case.steps, pipeline.errors)
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
