"""Pydantic models of a highbar spec (``*.highbar.yaml``): every key, its type and default.

These are the schema: the key sets (:data:`ALLOWED_KEYS`) that strict validation checks and
suggests from come from the fields here. The ``agent:`` block is validated by :class:`Agent` itself,
with highbar's check on each field (:class:`.agent_model.CheckedAgent`); the other checks, with
highbar's one-line, path-addressed messages and every problem of a file at once, are in
:mod:`.validate`, which builds these models from data it has already checked (``x-`` keys dropped,
``${ENV}`` expanded, defaults applied). ``Spec.model_json_schema()`` gives a JSON Schema for editors.

Keys beyond highbar 0.1.0rc3, documented as extensions: ``agent.calls_from`` (``traces`` | ``reply`` | ``otel``),
``agent.concurrency``, and a test's ``markers`` and ``pass_rate``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...agents.config import DEFAULT_BODY, DEFAULT_CORRELATE
from ...checks.matchers import MATCHER_KEYS as MATCHER_KEYS
from ...json_types import JSONObject, JSONValue

REGEX_KEYS: tuple[str, ...] = ("matches", "not_matches")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class Matcher(_Model):
    """Conditions on one value; every condition given must hold.

    In ``response`` every operand is text (non-empty except ``equals``); inside
    ``params``/``result`` and ``error`` the operands of ``equals``/``contains``... may be
    any value, and ``matches``/``not_matches`` take a regex (``re.search``).
    """

    equals: JSONValue = None
    contains: JSONValue = None
    icontains: JSONValue = None
    not_contains: JSONValue = None
    not_icontains: JSONValue = None
    matches: str | None = None
    not_matches: str | None = None


class FunctionCall(_Model):
    """An expected tool call: ``name`` is one tool or a list of which any one will do."""

    name: str | list[str]
    params: JSONObject | None = Field(default=None, description="subset of the call's arguments")
    result: JSONObject | None = Field(default=None, description="subset of the call's result")
    error: bool | JSONObject = Field(default=False, description="false | true | a matcher on the error text")


class SpanEntry(_Model):
    """Extension: spans the agent exported for the test that must be there (docs/traces.md)."""

    name: str | None = Field(default=None, description="a glob on the span name")
    kind: str | None = None
    service: str | None = None
    status: Literal["ok", "error", "unset"] | None = None
    attributes: dict[str, JSONValue] = Field(default_factory=dict, description="names taken whole")
    min_ms: float | None = Field(default=None, ge=0)
    max_ms: float | None = Field(default=None, ge=0)
    count: int | dict[Literal["min", "max"], int] | None = Field(
        default=None, description="how many spans match: N or {min, max}; at least one by default"
    )


class Expect(_Model):
    function_calls: list[FunctionCall] | None = Field(default=None, description="[] = no tool is called")
    ordered: bool = False
    exclusive: bool = False
    forbid: list[str] | None = None
    response: Matcher | None = None
    spans: list[SpanEntry] | None = Field(
        default=None, description="extension: span assertions (docs/traces.md)"
    )


class Turn(_Model):
    name: str | None = None
    trigger: str
    expect: Expect | None = Field(default=None, description="absent: a turn that only sets the scene")


class PassRate(_Model):
    """Extension: decide the test by a sequential test of its pass rate (docs/statistics.md)."""

    at_least: float = Field(gt=0, lt=1, description="the pass rate the test must show")
    confidence: float = Field(default=0.95, gt=0.5, lt=1, description="1 - the error rate of either answer")
    margin: float = Field(
        default=0.05, gt=0, lt=0.5, description="half the indifference zone around at_least"
    )
    max_runs: int = Field(
        default=200,
        ge=1,
        description="the budget of runs, its last look the exact fixed-size test (a warning says when it is too small)",
    )


class Test(_Model):
    name: str | None = None
    trigger: str | None = None
    expect: Expect | None = None
    turns: list[Turn] | None = None
    variations: int = Field(default=0, ge=0)
    runs: int | None = Field(default=None, ge=1)
    min_pass: int | float | None = Field(default=None, description="count >= 1 or fraction in (0, 1]")
    markers: list[str] = Field(default_factory=list, description="extension: pytest marker names")
    pass_rate: PassRate | None = Field(default=None, description="extension: a sequential pass-rate decision")


class Suite(_Model):
    name: str = "Unnamed Suite"
    tests: list[Test] = Field(min_length=1)


class Defaults(_Model):
    runs: int = Field(default=1, ge=1)


class Request(_Model):
    method: Literal["POST", "PUT", "PATCH"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body: JSONValue = Field(default_factory=lambda: dict(DEFAULT_BODY))


class PythonHook(_Model):
    python: str = Field(description="'module:function'")


class Session(_Model):
    setup: str | PythonHook | None = None
    teardown: str | PythonHook | None = None


class Agent(_Model):
    endpoint: str
    start: str | None = None
    health: str | None = None
    startup_timeout: int = Field(default=15000, ge=1, description="milliseconds; only with start")
    settle_time: int = Field(default=500, ge=0, description="milliseconds")
    timeout: int = Field(default=60000, ge=1, description="milliseconds")
    request: Request = Field(default_factory=Request)
    response: str | None = Field(default=None, description="dotted path to the reply text")
    traces: str | None = Field(default=None, description="attach mode: the trace file the agent writes")
    session: Session | None = None
    correlate: dict[str, str | int | float] = Field(default_factory=lambda: dict(DEFAULT_CORRELATE))
    calls_from: Literal["traces", "reply", "otel"] = Field(
        default="traces", description="extension: where tool calls are read from"
    )
    concurrency: int | None = Field(default=None, ge=1, description="extension: tests talking to it at once")


class Spec(_Model):
    agent: Agent
    defaults: Defaults = Field(default_factory=Defaults)
    suites: list[Suite] = Field(min_length=1)


ALLOWED_KEYS: dict[str, frozenset[str]] = {
    "spec": frozenset(Spec.model_fields),
    "defaults": frozenset(Defaults.model_fields),
    "agent": frozenset(Agent.model_fields),
    "request": frozenset(Request.model_fields),
    "session": frozenset(Session.model_fields),
    "python_hook": frozenset(PythonHook.model_fields),
    "suite": frozenset(Suite.model_fields),
    "test": frozenset(Test.model_fields),
    "pass_rate": frozenset(PassRate.model_fields),
    "turn": frozenset(Turn.model_fields),
    "expect": frozenset(Expect.model_fields),
    "function_call": frozenset(FunctionCall.model_fields),
    "span": frozenset(SpanEntry.model_fields),
    "response": frozenset(Matcher.model_fields),
}
"""Each kind of mapping and the keys it takes; any other key (not ``x-``) is a spec error."""


assert ALLOWED_KEYS["response"] == MATCHER_KEYS
