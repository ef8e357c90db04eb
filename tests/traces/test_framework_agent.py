"""A real agent framework whose tool calls are visible only in its OpenTelemetry export: the pydantic-ai
weather agent of the examples (a local function model, the OTel SDK's OTLP/HTTP exporter). Its calls
satisfy a highbar ``function_calls`` expectation (``calls_from: otel``) and a ``ValidateTools`` step
after ``Spans``; a wrong argument fails naming the difference; 20 tests at once keep their spans
apart; without the receiver, each says how to turn it on. Every run is a pytest process of its own."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.agents.agent_helpers import free_port
from tests.helpers import run_pytest

AGENT = Path(__file__).resolve().parents[2] / "examples" / "agents" / "otel_agent.py"
CITIES = ["Paris", "Oslo", "Tokyo", "Lima", "Cairo", "Delhi", "Quito", "Sofia", "Rome", "Bern"] * 2

# A conftest that runs the agent for the SemanticTest files (the docs' recipe for an agent a conftest
# starts: api.otel_exporter_env points its exporter at the run's receiver).
CONFTEST = f"""
import os, subprocess, sys
from pytest_semantictest.api import otel_exporter_env

_agent = None

def pytest_sessionstart(session):
    global _agent
    env = {{**os.environ, **otel_exporter_env(session.config)}}
    _agent = subprocess.Popen([sys.executable, {str(AGENT)!r}], stdout=subprocess.PIPE, text=True, env=env)
    os.environ["OTEL_AGENT_URL"] = _agent.stdout.readline().split()[-1]

def pytest_sessionfinish(session):
    _agent.terminate()
    _agent.wait(timeout=30)
"""


def weather_test(city: str, n: int) -> dict[str, object]:
    return {
        "id": f"weather-{n}-{city.lower()}",
        "pipeline": [
            {
                "block": "HttpRequest",
                "input": {
                    "url": "${env.OTEL_AGENT_URL}/chat",
                    "method": "POST",
                    "body": {"message": f"What's the weather in {city}?"},
                },
                "output": "response",
            },
            {"block": "Spans", "output": "trace"},
            {
                "block": "ValidateTools",
                "input": {"from": "trace.toolCalls", "as": "toolCalls"},
                "config": {
                    "expected": ["get_weather"],
                    "maxTools": 1,
                    "validateArgs": {"get_weather": {"city": city}},
                },
                "output": "tools",
            },
        ],
        "assertions": {"response.status": 200, "tools.passed": True},
    }


def test_twenty_tests_at_once_each_see_only_their_own_tool_call(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    suite = {"name": "weather", "tests": [weather_test(city, n) for n, city in enumerate(CITIES)]}
    pytester.makefile(".json", weather=json.dumps(suite))
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-otel",
        "--semantictest-items-at-once=20",
        own_process=True,
    )
    result.assert_outcomes(passed=20)


def test_a_wrong_argument_in_the_spans_fails_naming_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "WEATHER_AGENT_CITY", "Lyon"
    )  # the agent asks the tool for Lyon, whatever it was asked
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".json", weather=json.dumps({"name": "w", "tests": [weather_test("Paris", 0)]}))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel", own_process=True)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*Tool 'get_weather' arg 'city' mismatch: expected \"Paris\", got \"Lyon\"*"]
    )


def highbar(port: int) -> str:
    start = shlex.join([sys.executable, str(AGENT), str(port)])
    return f"""
agent:
  start: {json.dumps(start)}
  endpoint: "http://127.0.0.1:{port}/chat"
  health: "http://127.0.0.1:{port}/health"
  settle_time: 0
  calls_from: otel
suites:
  - name: Weather
    tests:
""" + "".join(
        f"""
      - name: city {n}
        trigger: "What's the weather in {city}?"
        expect:
          exclusive: true
          function_calls:
            - name: get_weather
              params: {{city: {city}, unit: celsius}}
"""
        for n, city in enumerate(CITIES[:6])
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two workers"])
def test_highbar_function_calls_read_from_the_spans(pytester: pytest.Pytester, workers: list[str]) -> None:
    """The agent the plugin starts gets the exporter settings; under xdist the workers read their
    tests' spans from the controller's receiver."""
    pytester.makefile(".highbar.yaml", weather=highbar(free_port()))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel", *workers, own_process=True)
    result.assert_outcomes(passed=6)


def test_highbar_names_the_wrong_argument(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEATHER_AGENT_CITY", "Lyon")
    pytester.makefile(".highbar.yaml", weather=highbar(free_port()))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel", own_process=True)
    result.assert_outcomes(failed=6)
    assert "Lyon" in result.stdout.str() and "get_weather" in result.stdout.str()


def test_without_the_receiver_each_format_says_how_to_turn_it_on(pytester: pytest.Pytester) -> None:
    pytester.makefile(".highbar.yaml", weather=highbar(free_port()))
    pytester.makefile(
        ".json",
        spans=json.dumps(
            {
                "name": "s",
                "tests": [
                    {"id": "t", "pipeline": [{"block": "Spans", "output": "x"}], "assertions": {"x.count": 0}}
                ],
            }
        ),
    )
    result = run_pytest(pytester, "-p", "no:cacheprovider", own_process=True)
    result.assert_outcomes(errors=6, failed=1)  # (the SemanticTest step fails; its assertion says why)
    out = result.stdout.str()
    assert "calls_from: otel needs the run's OTLP receiver: run pytest with --semantictest-otel" in out
    assert "Spans needs the run's OTLP receiver: run pytest with --semantictest-otel" in out
    assert "Traceback" not in result.stdout.str()
