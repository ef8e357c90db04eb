"""pytest-html extras and summary: in the report's data, and in the page Chromium renders from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.fake_openai import FakeOpenAI
from tests.reports.dom import (
    Node,
    blob,
    chromium,
    contrast,
    extra_of,
    parse,
    render_with_colors,
    result_rows,
    table_rows,
)
from tests.reports.scenario import Backend, highbar_spec, report_suite, run, write_suite

# ----------------------------------------------------------------------------- the runs


def report_run(
    pytester: pytest.Pytester, backend: Backend, fake: FakeOpenAI, *args: str, skipped: int = 0
) -> Path:
    fake.rule("I cannot help", 0.15, reasoning="Declines instead of confirming the meeting.")
    write_suite(pytester, report_suite(backend.url, judge=True))
    highbar_spec(pytester)
    if skipped:
        pytester.makefile(
            ".json",
            later=json.dumps(
                {
                    "name": "later",
                    "tests": [
                        {
                            "id": "not-yet",
                            "skip": "the endpoint ships next week",
                            "pipeline": [{"block": "MockData", "config": {"data": {}}, "output": "d"}],
                            "assertions": {},
                        }
                    ],
                }
            ),
        )
    result = run(
        pytester,
        f"--semantictest-llm-base-url={fake.url}",
        "--html=report.html",
        "--self-contained-html",
        *args,
    )
    result.assert_outcomes(passed=5, failed=3, errors=1, skipped=skipped)
    return pytester.path / "report.html"


def _pre_json(node: Node) -> object:
    return json.loads(node.find("pre").text())


def test_each_test_gets_its_extras_and_the_summary_its_table(
    pytester: pytest.Pytester, backend: Backend, fake_openai: FakeOpenAI
) -> None:
    report = report_run(pytester, backend, fake_openai)
    data = blob(report)

    flaky = extra_of(data, "reports.json::flaky")
    assert "2/3 runs passed (95% CI 21-94%)" in flaky.find(cls="st-kn").text()
    rows = table_rows(flaky.find("table", cls="st-runs"))
    assert [r[0] for r in rows] == ["run 1", "run 2", "run 3"] and sorted(r[1] for r in rows) == [
        "failed",
        "passed",
        "passed",
    ]
    exchange = flaky.find(cls="st-exchange")
    assert f"GET {backend.url}/flaky" in exchange.text()
    assert _pre_json(exchange.find(cls="st-response").find(cls="st-body")) in (
        {"hit": 1},
        {"hit": 2},
        {"hit": 3},
    )

    streamed = extra_of(data, "reports.json::streamed")
    tools = table_rows(streamed.find("table", cls="st-tools"))
    assert [r[2] for r in tools] == [
        "get_weather",
        "get_weather",
    ]  # the parsed stream, and ValidateTools' view
    assert json.loads(tools[0][3]) == json.loads(tools[1][3]) == {"city": "Paris"}  # ValidateTools' too
    assert "Checking the weather in Paris." in streamed.find(cls="st-stream").text()
    sent = _pre_json(streamed.find(cls="st-request").find(cls="st-body"))
    assert sent == {
        "messages": [{"role": "user", "content": "Weather in Paris?"}]
    }  # pretty JSON, not a string
    # the stream as its frames
    frames = table_rows(streamed.find(cls="st-response").find("table", cls="st-sse"))
    assert [f[0] for f in frames] == ["1", "2", "3", "4"] and frames[3][2] == "[DONE]"
    assert json.loads(frames[0][2])["choices"][0]["delta"]["content"] == "Checking the weather in Paris."

    judged = extra_of(data, "reports.json::judged")
    head = judged.find(cls="st-judge").find("h4").text()
    assert "score 0.92" in head and "threshold 0.7" in head and "passed" in head
    assert table_rows(judged.find("table", cls="st-criteria")) == [
        ["accuracy", "0.92"],
        ["completeness", "0.92"],
    ]
    low = extra_of(data, "reports.json::judged-low")
    assert "Declines instead of confirming the meeting." in low.find(cls="st-reasoning").text()
    assert "judge score 0.15 vs threshold 0.7" in low.find(cls="st-overview").text()

    errors = extra_of(data, "reports.json::errors")  # an ERROR (setup phase) gets its extra too
    assert "error: timed out" in errors.find(cls="st-overview").text()

    conversation = extra_of(data, "orders.highbar.yaml::Orders::wrong tool")
    transcript = table_rows(conversation.find("table", cls="st-transcript"))
    assert transcript == [["1", "Where is order 1042?", "Order 1042 has shipped.", "get_order", ""]]

    prefix = parse(report.read_text(encoding="utf-8")).find(cls="additional-summary")
    formats = table_rows(prefix.find("table", cls="st-formats"))
    assert formats == [
        ["highbar", "2", "1", "1", "0", "0", "50%", "0"],
        ["semantictest", "7", "4", "2", "1", "0", "57%", "1"],
    ]
    assert table_rows(prefix.find("table", cls="st-llm")) == [["2", "0", "320"]]


def test_the_report_renders_in_headless_chromium(
    pytester: pytest.Pytester, backend: Backend, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    chromium()  # skips before the run when there is none
    report = report_run(pytester, backend, fake_openai, "-n", "2", skipped=1)  # extras made on workers
    dom, colors = render_with_colors(report, tmp_path)  # one Chromium launch for both
    rows = result_rows(dom)
    assert len(rows) == 10, sorted(rows)
    assert rows["reports.json::errors::setup"].find("td", cls="col-result").text() == "Error"
    assert rows["reports.json::fails"].find("td", cls="col-result").text() == "Failed"

    flaky = rows["reports.json::flaky"].find("div", cls="extraHTML").find(cls="st-extra")
    assert len(table_rows(flaky.find("table", cls="st-runs"))) == 3
    streamed = rows["reports.json::streamed"].find(cls="extraHTML")
    assert [r[2] for r in table_rows(streamed.find("table", cls="st-tools"))] == [
        "get_weather",
        "get_weather",
    ]
    sent = streamed.find(cls="st-request").find(cls="st-body").find("pre").text()
    assert sent.startswith('{\n  "messages": [') and '\\"' not in sent  # pretty-printed, nothing escaped
    frames = table_rows(streamed.find(cls="st-response").find("table", cls="st-sse"))
    assert (
        len(frames) == 4
        and json.loads(frames[1][2])["choices"][0]["delta"]["tool_calls"][0]["id"] == "call_1"
    )
    judged = rows["reports.json::judged-low"].find(cls="extraHTML")
    assert (
        "score 0.15" in judged.find(cls="st-score").text()
        and "threshold 0.7" in judged.find(cls="st-threshold").text()
    )
    conversation = rows["orders.highbar.yaml::Orders::looks the order up"].find(cls="extraHTML")
    assert table_rows(conversation.find("table", cls="st-transcript"))[0][1] == "Where is order 1042?"

    # why each test did not pass is in its overview, not only in the log box
    for nodeid, why in [
        ("reports.json::fails", "d.reply (line 35): Expected 'hello' to equal 'goodbye'"),
        ("reports.json::judged-low", "judgement.passed (line 180): Expected False to equal True"),
        ("orders.highbar.yaml::Orders::wrong tool", "function_calls (line 15)"),
    ]:
        reasons = [
            li.text()
            for li in rows[nodeid].find(cls="st-overview").enclosing().find(cls="st-why").find_all("li")
        ]
        assert any(r.startswith(why) for r in reasons), (nodeid, reasons)
    assert "error: timed out" in rows["reports.json::errors::setup"].find(cls="st-overview").text()

    # nothing twice: the log has the failure text, the extras have the trace, judge and transcript
    for nodeid in (
        "reports.json::fails",
        "reports.json::streamed",
        "reports.json::judged-low",
        "orders.highbar.yaml::Orders::wrong tool",
    ):
        log = rows[nodeid].find(cls="log").text()
        assert "Captured" not in log and "pipeline trace" not in log and log.count("judge score:") <= 1, log
    assert "Expected 'hello' to equal 'goodbye'" in rows["reports.json::fails"].find(cls="log").text()
    skip_log = rows["later.json::not-yet"].find(cls="log").text().strip()  # the test, not its "::setup"
    # not pytest's (path, line, reason) tuple
    assert skip_log == "Skipped: the endpoint ships next week", skip_log

    summary = dom.find(cls="summary").find("table", cls="st-formats")
    assert [r[0] for r in table_rows(summary)] == ["highbar", "semantictest"]
    # every test counted, each by its outcome (pytest-html's own count leaves out errors and skips)
    count = dom.find(cls="summary").find("p", cls="st-run-count").text()
    assert count.startswith("10 tests took ") and count.endswith(
        ": 1 error, 3 failed, 1 skipped, 5 passed."
    ), count

    # every text of the extras has its colour set: dark on white, at least 4.5:1 (WCAG AA), not the grey #999
    assert len(colors) > 50
    worst = min(colors, key=lambda c: contrast(c["color"], c["background"]))
    assert contrast(worst["color"], worst["background"]) >= 4.5, worst
    assert not [c for c in colors if c["color"] == "rgb(153, 153, 153)"]
