"""Pydantic models of a Yao test case (one JSONL line) and of the agent sidecar file.

Key names are the Yao V2 design's; the names Yao shipped are aliases (``assert`` for
``assertions``/``assertion``, ``value`` for ``pattern``/``name``). Assertion, checkpoint, simulator
and attachment models live in :mod:`pytest_semantictest.checks.specs` (shared with the blocks).
"""

from __future__ import annotations

from typing import Final

from pydantic import AliasChoices, Field, field_validator, model_validator

from ...checks.specs import (
    Assertions,
    AttachmentSpec,
    CheckpointSpec,
    Duration,
    InputSpec,
    InteractiveSpec,
    SimulatorSpec,
    StrictSpec,
)
from ...errors import clip
from ...json_types import JSONObject, JSONValue
from ..validation import check_node_id

MODES = ("static", "dynamic")
DEFAULT_MAX_TURNS = 20
DEFAULT_DYNAMIC_TIMEOUT_S = 300.0
_UNSET: Final = object()
"""``expected`` not given (its value may be any JSON, null included)."""


def _one_of(data: object, names: tuple[str, ...]) -> None:
    present = [n for n in names if isinstance(data, dict) and n in data]
    if len(present) > 1:
        raise ValueError(f"give one of {', '.join(present)} (they are the same key)")


class PythonHook(StrictSpec):
    """``{python: "module:function"}``: a hook spelled as highbar's session hooks are."""

    python: str


HookSpec = str | PythonHook
"""A per-case ``before``/``after`` hook: ``"module:function"``, ``{python: ...}`` or Yao's
``"env_test.Before"`` (see :mod:`.hooks`)."""


class TurnSpec(StrictSpec):
    """A static turn: what the user says, and what the reply must satisfy."""

    input: InputSpec
    name: str | None = None
    assertions: Assertions = Field(
        default_factory=list, validation_alias=AliasChoices("assertions", "assert")
    )
    options: JSONObject = Field(default_factory=dict)
    attachments: list[AttachmentSpec] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _alias_once(cls, data: object) -> object:
        _one_of(data, ("assertions", "assert"))
        return data


class CaseSpec(StrictSpec):
    """One test case: single-turn (``input``), static (``turns``) or dynamic (``checkpoints``)."""

    id: str
    name: str | None = None
    description: str | None = None
    mode: str | None = None
    input: InputSpec | None = None
    assertions: Assertions = Field(
        default_factory=list, validation_alias=AliasChoices("assertions", "assert")
    )
    expected: JSONValue = _UNSET
    options: JSONObject = Field(default_factory=dict)
    attachments: list[AttachmentSpec] = Field(default_factory=list)
    turns: list[TurnSpec] | None = None
    simulator: SimulatorSpec | None = None
    checkpoints: list[CheckpointSpec] | None = None
    max_turns: int | None = Field(default=None, ge=1, le=1000)
    timeout: Duration | None = None
    skip: bool | str | None = None
    interactive: InteractiveSpec | None = None
    user: str | None = None
    team: str | None = None
    metadata: JSONObject = Field(default_factory=dict)
    before: HookSpec | None = None
    after: HookSpec | None = None

    @model_validator(mode="before")
    @classmethod
    def _alias_once(cls, data: object) -> object:
        _one_of(data, ("assertions", "assert"))
        return data

    @field_validator("id")
    @classmethod
    def _id_ok(cls, value: str) -> str:
        return check_node_id(value)

    @field_validator("mode")
    @classmethod
    def _mode_ok(cls, value: str | None) -> str | None:
        if value is not None and value not in MODES:
            raise ValueError(f"must be 'static' or 'dynamic', got {clip(repr(value))}")
        return value

    @property
    def has_expected(self) -> bool:
        return self.expected is not _UNSET

    @property
    def dynamic(self) -> bool:
        if self.mode is not None:
            return self.mode == "dynamic"
        return self.checkpoints is not None or self.simulator is not None

    @model_validator(mode="after")
    def _shape(self) -> CaseSpec:
        problem = self._dynamic_problem() if self.dynamic else self._static_problem()
        if problem:
            raise ValueError(problem)
        if self.has_expected and self.assertions:
            raise ValueError(
                "give 'assertions' or 'expected' (exact equality when there are no assertions), not both"
            )
        return self

    def _static_problem(self) -> str | None:
        if self.checkpoints is not None or self.simulator is not None:
            return "'checkpoints' and 'simulator' belong to dynamic mode (mode: \"dynamic\")"
        if self.max_turns is not None:
            return "'max_turns' belongs to dynamic mode; a static conversation has its turns"
        if self.turns is not None:
            if not self.turns:
                return "'turns' must have at least one turn"
            if self.input is not None:
                return "give 'input' (one turn) or 'turns' (several), not both"
            if self.attachments:
                return "put 'attachments' on the turn that sends them"
            return None
        if self.input is None:
            return (
                "a test case needs 'input' (one turn), 'turns' (static mode) or 'checkpoints' (dynamic mode)"
            )
        return None

    def _dynamic_problem(self) -> str | None:
        if self.turns is not None:
            return (
                "dynamic mode has no 'turns': the simulator writes the user's messages (use mode \"static\")"
            )
        if not self.checkpoints:
            return "dynamic mode needs 'checkpoints' (what the agent must do during the conversation)"
        if self.simulator is None:
            return "dynamic mode needs 'simulator' ({use, options: {metadata: {persona, goal}}})"
        if self.assertions or self.has_expected:
            return "dynamic mode checks 'checkpoints'; move these assertions into a checkpoint"
        return None


