"""A validated highbar spec as typed objects a compiler can walk.

:func:`.validate.load_highbar` returns a :class:`HighbarSpec` only when the file has no
problem at all, so everything here is already checked: names are non-empty, regexes are
compiled, ``min_pass`` is resolved to a count, ``${ENV}`` under ``agent`` is expanded.
Every object knows its source ``line`` and its ``place`` (``suites[0].tests[1]``) for
reports. Nothing here runs anything.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Literal, TypeAlias

from ...agents.config import DEFAULT_BODY, DEFAULT_CORRELATE
from ...json_types import JSONObject, JSONValue
from ...stats import PassRateTest

TRACE_FIELDS: tuple[str, ...] = ("args", "context", "ended_at", "error", "fn", "result", "started_at")
"""Fields of a recorded tool call that ``{{previous.function_calls[N].<field>}}`` can read."""


@dataclass(frozen=True, eq=False)
class MatcherSpec(Mapping[str, JSONValue]):
    """A matcher map (``{contains: "x", not_matches: "y"}``): every condition must hold.

    It is a read-only mapping of condition -> operand (so it compares equal to the dict
    it was written as); ``patterns`` holds the compiled regex of ``matches``/``not_matches``.
    """

    conditions: JSONObject
    patterns: dict[str, re.Pattern[str]] = field(default_factory=dict)

    def __getitem__(self, key: str) -> JSONValue:
        return self.conditions[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.conditions)

    def __len__(self) -> int:
        return len(self.conditions)

    def __repr__(self) -> str:
        return f"MatcherSpec({self.conditions!r})"


Expected: TypeAlias = "MatcherSpec | dict[str, Expected] | JSONValue"
"""An expected value in ``params``/``result``: a :class:`MatcherSpec`, a dict of expected
values (subset-matched, recursively), or any other value (compared with ``==``; lists are
compared as they are, matchers are not looked for inside them, as in highbar)."""


@dataclass(frozen=True)
class CallSpec:
    """One expected tool call."""

    name: str | list[str]
    params: Expected | None
    result: Expected | None
    error: bool | MatcherSpec
    line: int | None
    place: str
    raw: JSONObject = field(default_factory=dict, compare=False)
    """The entry as written (``x-`` keys dropped), for failure reports."""

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names that satisfy this call (``name`` as a tuple)."""
        return (self.name,) if isinstance(self.name, str) else tuple(self.name)


