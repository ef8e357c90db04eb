"""A failing test's spans in the reports, read from the real pydantic-ai agent: a list in the console's
"spans" section (each span nested under its parent, with its tool name and arguments) and a small
timeline in the pytest-html extra (a bar a span on one axis), for a SemanticTest ``Spans`` step and a
highbar turn with ``calls_from: otel`` alike; a passing test shows none."""

from __future__ import annotations

import json

import pytest

from tests.agents.agent_helpers import free_port
from tests.helpers import run_pytest
from tests.reports.dom import blob, extra_of
from tests.traces.otel_agent_conftest import agent_conftest
from tests.traces.test_framework_agent import highbar, weather_test


def test_a_failing_test_s_spans_are_listed_and_drawn(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEATHER_AGENT_CITY", "Lyon")  # both agents ask the tool for Lyon
    pytester.makeconftest(agent_conftest())
    suite = {"name": "w", "tests": [weather_test("Paris", 0)]}
    pytester.makefile(".json", weather=json.dumps(suite))
    passing = {"name": "p", "tests": [{**weather_test("Lyon", 1), "id": "lyon"}]}
    pytester.makefile(".json", lyon=json.dumps(passing))
    pytester.makefile(".highbar.yaml", turns=highbar(free_port()).split("      - name: city 1")[0])
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-otel",
        "--html=report.html",
        "--self-contained-html",
        own_process=True,
    )
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert out.count("Captured spans call") == 2, out  # the failing ones only
    result.stdout.fnmatch_lines(
        [
            "Spans: 4 span(s) of trace *",
            "*unset  invoke_agent weather*",
            "*  execute_tool get_weather  gen_ai.tool.name=get_weather  gen_ai.tool.call.arguments=*Lyon*",
        ]
    )
    data = blob(pytester.path / "report.html")
    for nodeid in ("weather.json::weather-0-paris", "turns.highbar.yaml::Weather::city 0"):
        extra = extra_of(data, nodeid)
        timeline = extra.find("div", cls="st-spans")
        assert timeline is not None, nodeid
        names = [n.text() for n in timeline.find_all("span", cls="st-name")]
        assert "execute_tool get_weather" in names and "invoke_agent weather" in names, names
        bars = timeline.find_all("span", cls="st-bar")
        assert len(bars) == len(names) and all("width:" in b.attrs["style"] for b in bars)
    assert extra_of(data, "lyon.json::lyon").find_all("div", cls="st-spans") == []
