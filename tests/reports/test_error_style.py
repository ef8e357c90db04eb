"""One spelling of a spec problem everywhere: for one deliberate mistake per format, the terminal,
the short test summary, JUnit, the HTML report and the results file carry the same
``relative/path:line: place: message`` (the path relative to the rootdir, as node ids are)."""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.reports.dom import blob
from tests.reports.scenario import PYTEST_ARGS

SEMANTICTEST = """{
  "name": "bad",
  "tests": [
    {
      "id": "typo",
      "pipeline": [{"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9/x"}, "output": "r"}],
      "asertions": {"r.status": 200}
    }
  ]
}
"""
HIGHBAR = """agent:
  endpoint: "http://127.0.0.1:9/chat"
  calls_from: reply
suites:
  - name: S
    tests:
      - name: t
        trigger: "hi"
        expect:
          function_calls:
            - name: f
              parms: {a: 1}
"""
COMPLIANCE = """---
name: bad
version: 1.0
transport: completions
---

# Bad

## Test Cases

### 1. Hello

**Request:**
POST `/chat/completions`
```json
{"model": "m", "messages": [{"role": "user", "content": "hi"}]}
```

**Strikt:**
```yaml
status: 200
```
"""
YAO = '{"id": "typo", "input": "hi", "assertions": [{"type": "contans", "value": "x"}]}\n'

EXPECTED = {  # node id -> the one line of its mistake
    "specs/bad.json::typo": "specs/bad.json:7: tests[0]: unknown key 'asertions' — did you mean 'assertions'?",
    "specs/bad.highbar.yaml": "specs/bad.highbar.yaml:12: suites[0].tests[0].expect.function_calls[0]: "
    "unknown key 'parms' — did you mean 'params'?",
    "specs/bad.md::1. Hello": "specs/bad.md:19: case 1: unknown label '**Strikt:**' — did you mean 'Strict'?",
    "specs/bad_test.jsonl::typo": "specs/bad_test.jsonl:1: assertions[0].type: unknown assertion type "
    "'contans' — did you mean 'contains'?",
}


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    monkeypatch.setenv("COLUMNS", "500")  # the short summary is cut to the terminal's width
    specs = pytester.path / "specs"
    specs.mkdir()
    (specs / "bad.json").write_text(SEMANTICTEST, encoding="utf-8")
    (specs / "bad.highbar.yaml").write_text(HIGHBAR, encoding="utf-8")
    (specs / "bad.md").write_text(COMPLIANCE, encoding="utf-8")
    (specs / "bad_test.jsonl").write_text(YAO, encoding="utf-8")
    result = pytester.runpytest_inprocess(
        *PYTEST_ARGS,
        "--continue-on-collection-errors",
        "--junitxml=junit.xml",
        "--html=report.html",
        "--self-contained-html",
        "--semantictest-results=results.jsonl",
        "specs",
    )
    result.assert_outcomes(errors=4)
    return result


def test_terminal_and_short_summary(run: pytest.RunResult) -> None:
    lines = run.stdout.lines
    for nodeid, line in EXPECTED.items():
        assert any(printed.startswith(line) for printed in lines), (nodeid, run.stdout.str())
        summary = [p for p in lines if p.startswith(f"ERROR {nodeid} - ")]
        assert summary and summary[0].removeprefix(f"ERROR {nodeid} - ").startswith(line), (nodeid, summary)
    assert str(Path.cwd() / "specs") not in run.stdout.str()  # no spec file named by its full path


def test_junit(run: pytest.RunResult, pytester: pytest.Pytester) -> None:
    cases = {
        (tc.get("classname") or "").replace(".", "/") + "::" + (tc.get("name") or ""): tc
        for tc in ET.parse(pytester.path / "junit.xml").iter("testcase")
    }
    found = 0
    for tc in cases.values():
        (error,) = tc.iter("error")
        text = (error.get("message") or "") + "\n" + (error.text or "")
        matches = [line for line in EXPECTED.values() if line in text]
        assert len(matches) == 1, text
        if error.get("message") != "collection failure":  # a test's ERROR: the line is its message
            assert matches[0] in (error.get("message") or "")
        found += 1
    assert found == len(EXPECTED)


def test_html(run: pytest.RunResult, pytester: pytest.Pytester) -> None:
    tests = blob(pytester.path / "report.html")["tests"]
    for nodeid, line in EXPECTED.items():
        logs = "".join(row["log"] for row in tests[nodeid])
        assert html.escape(line) in logs, (nodeid, logs)


def test_results_file(run: pytest.RunResult, pytester: pytest.Pytester) -> None:
    records = {
        r["id"]: r
        for r in map(json.loads, (pytester.path / "results.jsonl").read_text(encoding="utf-8").splitlines())
    }
    for nodeid, line in EXPECTED.items():
        assert records[nodeid]["outcome"] == "error"
        assert line in records[nodeid]["message"], records[nodeid]
    assert records["specs/bad.highbar.yaml"]["collection_error"] is True


def test_a_validators_reasons_reach_junits_message(pytester: pytest.Pytester) -> None:
    test = {
        "id": "v",
        "pipeline": [
            {"block": "MockData", "config": {"data": {"msg": "Hello there"}}, "output": "d"},
            {
                "block": "ValidateContent",
                "input": {"from": "d.msg", "as": "text"},
                "config": {"contains": ["hello", "refund"]},
                "output": "v",
            },
        ],
        "assertions": {"v.passed": True},
    }
    (pytester.path / "v.json").write_text(json.dumps({"name": "v", "tests": [test]}), encoding="utf-8")
    result = pytester.runpytest_inprocess(*PYTEST_ARGS, "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    (failure,) = ET.parse(pytester.path / "junit.xml").iter("failure")
    assert (failure.get("message") or "").endswith(", because Missing expected content: refund")
