"""Runs one step of a pipeline: its block on its resolved inputs, timed, with the evidence it emitted;
a block's failure is data (its error and output), never an exception."""

from __future__ import annotations

import asyncio
import time

from ..blocks.base import Block, BlockError
from ..blocks.registry import get_block
from ..errors import ReferenceError_
from ..evidence import Evidence, Note, collecting
from ..json_types import JSONValue
from ..model import Step, StepTrace
from ..resolve import Resolver
from ..step import JudgeError, JudgeUnavailable, StepContext
from .inputs import resolve_inputs

StepOutcome = tuple[JSONValue, JSONValue, str | None, str | None, float, list[Evidence]]
"""What a timed step gave: inputs, output, error, status, milliseconds, emitted evidence."""

UNAVAILABLE = "unavailable"
FATAL = "fatal"
UNSET = "unset"
"""The step read an environment variable that is not set: the run's set-up, not the agent, is wrong,
so the test ERRORs with that one line (its checks would only repeat it as "Expected undefined")."""


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
    except ReferenceError_ as exc:
        message = f"cannot resolve input: {exc}"
        return _shown(recorded, inputs), {"error": message}, message, UNSET if exc.unset_env else None
    output, error, status = await _process(block, inputs, ctx)
    return _shown(recorded, inputs), output, error, status


async def _process(
    block: Block, inputs: JSONValue, ctx: StepContext
) -> tuple[JSONValue, str | None, str | None]:
    """The block's output, error and status for ``inputs``: what it raised becomes its error."""
    try:
        result = await block.process(inputs, ctx)
    except (BlockError, ReferenceError_) as exc:
        unset = UNSET if isinstance(exc, ReferenceError_) and exc.unset_env else None
        return block.error_output(inputs, str(exc)), str(exc), unset
    except JudgeUnavailable as exc:  # a block may attach what it did so far as ``exc.output``
        return getattr(exc, "output", None), str(exc), UNAVAILABLE
    except JudgeError as exc:
        return getattr(exc, "output", None), str(exc), FATAL
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:  # a block's bug is reported as its error, not a crash  # noqa: BLE001
        message = f"{type(exc).__name__}: {exc}"
        return block.error_output(inputs, message), message, None
    error = result.get("error") if isinstance(result, dict) and isinstance(result.get("error"), str) else None
    return result, error, None


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


async def timed_step(step: Step, ctx: StepContext) -> StepOutcome:
    start = time.perf_counter()
    with collecting() as emitted:
        inputs, output, error, status = await run_step(step, ctx)
    return inputs, output, error, status, (time.perf_counter() - start) * 1000, emitted


def with_evidence(trace: StepTrace, emitted: list[Evidence]) -> StepTrace:
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
