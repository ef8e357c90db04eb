"""A real agent framework whose tool calls are visible only in its OpenTelemetry export: the pydantic-ai
weather agent of the examples (a local function model, the OTel SDK's OTLP/HTTP exporter). Its calls
satisfy a highbar ``function_calls`` expectation (``calls_from: otel``) and a ``ValidateTools`` step
after ``Spans``; a wrong argument fails naming the difference; 20 tests at once keep their spans
apart; without the receiver, each says how to turn it on. Every run is a pytest process of its own;
the runs with the agent as it is, with its Lyon fault and without the receiver are shared with other
tests of this folder (``tests/traces/shared_runs.py``), each test checking its own files there."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.helpers import run_pytest
from tests.ports import free_port
from tests.traces.shared_runs import SharedRun

AGENT = Path(__file__).resolve().parents[2] / "examples" / "agents" / "otel_agent.py"
CITIES = ["Paris", "Oslo", "Tokyo", "Lima", "Cairo", "Delhi", "Quito", "Sofia", "Rome", "Bern"] * 2


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


TWENTY = "a_twenty_at_once.json"  # (first in the folder: the run's first 20 items at once)


def write_twenty(folder: Path) -> None:
    suite = {"name": "weather", "tests": [weather_test(city, n) for n, city in enumerate(CITIES)]}
    (folder / TWENTY).write_text(json.dumps(suite))


def test_twenty_tests_at_once_each_see_only_their_own_tool_call(otel_run: SharedRun) -> None:
    """(``--semantictest-items-at-once=20``; the SemanticTest tests' agent is the one the run's conftest
    starts, the docs' recipe in ``otel_agent_conftest.py``.)"""
    assert otel_run.outcomes(TWENTY) == {"passed": 20}, otel_run.text(TWENTY)


def write_wrong_argument(folder: Path, port: int) -> None:
    """This module's files for the agent that asks the tool for Lyon whatever it was asked."""
    (folder / "weather.json").write_text(json.dumps({"name": "w", "tests": [weather_test("Paris", 0)]}))
    (folder / "weather.highbar.yaml").write_text(highbar(port))


def test_a_wrong_argument_in_the_spans_fails_naming_it(otel_lyon_run: SharedRun) -> None:
    assert otel_lyon_run.outcomes("weather.json") == {"failed": 1}
    assert "Tool 'get_weather' arg 'city' mismatch: expected \"Paris\", got \"Lyon\"" in otel_lyon_run.text(
        "weather.json"
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


def write_highbar(folder: Path, port: int) -> None:
    (folder / "weather.highbar.yaml").write_text(highbar(port))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two workers"])
def test_highbar_function_calls_read_from_the_spans(
    request: pytest.FixtureRequest, pytester: pytest.Pytester, workers: list[str]
) -> None:
    """The agent the plugin starts gets the exporter settings (in one process: the shared run);
    under xdist the workers read their tests' spans from the controller's receiver."""
    if not workers:
        otel_run: SharedRun = request.getfixturevalue("otel_run")
        assert otel_run.outcomes("weather.highbar.yaml") == {"passed": 6}, otel_run.text(
            "weather.highbar.yaml"
        )
        return
    pytester.makefile(".highbar.yaml", weather=highbar(free_port()))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel", *workers, own_process=True)
    result.assert_outcomes(passed=6)


def test_highbar_names_the_wrong_argument(otel_lyon_run: SharedRun) -> None:
    assert otel_lyon_run.outcomes("weather.highbar.yaml") == {"failed": 6}
    out = otel_lyon_run.text("weather.highbar.yaml")
    assert "Lyon" in out and "get_weather" in out


def write_without_receiver(folder: Path, port: int) -> None:
    """This module's files for a run without the receiver."""
    (folder / "weather.highbar.yaml").write_text(highbar(port))
    spans = {
        "name": "s",
        "tests": [{"id": "t", "pipeline": [{"block": "Spans", "output": "x"}], "assertions": {"x.count": 0}}],
    }
    (folder / "spans.json").write_text(json.dumps(spans))


def test_without_the_receiver_each_format_says_how_to_turn_it_on(no_receiver_run: SharedRun) -> None:
    assert no_receiver_run.outcomes("weather.highbar.yaml") == {"errors": 6}
    assert no_receiver_run.outcomes("spans.json") == {
        "failed": 1
    }  # (the SemanticTest step fails; its assertion says why)
    assert (
        "calls_from: otel needs the run's OTLP receiver: run pytest with --semantictest-otel"
        in no_receiver_run.text("weather.highbar.yaml")
    )
    assert "Spans needs the run's OTLP receiver: run pytest with --semantictest-otel" in no_receiver_run.text(
        "spans.json"
    )
    assert "Traceback" not in no_receiver_run.stdout
