"""Loop: asks the engine to jump back to an earlier step while a condition holds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..checks.operators import OPERATORS, apply, validate_operand
from ..errors import clip, did_you_mean
from ..json_types import JSONObject, JSONValue
from .base import Block

if TYPE_CHECKING:
    from ..step import StepContext


class Loop(Block):
    name = "Loop"
    concurrency_safe = True
    config_keys = frozenset({"target", "maxIterations", "condition", "delayMs"})
    input_keys = None  # its input passes through to its output, any keys

    @classmethod
    def validate_config(cls, config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        target = config.get("target")
        if target is None:
            problems.append(("target", "Loop needs 'target': the id or index of an earlier step"))
        elif isinstance(target, bool) or not isinstance(target, (str, int)):
            problems.append(("target", f"must be a step id or index, got {clip(repr(target))}"))
        for key in ("maxIterations", "delayMs"):
            value = config.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                problems.append((key, f"must be a whole number >= 0, got {clip(repr(value))}"))
        cond = config.get("condition")
        if cond is not None:
            problems.extend(_validate_condition(cond))
        return problems

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        cond = self.config.get("condition")
        should = True
        if cond:
            actual = ctx.bus.get(cond["path"])
            should = apply(cond["operator"], actual, cond.get("value", True)) is None
        out = dict(inputs)
        out["_shouldLoop"] = should
        if should:
            out["_loopTo"] = self.config.get("target")
            out["_maxLoops"] = self.config.get("maxIterations", 10)
            out["_delayMs"] = self.config.get("delayMs", 0)
        return out


def _validate_condition(cond: JSONValue) -> list[tuple[str, str]]:
    if not isinstance(cond, dict):
        return [("condition", "must be an object {path, operator, value}")]
    problems = []
    for key in cond:
        if key not in ("path", "operator", "value"):
            problems.append(
                (
                    f"condition.{key}",
                    f"unknown key '{clip(key)}'{did_you_mean(key, ['path', 'operator', 'value'])}",
                )
            )
    if not isinstance(cond.get("path"), str):
        problems.append(("condition.path", "needs a DataBus path string"))
    op = cond.get("operator")
    if not isinstance(op, str) or op not in OPERATORS:
        hint = did_you_mean(op, OPERATORS) if isinstance(op, str) else ""
        problems.append(("condition.operator", f"unknown operator {clip(repr(op))}{hint}"))
    elif "value" in cond or not op.startswith("is"):
        try:
            reason = validate_operand(op, cond.get("value", True))
        except (OverflowError, RecursionError, ValueError) as exc:  # patterns re rejects oddly
            why = "groups nested too deeply" if isinstance(exc, RecursionError) else exc
            reason = f"'{op}' has an invalid regular expression {clip(repr(cond.get('value')))}: {why}"
        if reason:
            problems.append(("condition.value", reason))
    return problems
