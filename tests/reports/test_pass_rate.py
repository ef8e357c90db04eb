"""Every repeated test's k/n comes with its 95% Wilson interval, the same in every report: "10/10"
reads 72-100% in the summary, JUnit, the HTML report and the results file (and the failure text)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_semantictest.stats import interval_text, wilson
from tests.helpers import mock
from tests.reports.dom import blob, extra_of
from tests.reports.scenario import run


def test_ten_of_ten_reads_72_to_100_percent_everywhere(pytester: pytest.Pytester) -> None:
    (pytester.path / "rate.json").write_text(
        json.dumps(
            {
                "name": "rate",
                "tests": [
                    {
                        "id": "steady",
                        "runs": 10,
                        "minPass": 8,
                        "pipeline": [mock({"ok": True})],
                        "assertions": {"d.ok": True},
                    },
                    {
                        "id": "never",
                        "runs": 3,
                        "minPass": 1,
                        "pipeline": [mock({"ok": False})],
                        "assertions": {"d.ok": True},
                    },
                ],
            }
        )
    )
    result = run(
        pytester,
        "-v",
        "--semantictest-no-early-stop",
        "--junitxml=junit.xml",
        "--html=report.html",
        "--self-contained-html",
        "--semantictest-results=results.jsonl",
    )
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "rate.json::steady: 10/10 runs passed (95% CI 72-100%), needs 8" in out
    assert "runs: 0/3 passed, 95% CI 0-56% (failed, failed, failed)" in out  # the failure text

    junit = {
        c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}
        for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    }
    assert (
        junit["steady"]["pass_rate"],
        junit["steady"]["pass_rate_low"],
        junit["steady"]["pass_rate_high"],
    ) == ("1.0", str(round(wilson(10, 10)[0], 4)), "1.0")
    assert (junit["steady"]["pass_rate_low"] or "").startswith("0.72")

    assert (
        "10/10 runs passed (95% CI 72-100%)"
        in extra_of(blob(pytester.path / "report.html"), "rate.json::steady").find(cls="st-kn").text()
    )

    records = {
        r["name"]: r for r in map(json.loads, (pytester.path / "results.jsonl").read_text().splitlines())
    }
    rate = records["steady"]["pass_rate"]
    assert (rate["passed"], rate["runs"], rate["rate"], rate["high"]) == (10, 10, 1.0, 1.0)
    assert round(rate["low"], 2) == 0.72 and interval_text(10, 10) == "72-100%"
