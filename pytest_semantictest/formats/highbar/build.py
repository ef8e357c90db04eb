"""From validated data to the typed spec: ``x-`` keys dropped, models built, matchers compiled.

Only used on data :mod:`.validate` found no problem in.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ...checks.regex import user_regex
from ...json_types import JSONObject, JSONValue
from ...problems import place as _place
from ...redact import MIN_SECRET_LENGTH
from ...stats import PassRateTest
from ..yamlsource import YamlSource
from . import models
from .models import MATCHER_KEYS, REGEX_KEYS
from .spec import (
    AgentSpec,
    CallSpec,
    CommandHook,
    Expected,
    ExpectSpec,
    HighbarSpec,
    MatcherSpec,
    PythonHook,
    RequestSpec,
    SessionSpec,
    SuiteSpec,
    Template,
    TestSpec,
    TurnSpec,
    resolve_min_pass,
)

Path_ = tuple[str | int, ...]
EXTENSION_PREFIX = "x-"


def _strip(raw: JSONObject) -> JSONObject:
    return {key: value for key, value in raw.items() if not key.startswith(EXTENSION_PREFIX)}


def clean(data: JSONObject, agent: JSONObject) -> JSONObject:
    """Valid data as the models take it: ``x-`` keys dropped where keys are schema keys,
    ``agent`` with ``${ENV}`` expanded."""
    spec = _strip(data)
    spec["agent"] = _clean_agent(agent)
    if "defaults" in spec:
        spec["defaults"] = _strip(spec["defaults"])
    spec["suites"] = [_clean_suite(s) for s in spec["suites"]]
    return spec


def _stripped(raw: JSONObject, optional: str) -> JSONObject:
    """``_strip``, and ``optional`` dropped when it is null (the model's default applies)."""
    data = _strip(raw)
    if data.get(optional) is None:
        data.pop(optional, None)
    return data


def _clean_suite(raw: JSONObject) -> JSONObject:
    suite = _stripped(raw, "name")
    suite["tests"] = [_clean_test(t) for t in suite["tests"]]
    return suite


def _clean_test(raw: JSONObject) -> JSONObject:
    test = _stripped(raw, "variations")
    if "expect" in test:
        test["expect"] = _clean_expect(test["expect"])
    if "turns" in test:
        test["turns"] = [_clean_turn(t) for t in test["turns"]]
    return test


def _clean_turn(raw: JSONObject) -> JSONObject:
    turn = _strip(raw)
    if "expect" in turn:
        turn["expect"] = _clean_expect(turn["expect"])
    return turn


def _clean_expect(raw: JSONObject) -> JSONObject:
    expect = _strip(raw)
    if "function_calls" in expect:
        expect["function_calls"] = [_clean_call(c) for c in expect["function_calls"]]
    if "response" in expect:
        expect["response"] = _strip(expect["response"])
    return expect


def _clean_call(raw: JSONObject) -> JSONObject:
    call = _strip(raw)
    if isinstance(call["name"], list):
        call["name"] = list(dict.fromkeys(call["name"]))  # a tool listed twice adds nothing
    return call


def _clean_agent(raw: JSONObject) -> JSONObject:
    agent = _strip(raw)
    if agent.get("health") is None:
        agent.pop("health", None)
    request = agent.get("request")
    if request is None:
        agent.pop("request", None)
    else:
        request = _strip(request)
        if "method" in request:
            request["method"] = request["method"].upper()
        agent["request"] = request
    if "session" in agent:
        session = _strip(agent["session"])
        for key in ("setup", "teardown"):
            if isinstance(session.get(key), dict):
                session[key] = _strip(session[key])
        agent["session"] = session
    return agent


class Builder:
    """Builds the typed spec from the validated models and what validation found."""

    def __init__(
        self,
        source: YamlSource,
        path: Path,
        regexes: dict[str, re.Pattern[str]],
        templates: dict[Path_, tuple[Template, ...]],
        env_names: dict[str, str],
    ) -> None:
        self.source = source
        self.path = path
        self.regexes = regexes
        self.templates = templates
        self.env_names = env_names

    def line(self, where: Path_) -> int | None:
        return self.source.line(where)

    def build(self, model: models.Spec) -> HighbarSpec:
        default_runs = model.defaults.runs
        suites = [
            SuiteSpec(
                suite.name or "Unnamed Suite",
                self.line(("suites", i)),
                _place(("suites", i)),
                [
                    self.test(test, ("suites", i, "tests", j), default_runs)
                    for j, test in enumerate(suite.tests)
                ],
            )
            for i, suite in enumerate(model.suites)
        ]
        secrets = sorted(
            {v for v in self.env_names if len(v) >= MIN_SECRET_LENGTH}, key=lambda v: (-len(v), v)
        )
        return HighbarSpec(
            path=self.path,
            agent=self.agent(model.agent),
            defaults_runs=default_runs,
            suites=suites,
            secrets=secrets,
            env_names=dict(self.env_names),
            agent_mapping=_clean_agent(self.source.data["agent"]),
        )

    def agent(self, m: models.Agent) -> AgentSpec:
        session = None
        if m.session is not None:
            session = SessionSpec(_hook(m.session.setup), _hook(m.session.teardown))
        return AgentSpec(
            endpoint=m.endpoint,
            start=m.start,
            health=m.health,
            startup_timeout=m.startup_timeout,
            settle_time=m.settle_time,
            timeout=m.timeout,
            request=RequestSpec(m.request.method, dict(m.request.headers), m.request.body),
            response=m.response,
            traces=m.traces,
            session=session,
            correlate=dict(m.correlate),
            calls_from=m.calls_from,
            line=self.line(("agent",)),
        )

    def test(self, m: models.Test, where: Path_, default_runs: int) -> TestSpec:
        turns = [
            TurnSpec(
                turn.name,
                turn.trigger,
                self.expect(turn.expect, where + ("turns", k, "expect")) if turn.expect is not None else None,
                self.line(where + ("turns", k)),
                _place(where + ("turns", k)),
                self.templates.get(where + ("turns", k), ()),
            )
            for k, turn in enumerate(m.turns or ())
        ]
        runs = m.runs if m.runs is not None else default_runs
        display = m.name or m.trigger or f"multi-turn ({len(turns)} turns)"
        return TestSpec(
            name=m.name,
            display_name=display,
            line=self.line(where),
            place=_place(where),
            trigger=m.trigger,
            turns=turns,
            expect=self.expect(m.expect, where + ("expect",)) if m.expect is not None else None,
            variations=m.variations,
            runs=m.runs,
            min_pass=m.min_pass,
            min_pass_count=resolve_min_pass(m.min_pass, runs) if m.min_pass is not None else None,
            markers=tuple(m.markers),
            pass_rate=None
            if m.pass_rate is None
            else PassRateTest(
                m.pass_rate.at_least,
                1 - m.pass_rate.confidence,
                1 - m.pass_rate.confidence,
                m.pass_rate.margin,
                m.pass_rate.max_runs,
            ),
        )

    def expect(self, m: models.Expect, where: Path_) -> ExpectSpec:
        calls = None
        if m.function_calls is not None:
            calls = [self.call(c, where + ("function_calls", n)) for n, c in enumerate(m.function_calls)]
        response = None
        if m.response is not None:
            response = self.matcher(m.response.model_dump(exclude_unset=True))
        return ExpectSpec(
            function_calls=calls,
            ordered=m.ordered,
            exclusive=m.exclusive,
            forbid=tuple(m.forbid or ()),
            response=response,
            line=self.line(where),
            place=_place(where),
            spans=tuple(e.model_dump(exclude_none=True, exclude_defaults=True) for e in m.spans or ()),
        )

    def call(self, m: models.FunctionCall, where: Path_) -> CallSpec:
        error: bool | MatcherSpec = m.error if isinstance(m.error, bool) else self.matcher(m.error)
        raw = m.model_dump(exclude_unset=True)
        return CallSpec(
            name=m.name,
            params=self.expected(m.params) if m.params is not None else None,
            result=self.expected(m.result) if m.result is not None else None,
            error=error,
            line=self.line(where),
            place=_place(where),
            raw=raw,
        )

    def matcher(self, conditions: JSONObject) -> MatcherSpec:
        patterns = {
            key: self.regexes.get(conditions[key]) or user_regex(conditions[key])
            for key in REGEX_KEYS
            if key in conditions
        }
        return MatcherSpec(dict(conditions), patterns)

    def expected(self, value: JSONValue) -> Expected:
        if isinstance(value, dict):
            if value and set(value) <= MATCHER_KEYS:
                return self.matcher(value)
            return {key: self.expected(item) for key, item in value.items()}
        return value


def _hook(raw: str | models.PythonHook | None) -> CommandHook | PythonHook | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return CommandHook(shlex.split(raw))
    return PythonHook(raw.python)
