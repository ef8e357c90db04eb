"""Loop: asks the engine to jump back to an earlier step while a condition holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Final

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..checks.operators import OPERATORS, apply, validate_operand
from ..errors import clip, did_you_mean
from ..json_types import JSONObject, JSONValue
from .base import Block, whole_number_at_least_zero

if TYPE_CHECKING:
    from ..step import StepContext

_NOT_WRITTEN: Final = object()
"""A condition's ``value`` left out (``is...`` operators then need none)."""


class LoopCondition(BaseModel):
    """``{path, operator, value}``: loop while the DataBus value at ``path`` passes ``operator``."""

    model_config = ConfigDict(extra="allow", frozen=True)

    path: JSONValue = Field(default=None, validate_default=True)
    operator: JSONValue = Field(default=None, validate_default=True)
    value: JSONValue = Field(default=_NOT_WRITTEN, validate_default=True)

    @model_validator(mode="wrap")
    @classmethod
    def _unknown_keys_first(
        cls, data: JSONValue, handler: ModelWrapValidatorHandler[LoopCondition]
    ) -> LoopCondition:
        """Each unknown key is a problem at its own place (``condition.pth``) with a did-you-mean,
        reported before what is wrong with the keys it knows."""
        errors = _unknown_keys(data, list(cls.model_fields))
        if not errors:
            return handler(data)
        try:
            handler({key: value for key, value in data.items() if key in cls.model_fields})
        except ValidationError as exc:
            errors += [
                _error(e["msg"].removeprefix("Value error, "), e["loc"], e["input"]) for e in exc.errors()
            ]
        raise ValidationError.from_exception_data(cls.__name__, errors)

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, path: JSONValue) -> JSONValue:
        if not isinstance(path, str):
            raise ValueError("needs a DataBus path string")
        return path

    @field_validator("operator", mode="before")
    @classmethod
    def _operator(cls, op: JSONValue) -> JSONValue:
        if not isinstance(op, str) or op not in OPERATORS:
            hint = did_you_mean(op, OPERATORS) if isinstance(op, str) else ""
            raise ValueError(f"unknown operator {clip(repr(op))}{hint}")
        return op

    @field_validator("value", mode="before")
    @classmethod
    def _operand(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        """The operand suits a known operator (an ``is...`` operator written without one takes none)."""
        op = info.data.get("operator")
        if op is None or (value is _NOT_WRITTEN and op.startswith("is")):
            return value
        operand = True if value is _NOT_WRITTEN else value
        try:
            reason = validate_operand(op, operand)
        except (OverflowError, RecursionError, ValueError) as exc:  # patterns re rejects oddly
            why = "groups nested too deeply" if isinstance(exc, RecursionError) else exc
            reason = f"'{op}' has an invalid regular expression {clip(repr(operand))}: {why}"
        if reason:
            raise ValueError(reason)
        return value


def _unknown_keys(data: JSONValue, known: list[str]) -> list[InitErrorDetails]:
    """A problem for each key of a condition object that is not one of ``known``, with a did-you-mean
    (an empty key has no path of its own: it is reported at the condition)."""
    if not isinstance(data, dict):
        return []
    return [
        _error(f"unknown key '{clip(key)}'{did_you_mean(key, known)}", (key,) if key else (), value)
        for key, value in data.items()
        if key not in known
    ]


def _error(message: str, loc: tuple[str | int, ...], given: JSONValue) -> InitErrorDetails:
    return InitErrorDetails(
        type=PydanticCustomError("value_error", "{message}", {"message": message}), loc=loc, input=given
    )


def _an_object(cond: JSONValue) -> JSONValue:
    if cond is not None and not isinstance(cond, dict):
        raise ValueError("must be an object {path, operator, value}")
    return cond


def _step_reference(target: JSONValue) -> JSONValue:
    if target is None:
        raise ValueError("Loop needs 'target': the id or index of an earlier step")
    if isinstance(target, bool) or not isinstance(target, (str, int)):
        raise ValueError(f"must be a step id or index, got {clip(repr(target))}")
    return target


class LoopConfig(BaseModel):
    """A Loop step's config; whether ``target`` names an earlier step is the loader's to check."""

    model_config = ConfigDict(extra="allow", frozen=True)

    target: Annotated[JSONValue, BeforeValidator(_step_reference)] = Field(
        default=None, validate_default=True
    )
    maxIterations: Annotated[JSONValue, BeforeValidator(whole_number_at_least_zero)] = None
    delayMs: Annotated[JSONValue, BeforeValidator(whole_number_at_least_zero)] = None
    condition: Annotated[LoopCondition | None, BeforeValidator(_an_object)] = None


class Loop(Block):
    name = "Loop"
    concurrency_safe = True
    config_model = LoopConfig
    config_keys = frozenset(LoopConfig.model_fields)
    input_keys = None  # its input passes through to its output, any keys

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
