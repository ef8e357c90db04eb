"""ValidateContent: text against contains / notContains / length / regex rules (non-strings as JSON text)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo, field_validator

from ..checks.operators import compile_regex
from ..checks.text import json_text
from ..errors import clip
from ..json_types import JSONObject, JSONValue
from .base import Block, whole_number_at_least_zero

if TYPE_CHECKING:
    from ..step import StepContext


def _as_list(value: JSONValue) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _texts(value: JSONValue) -> JSONValue:
    if value is not None and not isinstance(value, (str, list)):
        raise ValueError(f"must be a string or a list of strings, got {clip(repr(value))}")
    return value


class ValidateContentConfig(BaseModel):
    """A ValidateContent step's config; keys it does not know are the loader's to name (``config_keys``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    minLength: Annotated[JSONValue, BeforeValidator(whole_number_at_least_zero)] = None
    maxLength: Annotated[JSONValue, BeforeValidator(whole_number_at_least_zero)] = None
    contains: Annotated[JSONValue, BeforeValidator(_texts)] = None
    notContains: Annotated[JSONValue, BeforeValidator(_texts)] = None
    matchFlags: JSONValue = None
    matches: JSONValue = None

    @field_validator("matches", mode="before")
    @classmethod
    def _regex(cls, pattern: JSONValue, info: ValidationInfo) -> JSONValue:
        """A pattern compiles with its flags (a ``${}`` reference is compiled when the step runs)."""
        if pattern is None:
            return pattern
        if not isinstance(pattern, str):
            raise ValueError(f"must be a regular expression string, got {clip(repr(pattern))}")
        if "${" not in pattern:
            flags = info.data.get("matchFlags")
            try:
                compile_regex(pattern, str(flags if flags is not None else "i"))
            except (re.error, OverflowError, RecursionError) as exc:
                why = "groups nested too deeply" if isinstance(exc, RecursionError) else exc
                raise ValueError(f"invalid regular expression {clip(repr(pattern))}: {why}") from None
        return pattern


class ValidateContent(Block):
    name = "ValidateContent"
    concurrency_safe = True
    primary_input = "text"
    input_keys = frozenset({"text", "body"})
    config_model = ValidateContentConfig
    config_keys = frozenset(ValidateContentConfig.model_fields)

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        text = inputs.get("text", inputs.get("body"))
        if text is None:
            return _result([], ["Missing required input: text"], {"text": False})
        text = json_text(text)  # a number, object or list is read as its JSON text
        failures: list[str] = []
        checks: dict[str, bool] = {}
        for key, ok, failure in _rules(self.config, text):
            checks[key] = ok
            if not ok:
                failures.append(failure)
        return _result([k for k, v in checks.items() if v], failures, checks)


def _rules(cfg: JSONObject, text: str) -> Iterator[tuple[str, bool, str]]:
    """Each configured rule on ``text``, in order: its check's key, whether it holds, the failure."""
    lowered = text.lower()
    for word in _as_list(cfg.get("contains")):
        yield f"contains:{word}", word.lower() in lowered, f"Missing expected content: {word}"
    for word in _as_list(cfg.get("notContains")):
        yield f"notContains:{word}", word.lower() not in lowered, f"Found forbidden content: {word}"
    if cfg.get("minLength") is not None:
        yield "minLength", len(text) >= cfg["minLength"], f"Text too short: {len(text)} < {cfg['minLength']}"
    if cfg.get("maxLength") is not None:
        yield "maxLength", len(text) <= cfg["maxLength"], f"Text too long: {len(text)} > {cfg['maxLength']}"
    if cfg.get("matches") is not None:
        found = compile_regex(cfg["matches"], str(cfg.get("matchFlags", "i"))).search(text)
        yield "matches", found is not None, f"Text doesn't match pattern: {cfg['matches']}"


def _result(passed: list[str], failures: list[str], checks: dict[str, bool]) -> JSONObject:
    total = len(checks)
    score = 1.0 if total == 0 else round((total - len(failures)) / total, 4)
    return {"passed": not failures, "failures": failures, "score": score, "checks": checks}