class AwaitingInputSpec(StrictSpec):
    tools: list[str] | None = None
    pattern: str | None = None


HIGHBAR_ONLY = ("request", "response", "traces", "session", "correlate", "settle_time", "calls_from")


class AgentFileSpec(StrictSpec):
    """``<name>.agent.yaml`` next to a ``.jsonl``: the agent those cases talk to."""

    protocol: str = "openai"
    endpoint: str
    start: str | None = None
    health: str | None = None
    startup_timeout: int | None = Field(default=None, ge=1)
    timeout: int | None = Field(default=None, ge=1)
    headers: dict[str, str] = Field(default_factory=dict)
    model: str | None = None
    body: JSONObject = Field(default_factory=dict)
    description: str | None = None
    tools: list[str] = Field(default_factory=list)
    awaiting_input: AwaitingInputSpec | None = None
    request: JSONObject | None = None
    response: str | None = None
    traces: str | None = None
    session: JSONObject | None = None
    correlate: JSONObject | None = None
    settle_time: int | None = Field(default=None, ge=0)
    calls_from: str | None = None
    concurrency: int | None = Field(default=None, ge=1)
    """How many tests may talk to the agent at once (docs/concurrency.md)."""

    @field_validator("protocol")
    @classmethod
    def _protocol(cls, value: str) -> str:
        if value not in ("openai", "highbar"):
            raise ValueError(f"must be 'openai' (chat completions) or 'highbar', got {clip(repr(value))}")
        return value

    @field_validator("calls_from")
    @classmethod
    def _calls_from(cls, value: str | None) -> str | None:
        if value is not None and value not in ("reply", "traces", "otel"):
            raise ValueError(f"must be 'reply', 'traces' or 'otel' (docs/traces.md), got {clip(repr(value))}")
        return value

    @model_validator(mode="after")
    def _highbar_keys(self) -> AgentFileSpec:
        if self.protocol == "openai":
            used = [k for k in HIGHBAR_ONLY if getattr(self, k) is not None]
            used = [k for k in used if k != "calls_from" or self.calls_from == "traces"]  # (reply, otel: any)
            if used:
                raise ValueError(f"{', '.join(used)}: only for protocol: highbar")
        elif self.model is not None or self.body:
            raise ValueError("model and body are for protocol: openai (highbar sends 'request.body')")
        return self
