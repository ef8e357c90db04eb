"""Block input and output forms (string, from/as, object; slot, mapping, block id)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..databus import MISSING, DataBus
from ..json_types import JSONObject, JSONValue
from ..model import Step
from ..resolve import Resolver


def is_from_as(value: JSONValue) -> bool:
    return isinstance(value, dict) and set(value) == {"from", "as"} and isinstance(value["from"], str)


def resolve_inputs(spec: JSONValue, resolver: Resolver, primary: str) -> JSONObject:
    """Turn a step's ``input`` into the dict a block receives.

    ``"${x}"`` -> ``{"body": x}`` (and under the block's primary input name);
    ``{"from": "a.b", "as": "text"}`` -> ``{"text": value of a.b}``; any other
    object is resolved deeply. Values that name nothing are left out.
    """
    if spec is None:
        return {}
    if isinstance(spec, str):
        return _string_input(spec, resolver, primary)
    if is_from_as(spec):
        return _from_as_input(spec, resolver)
    if isinstance(spec, dict):
        resolved = resolver.resolve(spec)
        return {k: v for k, v in resolved.items() if v is not MISSING}
    return {"body": resolver.resolve(spec)}


def _string_input(spec: str, resolver: Resolver, primary: str) -> JSONObject:
    """``"${x}"`` -> ``{"body": x}``, also under the block's primary input name."""
    value = resolver.resolve(spec)
    if value is MISSING:
        return {}
    return {"body": value} if primary == "body" else {"body": value, primary: value}


def _from_as_input(spec: JSONObject, resolver: Resolver) -> JSONObject:
    """``{"from": "a.b", "as": "text"}`` -> ``{"text": value of a.b}`` (``${a.b}`` also accepted)."""
    source = str(spec["from"]).strip()
    if source.startswith("${") and source.endswith("}"):
        source = source[2:-1]
    value = resolver.lookup(source)
    return {} if value is MISSING else {str(spec["as"]): value}


def output_slots(output: str | dict[str, str] | None, block_id: str) -> list[str]:
    """The DataBus slots a step writes to."""
    if output is None:
        return [block_id]
    if isinstance(output, str):
        return [output]
    return list(output.values())


def failed_outputs(steps: Sequence[Step], errors: Mapping[int, str]) -> dict[str, tuple[str, str]]:
    """Each slot a failed step (``errors``: step index -> its error) writes -> the error, and the
    error as the headline of a failure that reads the slot names it."""
    causes: dict[str, tuple[str, str]] = {}
    for index, message in errors.items():
        step = steps[index]
        named = f" '{step.id}'" if step.id != step.block else ""
        line = f" (line {step.line})" if step.line else ""
        for slot in output_slots(step.output, step.id):
            causes[slot] = (
                message,
                f"the {step.block} step{named}{line} that writes '{slot}' failed: {message}",
            )
    return causes


def write_outputs(
    bus: DataBus, output: str | dict[str, str] | None, block_id: str, result: JSONValue
) -> None:
    """Store a block's result: whole under a slot, or field by field through a mapping."""
    if isinstance(output, dict):
        if isinstance(result, dict):
            for field, slot in output.items():
                if field in result:
                    bus.set(slot, result[field])
        return
    bus.set(output if isinstance(output, str) else block_id, result)
