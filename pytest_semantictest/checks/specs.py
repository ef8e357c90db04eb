"""What a conversation check is, as users write it: assertions, checkpoints, simulator, attachments.

Pydantic models shared by the Yao format (``formats/yao``) and the conversation blocks' config
validation. Key names follow the Yao V2 design; the names Yao later shipped are accepted as
aliases (``assert`` for ``assertion(s)``, ``value`` for ``pattern``/``name``, an ``agents:`` or
``scripts:`` prefix on ``use``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from ..errors import clip, did_you_mean
from ..json_types import JSONValue
from .regex import user_regex

ASSERTION_TYPES = (
    "equals",
    "contains",
    "not_contains",
    "regex",
    "json_path",
    "type",
    "tool_called",
    "tool_result",
    "script",
    "agent",
)
VALUE_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
MAX_DURATION_S = 24 * 3600.0
"""The longest duration a file may ask for (a larger one is a mistake, and would overflow)."""


def parse_duration(value: JSONValue) -> JSONValue:
    """``"30s"``, ``"2m"``, ``"1m30s"``, ``"500ms"``, ``"1h"`` or a number of seconds -> seconds."""
    if isinstance(value, bool):
        raise ValueError(f"must be a duration like '30s' or '2m', got {value!r}")
    if isinstance(value, (int, float)):
        if not 0 < value <= MAX_DURATION_S:  # also NaN, inf and integers too large for a float
            raise ValueError(f"must be a positive duration of at most 24h, got {clip(repr(value))}")
        return float(value)
    if not isinstance(value, str):
        return value
    text = value.strip().replace(" ", "")
    parts = _DURATION.findall(text)
    if not text or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"must be a duration like '30s', '2m' or '1m30s', got {clip(repr(value))}")
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    seconds = sum(float(n) * scale[u] for n, u in parts)
    if not 0 < seconds <= MAX_DURATION_S:
        raise ValueError(f"must be a positive duration of at most 24h, got {clip(repr(value))}")
    return seconds


Duration = Annotated[float, BeforeValidator(parse_duration, json_schema_input_type=float | str)]


def strip_free_keys(data: JSONValue) -> JSONValue:
    """Drop keys users may add anywhere: ``x-`` extensions and ``$schema``."""
    if isinstance(data, dict):
        return {
            k: v
            for k, v in data.items()
            if not (isinstance(k, str) and (k.startswith("x-") or k == "$schema"))
        }
    return data


def strip_prefix(use: str | None, prefix: str) -> str | None:
    """``agents:workers.validator`` -> ``workers.validator`` (Yao's prefixes are accepted and dropped)."""
    if use is None:
        return None
    return use.removeprefix(prefix)


class StrictSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _free_keys(cls, data: JSONValue) -> JSONValue:
        return strip_free_keys(data)


class AgentOptions(StrictSpec):
    """Options of a helper agent (validator, simulator): Yao's ``context.Options`` subset."""

    connector: str | None = None
    model: str | None = None
    metadata: dict[str, JSONValue] = Field(default_factory=dict)
    skip: dict[str, JSONValue] | None = None


def _both(data: JSONValue, names: tuple[str, str]) -> None:
    if isinstance(data, dict) and all(n in data for n in names):
        raise ValueError(f"give '{names[0]}' or its alias '{names[1]}', not both")


class AssertionSpec(StrictSpec):
    """One assertion on an agent reply (text plus tool calls)."""

    type: str
    value: JSONValue = None
    pattern: str | None = None
    name: str | list[str] | dict[str, JSONValue] | None = None
    path: str | None = None
    tool: str | None = None
    result: JSONValue = None
    use: str | None = None
    script: str | None = None
    options: AgentOptions | None = None
    criteria: str | list[str] | None = None
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    negate: bool = False
    message: str | None = None

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in ASSERTION_TYPES:
            raise ValueError(
                f"unknown assertion type '{clip(value)}'{did_you_mean(value, ASSERTION_TYPES)} "
                f"(types: {', '.join(ASSERTION_TYPES)})"
            )
        return value

    @model_validator(mode="after")
    def _complete(self) -> AssertionSpec:
        problem = _type_problem(self)
        if problem:
            raise ValueError(problem)
        return self

    def given(self, name: str) -> bool:
        return name in self.model_fields_set

    @property
    def operand(self) -> JSONValue:
        """What the assertion compares with: ``pattern``/``name`` or their alias ``value``."""
        if self.type == "regex":
            return self.pattern if self.pattern is not None else self.value
        if self.type == "tool_called":
            return self.name if self.name is not None else self.value
        if self.type == "tool_result":
            if self.tool is not None:
                return {"tool": self.tool, "result": self.result}
            return self.value
        return self.value

    @property
    def callable_ref(self) -> str:
        """``module:function`` of a script assertion."""
        return strip_prefix(self.use or self.script, "scripts:") or ""

    @property
    def validator_use(self) -> str | None:
        """The model, LLM role or Yao agent an agent assertion names (see ``llm.validator.resolve_use``)."""
        from ..llm.validator import pick_use

        model = self.options.model or self.options.connector if self.options else None
        return pick_use(self.use, model)

    @property
    def validator_criteria(self) -> str:
        metadata = self.options.metadata if self.options else {}
        found = self.criteria or metadata.get("criteria") or self.value
        if isinstance(found, list):
            return "\n".join(f"- {item}" for item in found)
        return str(found or "")

    @property
    def validator_threshold(self) -> float | None:
        if self.threshold is not None:
            return self.threshold
        metadata = self.options.metadata if self.options else {}
        found = metadata.get("threshold")
        return float(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else None

    @property
    def validator_metadata(self) -> dict[str, JSONValue]:
        metadata = dict(self.options.metadata) if self.options else {}
        for key in ("criteria", "threshold"):
            metadata.pop(key, None)
        return metadata

    def describe(self) -> str:
        prefix = "not " if self.negate else ""
        operand = self.operand
        if self.type == "regex":
            text = f"regex /{operand}/"
        elif self.type == "json_path":
            text = f"json_path {self.path}" + (f" == {_short(self.value)}" if self.given("value") else "")
        elif self.type == "type":
            text = f"type {self.value}{self._at_path()}"
        elif self.type == "script":
            text = f"script {self.callable_ref}"
        elif self.type == "agent":
            text = f"agent: {clip(self.validator_criteria, 60)}"
        elif self.type == "tool_result":
            text = f"tool_result {_short(operand)}"
        else:
            text = f"{self.type} {_short(operand)}{self._at_path()}"
        return prefix + text

    def _at_path(self) -> str:
        return f" at {self.path}" if self.path else ""


def _short(value: object) -> str:
    return clip(repr(value), 60)


def _regex_problem(spec: AssertionSpec) -> str | None:
    operand = spec.operand
    if not isinstance(operand, str):
        return "a regex assertion needs 'pattern' (or 'value'): a regular expression string"
    try:
        user_regex(operand)
    except (re.error, OverflowError, RecursionError) as exc:
        return f"invalid regular expression {clip(repr(operand))}: {exc}"
    return None


def _value_problem(spec: AssertionSpec) -> str | None:
    return None if spec.given("value") else f"a {spec.type} assertion needs 'value'"


def _json_path_problem(spec: AssertionSpec) -> str | None:
    return None if spec.path else "a json_path assertion needs 'path' (like '$.status')"


def _value_type_problem(spec: AssertionSpec) -> str | None:
    if spec.value in VALUE_TYPES:
        return None
    got = clip(repr(spec.value))
    return f"a type assertion's 'value' must be one of {', '.join(VALUE_TYPES)}, got {got}{did_you_mean(str(spec.value), VALUE_TYPES)}"


def _tool_called_problem(spec: AssertionSpec) -> str | None:
    operand = spec.operand
    if operand is None or operand == "" or operand == []:
        return "a tool_called assertion needs 'name' (or 'value'): a tool name, a list of names or {name, arguments}"
    if isinstance(operand, list):
        return (
            None
            if all(isinstance(n, str) and n for n in operand)
            else "a tool_called list must hold tool names"
        )
    if isinstance(operand, dict):
        return _tool_called_object_problem(operand)
    if not isinstance(operand, str):
        return f"a tool_called name must be a string, a list or an object, got {clip(repr(operand))}"
    return None


def _tool_called_object_problem(operand: dict[str, JSONValue]) -> str | None:
    """``{name, arguments}``: a tool name, and the arguments to match as an object."""
    if not isinstance(operand.get("name"), str):
        return "a tool_called object needs 'name' (a tool name) and may have 'arguments'"
    if operand.get("arguments") is not None and not isinstance(operand["arguments"], dict):
        return f"a tool_called object's 'arguments' must be an object (the arguments to match), got {_short(operand['arguments'])}"
    return None


def _tool_result_problem(spec: AssertionSpec) -> str | None:
    operand = spec.operand
    if isinstance(operand, dict) and isinstance(operand.get("tool"), str) and operand.get("tool"):
        return None
    return "a tool_result assertion needs 'tool' (the tool's name) and may have 'result' (or value: {tool, result})"


def _script_problem(spec: AssertionSpec) -> str | None:
    ref = spec.callable_ref
    module, sep, function = ref.partition(":")
    if sep and module and function.isidentifier():
        return None
    key = "use" if spec.use is not None else "script"
    if not sep and "." in ref and spec.use is None:  # Yao's README: "script": "scripts.test.Validate"
        name = ref.rpartition(".")[2] or "check"
        return (
            f"a script assertion's '{key}': {clip(repr(spec.use or spec.script))} names a Yao script "
            "(TypeScript, run by Yao), which pytest-semantictest cannot run: port it to a Python "
            f"function {name}(output, input, value, context) and write '{key}': 'module:{name}' "
            "(the module imported normally, else <module>.py next to the .jsonl)"
        )
    return f"a script assertion needs '{key}' as 'module:function' (a Python callable), got {clip(repr(ref))}"


def _agent_problem(spec: AssertionSpec) -> str | None:
    if spec.validator_criteria.strip():
        return None
    return "an agent assertion needs criteria: 'criteria', 'value' or options.metadata.criteria"


_TYPE_PROBLEMS: dict[str, Callable[[AssertionSpec], str | None]] = {
    "regex": _regex_problem,
    "equals": _value_problem,
    "contains": _value_problem,
    "not_contains": _value_problem,
    "json_path": _json_path_problem,
    "type": _value_type_problem,
    "tool_called": _tool_called_problem,
    "tool_result": _tool_result_problem,
    "script": _script_problem,
    "agent": _agent_problem,
}
"""What each assertion type requires of its fields: the problem, or None (types not listed need nothing)."""


def _type_problem(spec: AssertionSpec) -> str | None:
    check = _TYPE_PROBLEMS.get(spec.type)
    return check(spec) if check is not None else None


def _listify(data: JSONValue) -> JSONValue:
    return [data] if isinstance(data, dict) else data


Assertions = Annotated[
    list[AssertionSpec], BeforeValidator(_listify, json_schema_input_type=AssertionSpec | list[AssertionSpec])
]
"""One assertion object or a list of them."""


class CheckpointSpec(StrictSpec):
    """A dynamic-mode checkpoint: reached when its assertion holds on an agent reply."""

    id: str
    description: str | None = None
    assertion: Assertions = Field(validation_alias=AliasChoices("assertion", "assert", "assertions"))
    after: list[str] = Field(default_factory=list)
    required: bool = True

    @model_validator(mode="before")
    @classmethod
    def _one_alias(cls, data: JSONValue) -> JSONValue:
        present = [k for k in ("assertion", "assert", "assertions") if isinstance(data, dict) and k in data]
        if len(present) > 1:
            raise ValueError(f"give one of {', '.join(present)} (they are the same key)")
        return data

    @field_validator("id")
    @classmethod
    def _id_ok(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("assertion")
    @classmethod
    def _not_empty(cls, value: list[AssertionSpec]) -> list[AssertionSpec]:
        if not value:
            raise ValueError("a checkpoint needs at least one assertion")
        return value


class SimulatorSpec(StrictSpec):
    """The simulated user: ``use`` (a model or an LLM role; default the simulator role) and
    ``options.metadata`` with ``persona`` and ``goal``."""

    use: str | None = None
    options: AgentOptions | None = None

    @property
    def metadata(self) -> dict[str, JSONValue]:
        return dict(self.options.metadata) if self.options else {}

    @property
    def model_use(self) -> str | None:
        from ..llm.validator import pick_use

        model = (self.options.model or self.options.connector) if self.options else None
        return pick_use(self.use, model)


class AttachmentSpec(StrictSpec):
    """A file sent with a user message: ``source`` is ``file://path``, a plain path, an
    ``http(s)://`` URL or a ``data:`` URL; ``type`` image, audio, file or text."""

    type: str = "file"
    source: str = Field(validation_alias=AliasChoices("source", "url", "path"))
    name: str | None = None
    mime: str | None = Field(default=None, validation_alias=AliasChoices("mime", "content_type"))

    @field_validator("type")
    @classmethod
    def _kind(cls, value: str) -> str:
        kinds = ("image", "audio", "file", "text")
        if value not in kinds:
            raise ValueError(
                f"must be one of {', '.join(kinds)}, got {clip(repr(value))}{did_you_mean(value, kinds)}"
            )
        return value


class MessageSpec(BaseModel):
    """A chat message as OpenAI-style agents take it (other keys pass through)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    role: str
    content: str | list[JSONValue] | None = None

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        roles = ("user", "assistant", "system", "tool", "developer")
        if value not in roles:
            raise ValueError(
                f"must be one of {', '.join(roles)}, got {clip(repr(value))}{did_you_mean(value, roles)}"
            )
        return value


InputSpec = str | MessageSpec | list[MessageSpec]
"""A user message: text, one message object, or a list of messages (the history so far)."""


class InteractiveSpec(StrictSpec):
    """``interactive: {enabled, timeout}``: a person at the terminal answers when the agent awaits input."""

    enabled: bool = False
    timeout: Duration = 300.0
