"""Which consecutive pipeline steps, and which runs of a repeated case, may run at the same time.

A block opts in with ``concurrent = True`` (LLMJudge: it only reads its inputs and calls the
judge). A run of such steps is batched while no step reads a slot an earlier step of the run
writes, following ``${...}`` references, ``from``/``as`` inputs and context values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..blocks.registry import get_block
from ..databus import split_path
from ..json_types import JSONValue
from ..model import Step, Verdict
from ..resolve import REF
from .inputs import is_from_as, output_slots


def concurrent_run_end(steps: Sequence[Step], index: int, context: Mapping[str, JSONValue]) -> int:
    """End of the run of concurrency-safe steps from ``index`` that do not read each other's outputs."""
    if not _concurrent(steps[index]):
        return index + 1
    written = set(output_slots(steps[index].output, steps[index].id))
    end = index + 1
    while end < len(steps) and _concurrent(steps[end]):
        step = steps[end]
        reads = _references(step.input, context) | _references(step.config, context)
        if reads & written:
            break
        written |= set(output_slots(step.output, step.id))
        end += 1
    return end


def runs_may_overlap(*verdicts: Verdict) -> bool:
    """Whether the other runs of a repeated case may run at once, judging by its first runs' verdicts.

    A step output carrying ``_runs_may_overlap: false`` (an agent turn whose trace records could not
    all be attributed to their execution) makes the runs go one after another: overlapping runs
    would mix their untagged records and change the verdict.
    """
    from ..agents.correlate import RUNS_MAY_OVERLAP  # (a session whose agents are not traced needs none)

    return not any(
        isinstance(value, Mapping) and value.get(RUNS_MAY_OVERLAP) is False
        for verdict in verdicts
        for value in (getattr(verdict, "bus", None) or {}).values()
    )


def _concurrent(step: Step) -> bool:
    cls = get_block(step.block)
    return bool(cls is not None and getattr(cls, "concurrent", False))


def _references(value: JSONValue, context: Mapping[str, JSONValue], seen: set[str] | None = None) -> set[str]:
    """First path segments of every reference in ``value`` (context values followed)."""
    seen = set() if seen is None else seen
    heads: set[str] = set()
    if isinstance(value, str):
        heads |= _string_references(value, context, seen)
    elif isinstance(value, dict):
        if is_from_as(value):
            heads |= _references(
                "${" + value["from"].strip().removeprefix("${").removesuffix("}") + "}", context, seen
            )
        for item in value.values():
            heads |= _references(item, context, seen)
    elif isinstance(value, list):
        for item in value:
            heads |= _references(item, context, seen)
    return heads


def _string_references(value: str, context: Mapping[str, JSONValue], seen: set[str]) -> set[str]:
    """First path segments of the ``${...}`` references in a string, and of the context values they name
    (each context value followed once)."""
    heads: set[str] = set()
    for name in (m.group(1) for m in REF.finditer(value)):
        parts = split_path(name.strip())
        head = parts[0] if parts and isinstance(parts[0], str) else None
        if head is None:
            continue
        heads.add(head)
        if head in context and head not in seen:
            seen.add(head)
            heads |= _references(context[head], context, seen)
    return heads
