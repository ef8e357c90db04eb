"""JUnit XML: ERROR and FAILURE stay distinct; every spec test carries its properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.llm.fake_openai import FakeOpenAI
from tests.reports.scenario import Backend, report_suite, run, write_suite, xdist_run


def cases(path: str) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {case.get("name", ""): case for case in root.iter("testcase")}


def props(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_error_and_failure_are_distinct_and_properties_are_written(
    pytester: pytest.Pytester, backend: Backend, fake_openai: FakeOpenAI
) -> None:
    fake_openai.rule("I cannot help", 0.15, reasoning="Declines instead of confirming.")
    write_suite(pytester, report_suite(backend.url, judge=True))
    result = run(pytester, f"--semantictest-llm-base-url={fake_openai.url}", "--junitxml=junit.xml")
    result.assert_outcomes(passed=4, failed=2, errors=1)
    found = cases(str(pytester.path / "junit.xml"))
    assert set(found) == {"passes", "fails", "errors", "flaky", "streamed", "judged", "judged-low"}

    # An infrastructure problem (the pipeline timed out) is an <error>, a check that does not hold a <failure>.
    assert [c.tag for c in found["errors"] if c.tag != "properties"] == ["error"]
    error = found["errors"].find("error")
    assert error is not None and "timed out" in (error.get("message") or "")
    assert [c.tag for c in found["fails"] if c.tag != "properties"] == ["failure"]
    assert [c.tag for c in found["judged-low"] if c.tag != "properties"] == ["failure"]
    assert [c.tag for c in found["passes"] if c.tag != "properties"] == []
    root = ET.parse(str(pytester.path / "junit.xml")).getroot().find("testsuite")
    assert root is not None and (root.get("errors"), root.get("failures")) == ("1", "2")

    assert props(found["passes"]) == {"format": "semantictest", "runs": "1/1"}
    assert props(found["fails"]) == {"format": "semantictest", "runs": "0/1"}
    assert props(found["errors"]) == {"format": "semantictest", "runs": "0/1"}
    flaky = props(found["flaky"])
    assert (flaky["format"], flaky["runs"], flaky["min_pass"]) == ("semantictest", "2/3", "2")
    assert sorted(flaky["run_outcomes"].split(",")) == ["failed", "passed", "passed"]  # in arrival order
    judged = props(found["judged"])
    assert judged["score"] == "0.92" and judged["threshold"] == "0.7"
    assert (judged["llm_calls"], judged["cache_hits"], judged["tokens"]) == ("1", "0", "160")
    low = props(found["judged-low"])
    assert (low["score"], low["threshold"], low["runs"]) == ("0.15", "0.7", "0/1")


def test_properties_reach_the_controller_under_xdist(request: pytest.FixtureRequest) -> None:
    shared = xdist_run(request)
    assert shared["outcomes"] == {"passed": 3, "failed": 1, "errors": 1}, shared["output"]
    found = cases(shared["junit"])
    assert props(found["flaky"])["runs"] == "2/3" and props(found["flaky"])["min_pass"] == "2"
    assert all(props(c)["format"] == "semantictest" for c in found.values())
    assert [c.tag for c in found["errors"] if c.tag != "properties"] == ["error"]
