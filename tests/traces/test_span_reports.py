"""A failing test's spans in the reports, read from the real pydantic-ai agent: a list in the console's
"spans" section (each span nested under its parent, with its tool name and arguments) and a small
timeline in the pytest-html extra (a bar a span on one axis), for a SemanticTest ``Spans`` step and a
highbar turn with ``calls_from: otel`` alike; a passing test shows none. The run (with a pytest-html
report) is shared with ``test_framework_agent``'s wrong-argument tests (``tests/traces/shared_runs.py``):
each section and extra is read per test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reports.dom import blob, extra_of
from tests.traces.shared_runs import SharedRun
from tests.traces.test_framework_agent import weather_test

PASSING = "lyon.json"
FAILING = ("weather.json::weather-0-paris", "weather.highbar.yaml::Weather::city 0")
"""A SemanticTest ``Spans`` step and a highbar turn with ``calls_from: otel`` that fail: in the shared
run, ``test_framework_agent``'s files for the agent that asks the tool for Lyon."""


def write_passing(folder: Path) -> None:
    passing = {"name": "p", "tests": [{**weather_test("Lyon", 1), "id": "lyon"}]}
    (folder / PASSING).write_text(json.dumps(passing))


def test_a_failing_test_s_spans_are_listed_and_drawn(otel_lyon_run: SharedRun) -> None:
    run = otel_lyon_run  # (both agents ask the tool for Lyon)
    assert [run.category(nodeid) for nodeid in (*FAILING, f"{PASSING}::lyon")] == [
        ["failed"],
        ["failed"],
        ["passed"],
    ]
    shown = {nodeid: [t for t, _ in run.sections(nodeid)] for nodeid in (*FAILING, f"{PASSING}::lyon")}
    # the failing ones only
    assert [titles.count("Captured spans call") for titles in shown.values()] == [1, 1, 0], shown
    everywhere = [r["nodeid"] for r in run.records for t, _ in r["sections"] if t == "Captured spans call"]
    assert run.stdout.count("Captured spans call") == len(everywhere)  # the console shows each of them
    for nodeid, first in zip(
        FAILING, ("Spans: 4 span(s) of trace *", "turn1 (AgentTurn): 4 span(s) of trace *")
    ):
        pytest.LineMatcher(dict(run.sections(nodeid))["Captured spans call"].splitlines()).fnmatch_lines(
            [
                first,
                "*unset  invoke_agent weather*",
                "*  execute_tool get_weather  gen_ai.tool.name=get_weather  gen_ai.tool.call.arguments=*Lyon*",
            ]
        )
    data = blob(Path(run.folder) / "report.html")
    for nodeid in FAILING:
        extra = extra_of(data, nodeid)
        timeline = extra.find("div", cls="st-spans")
        assert timeline is not None, nodeid
        names = [n.text() for n in timeline.find_all("span", cls="st-name")]
        assert "execute_tool get_weather" in names and "invoke_agent weather" in names, names
        bars = timeline.find_all("span", cls="st-bar")
        assert len(bars) == len(names) and all("width:" in b.attrs["style"] for b in bars)
    assert extra_of(data, f"{PASSING}::lyon").find_all("div", cls="st-spans") == []
