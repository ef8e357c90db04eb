"""A failing check on a 20 MB body: the console, JUnit and the HTML report stay small, say the full
size, and (in a report that is not self-contained) the full value is a file next to the report."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.reports.scenario import BIG, Backend, report_suite, run, step, write_suite

LIMIT = 1_000_000


def _suite(url: str) -> dict[str, object]:
    return {
        "name": "big",
        "tests": [
            {
                "id": "huge-body",
                "pipeline": [step("HttpRequest", "response", input={"url": f"{url}/big"})],
                "assertions": {"response.body": {"contains": "needle"}},
            }
        ],
    }


def test_a_failure_on_a_huge_body_is_trimmed_everywhere(pytester: pytest.Pytester, backend: Backend) -> None:
    write_suite(pytester, _suite(backend.url))
    result = run(pytester, "--junitxml=junit.xml", "--html=report.html", "--self-contained-html")
    result.assert_outcomes(failed=1)
    console = result.stdout.str()
    assert len(console) < LIMIT, len(console)
    assert re.search(
        r"\(19,9\d\d,\d{3} characters cut; 20,000,031 in all\) \.\.\. a+' to contain 'needle'", console
    )
    assert re.search(r"actual: +'a+… \(19,99\d,\d{3} more characters\)", console)  # the actual value's size
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert len(junit) < LIMIT, len(junit)
    failure = ET.fromstring(junit).find(".//failure")
    assert failure is not None and "20,000,031 in all" in failure.attrib["message"]
    html = (pytester.path / "report.html").read_bytes()
    assert len(html) < LIMIT, len(html)
    assert not list(pytester.path.glob("assets/*.txt"))  # self-contained: nothing attached


def test_the_full_value_is_an_attachment_of_a_report_with_assets(
    pytester: pytest.Pytester, backend: Backend
) -> None:
    write_suite(pytester, _suite(backend.url))
    result = run(pytester, "--html=report.html")
    result.assert_outcomes(failed=1)
    report = pytester.path / "report.html"
    assert report.stat().st_size < LIMIT
    attached = list(pytester.path.glob("assets/*.txt"))
    assert len(attached) == 1 and attached[0].stat().st_size >= BIG
    assert attached[0].read_text(encoding="utf-8").count("a") >= BIG
    assert f"actual value of response.body ({BIG:,} characters)" in report.read_text(encoding="utf-8")


def test_a_stream_body_is_printed_once_in_a_failure(pytester: pytest.Pytester, backend: Backend) -> None:
    """The HTTP step's output holds the stream; the parser's input names it instead of repeating it."""
    suite = report_suite(backend.url)
    streamed = next(t for t in suite["tests"] if t["id"] == "streamed")
    streamed["assertions"]["parsed.text"] = {"contains": "London"}
    suite["tests"] = [streamed]
    write_suite(pytester, suite)
    result = run(pytester, "-vv")  # (the whole trace: without -vv each value is cut short)
    result.assert_outcomes(failed=1)
    console = result.stdout.str()
    assert console.count('{\\"content\\": \\"Checking the weather in Paris.\\"}') == 1, console
    assert '"body": "<the same 378 characters as [0] output.body>"' in console