@dataclass(frozen=True)
class ExpectSpec:
    """The checks of a test or turn."""

    function_calls: list[CallSpec] | None
    ordered: bool
    exclusive: bool
    forbid: tuple[str, ...]
    response: MatcherSpec | None
    line: int | None
    place: str
    spans: tuple[JSONObject, ...] = ()
    """Extension: span entries (``spans_ext``)."""

    @property
    def observes_calls(self) -> bool:
        """Checks tool calls (``function_calls: []`` and ``forbid`` included): needs the agent observed."""
        return self.function_calls is not None or bool(self.forbid)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Every tool name this expectation mentions (for the inventory check), in order."""
        names = [n for call in self.function_calls or () for n in call.names] + list(self.forbid)
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Template:
    """A ``{{previous...}}`` template in a trigger: ``text`` as written, ``path`` parsed.

    ``path`` starts at ``function_calls`` (the calls of the earlier turns of this
    execution, in order): ``("function_calls", 0, "result", "order_id")``.
    """

    text: str
    path: tuple[str | int, ...]


@dataclass(frozen=True)
class TurnSpec:
    """One message of a conversation; ``expect`` is None for a scene-setting turn."""

    name: str | None
    trigger: str
    expect: ExpectSpec | None
    line: int | None
    place: str
    templates: tuple[Template, ...] = ()


@dataclass(frozen=True)
class TestSpec:
    """One test: a ``trigger`` with ``expect`` (``turns`` empty), or ``turns``."""

    __test__ = False  # not a pytest test class

    name: str | None
    display_name: str
    line: int | None
    place: str
    trigger: str | None
    turns: list[TurnSpec]
    expect: ExpectSpec | None
    variations: int
    runs: int | None
    min_pass: int | float | None
    """As written; see :attr:`min_pass_count` and :meth:`repetition`."""
    min_pass_count: int | None
    """``min_pass`` as a count of the test's runs (its own ``runs``, else ``defaults.runs``);
    None when not given (every run must pass)."""
    markers: tuple[str, ...] = ()
    pass_rate: PassRateTest | None = None
    """Extension: a sequential pass-rate decision instead of ``runs``/``min_pass``."""

    @property
    def is_multi_turn(self) -> bool:
        return bool(self.turns)

    @property
    def steps(self) -> list[TurnSpec]:
        """The turns to send: ``turns``, or the single trigger as one turn."""
        if self.turns:
            return self.turns
        assert self.trigger is not None
        return [TurnSpec(None, self.trigger, self.expect, self.line, self.place)]

    @property
    def observes_calls(self) -> bool:
        return any(step.expect is not None and step.expect.observes_calls for step in self.steps)

    def repetition(self, default_runs: int) -> tuple[int, int]:
        """``(runs, min_pass)`` with ``default_runs`` (``--semantictest-highbar-runs``, else ``defaults.runs``).

        The test's own ``runs`` wins; ``min_pass`` defaults to every run, a fraction is
        rounded up exactly (0.7 of 10 is 7): highbar's ``resolve_runs``.
        """
        runs = self.runs if self.runs is not None else default_runs
        return runs, resolve_min_pass(self.min_pass, runs)


def resolve_min_pass(min_pass: int | float | None, runs: int) -> int:
    if min_pass is None:
        return runs
    if isinstance(min_pass, float):
        return math.ceil(Fraction(str(min_pass)) * runs)
    return min_pass


@dataclass(frozen=True)
class SuiteSpec:
    name: str
    line: int | None
    place: str
    tests: list[TestSpec]


@dataclass(frozen=True)
class CommandHook:
    """A session hook run as a command (split like a shell would, run without one)."""

    argv: list[str]


@dataclass(frozen=True)
class PythonHook:
    """A session hook called in-process: ``"module:function"``."""

    target: str


Hook = CommandHook | PythonHook


@dataclass(frozen=True)
class SessionSpec:
    setup: Hook | None
    teardown: Hook | None


@dataclass(frozen=True)
class RequestSpec:
    method: str = "POST"
    headers: dict[str, str] = field(default_factory=dict)
    body: JSONValue = field(default_factory=lambda: dict(DEFAULT_BODY))


@dataclass(frozen=True)
class AgentSpec:
    """How to reach (and maybe start) the agent. Times are milliseconds."""

    endpoint: str
    start: str | None = None
    health: str | None = None
    startup_timeout: int = 15000
    settle_time: int = 500
    timeout: int = 60000
    request: RequestSpec = field(default_factory=RequestSpec)
    response: str | None = None
    traces: str | None = None
    session: SessionSpec | None = None
    correlate: JSONObject = field(default_factory=lambda: dict(DEFAULT_CORRELATE))
    calls_from: Literal["traces", "reply", "otel"] = "traces"
    line: int | None = None

    @property
    def managed(self) -> bool:
        """True when the agent is started (``start``); False in attach mode."""
        return self.start is not None


@dataclass(frozen=True)
class HighbarSpec:
    """A whole ``*.highbar.yaml`` file, valid."""

    path: Path
    agent: AgentSpec
    defaults_runs: int
    suites: list[SuiteSpec]
    secrets: list[str] = field(default_factory=list)
    """Values ``${ENV}`` expanded to under ``agent`` that are at least 6 characters: mask them."""
    env_names: dict[str, str] = field(default_factory=dict)
    """Every expanded value -> the variable's name (to show ``${NAME}`` instead of a value)."""
    agent_mapping: JSONObject = field(default_factory=dict)
    """The ``agent:`` mapping as written (``x-`` keys dropped, ``${ENV}`` NOT expanded), for
    code that takes highbar's raw form (``agents.config.AgentConfig.from_highbar``)."""

    @property
    def tests(self) -> Iterator[tuple[SuiteSpec, TestSpec]]:
        for suite in self.suites:
            for test in suite.tests:
                yield suite, test

    @property
    def observes_calls(self) -> bool:
        """Some test checks tool calls (so a trace file, or replies with tool calls, are read)."""
        return any(test.observes_calls for _, test in self.tests)
