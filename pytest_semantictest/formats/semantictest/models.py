"""Pydantic models of a SemanticTest suite file (the format as users write it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ...errors import clip
from ...json_types import JSONObject, JSONValue
from ...model import MAX_RUNS
from ..validation import check_node_id, strip_free_keys

MAX_TIMEOUT_MS = 24 * 3600 * 1000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _free_keys(cls, data: JSONValue) -> JSONValue:
        return strip_free_keys(data)


class StepSpec(BaseModel):
    """A pipeline step. Block options may sit in ``config`` or at the step's top level."""

    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)

    block: str
    id: str | None = None
    name: str | None = None
    description: str | None = None
    input: JSONValue = None
    config: JSONObject = Field(default_factory=dict)
    output: str | dict[str, str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _free_keys(cls, data: JSONValue) -> JSONValue:
        return strip_free_keys(data)

    @field_validator("block", "id")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value


class PassRateSpec(_Strict):
    """Our extension: decide the test by a sequential test of its pass rate (docs/statistics.md)."""

    atLeast: float = Field(gt=0, lt=1, description="the pass rate the test must show")
    confidence: float = Field(default=0.95, gt=0.5, lt=1, description="1 - the error rate of either answer")
    margin: float = Field(default=0.05, gt=0, lt=0.5, description="half the indifference zone around atLeast")
    maxRuns: int = Field(
        default=200,
        ge=1,
        le=MAX_RUNS,
        description="the budget of runs, its last look the exact fixed-size test (a warning says when it is too small)",
    )


class TestSpec(_Strict):
    """One test: a pipeline and assertions (plus our documented extension keys).

    Without ``id`` a test gets ``test-<index>`` (as the reference runner names it) and a warning.
    """

    id: str | None = None
    name: str | None = None
    description: str | None = None
    pipeline: list[StepSpec]
    assertions: JSONObject = Field(default_factory=dict)
    markers: list[str] = Field(default_factory=list)
    skip: str | bool | None = None
    timeout: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS, description="milliseconds")
    runs: int = Field(default=1, ge=1, le=MAX_RUNS)
    minPass: int | float | None = None
    passRate: PassRateSpec | None = None

    @field_validator("id")
    @classmethod
    def _id_ok(cls, value: str | None) -> str | None:
        return value if value is None else check_node_id(value)

    @field_validator("markers")
    @classmethod
    def _markers_ok(cls, value: list[str]) -> list[str]:
        for name in value:  # pytest accepts identifiers that do not start with '_' as marker names
            if not name.isidentifier() or name.startswith("_"):
                raise ValueError(f"marker names must be words like 'smoke' or 'slow', got {clip(repr(name))}")
        return value


class AgentSpec(_Strict):
    """Our extension: the agent the suite's tests talk to, started (``start``) or attached to, as
    highbar's ``agent:`` does (docs/agents.md). ``start`` runs in the suite file's folder."""

    endpoint: str = Field(description="the agent's URL; the tests read it as ${agent.endpoint}")
    start: str | None = Field(default=None, description="command that starts the agent (no shell)")
    health: str | None = Field(default=None, description="URL that answers 200 once the agent is ready")
    startupTimeout: int = Field(default=15000, ge=1, le=MAX_TIMEOUT_MS, description="milliseconds")

    @field_validator("endpoint", "start", "health")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("endpoint", "health")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and "${" not in value and not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL, got {clip(repr(value))}")
        return value


class SuiteSpec(_Strict):
    """A SemanticTest suite file."""

    name: str | None = None
    version: str | None = None
    description: str | None = None
    context: JSONObject = Field(default_factory=dict)
    agent: AgentSpec | None = None
    input: JSONObject | None = None
    """The reference runner's suite-level input, readable as ``${input.<key>}`` in setup, every test
    and teardown."""
    setup: list[StepSpec] = Field(default_factory=list)
    tests: list[TestSpec]
    teardown: list[StepSpec] = Field(default_factory=list)


class SuiteShape(SuiteSpec):
    """What the loader validates first: the file's own keys, tests left unread. Each test is then
    validated on its own (:class:`TestSpec`), so a problem inside one test is that test's error."""

    tests: list[JSONValue]
