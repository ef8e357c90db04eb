"""The results viewer (``--semantictest-report``, ``semantictest report``): one self-contained page,
checked in headless Chromium as a person would use it: failures first, the filter hides passed tests,
the search narrows the list, one click shows a failing test's tool-call arguments, a baseline's change
and a mutation run's survivors are on the same page, no console error, nothing a record holds runs
as markup, and no secret is on the page."""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.redact import Redactor
from pytest_semantictest.report.viewer import build
from tests.helpers import run_pytest
from tests.main_command import main_command_run
from tests.mutate.test_four_formats import semantictest as weather_spec
from tests.mutate.test_mutation_score import Weather
from tests.reports.cdp import Browser
from tests.reports.dom import chromium
from tests.servers.quiet import in_thread

SCREENSHOTS = os.environ.get("SEMANTICTEST_SCREENSHOTS")
"""A folder to keep the browser tests' screenshots in (they are always saved under the test's tmp_path)."""


def tool_args_test(city: str) -> dict[str, Any]:
    """A completion that calls get_weather for ``city``, checked against Paris."""
    completion = {
        "choices": [
            {
                "message": {
                    "content": "Let me look.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
                        }
                    ],
                }
            }
        ]
    }
    return {
        "id": "tool-args",
        "pipeline": [
            {"block": "MockData", "config": {"data": completion}, "output": "completion"},
            {
                "block": "ValidateTools",
                "input": {"from": "completion.choices[0].message.tool_calls", "as": "toolCalls"},
                "config": {"expected": ["get_weather"], "validateArgs": {"get_weather": {"city": "Paris"}}},
                "output": "tools",
            },
        ],
        "assertions": {"tools.passed": True},
    }


def write_specs(folder: Path, url: str, city: str) -> None:
    _, weather = weather_spec(url, strong=False)  # checks only the text: its tool-call mutants survive
    suite = json.loads(weather)
    suite["tests"].append(tool_args_test(city))
    (folder / "weather.json").write_text(json.dumps(suite), encoding="utf-8")


def keep(shot: Path) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(SCREENSHOTS) / shot.name)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs against a loopback agent: a baseline where both tests pass, then a mutation run with
    the viewer where the tool-call test fails (Oslo, not Paris)."""
    chromium()  # skips before the runs when there is none
    pytester_like = tmp_path_factory.mktemp("viewer")
    with in_thread(Weather) as url:
        for city, args in (
            ("Paris", ["--semantictest-results=base.jsonl"]),
            (
                "Oslo",
                [
                    "--semantictest-baseline=base.jsonl",
                    "--semantictest-mutate",
                    "--semantictest-report=out/report.html",
                ],
            ),
        ):
            write_specs(pytester_like, url, city)
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                cwd=pytester_like,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == (0 if city == "Paris" else 1), done.stdout + done.stderr
    assert "semantictest: results viewer in" in done.stdout
    return pytester_like / "out" / "report.html"


OPENED = "(document.querySelector('tr.st-detail[data-loaded]') || {}).innerText"
"""An opened test's details, once the page has unpacked them."""


def unpacked(page: str) -> str:
    """The page's packed test records (gzip, base64), as text."""
    packed = page.split('<script type="text/plain" id="st-details">', 1)[1].split("</script>", 1)[0]
    return gzip.decompress(base64.b64decode(packed)).decode("utf-8")


def rows(b: Browser) -> list[dict[str, str]]:
    found: list[dict[str, str]] = b.evaluate(
        "[...document.querySelectorAll('tr.st-row')].map(r => ({id: r.querySelector('.st-id').textContent,"
        " outcome: r.querySelector('.st-badge').textContent, baseline: r.cells[5].textContent,"
        " mutants: r.cells[6].textContent}))"
    )
    return found


def test_a_person_finds_the_failure_and_its_tool_call(report: Path, tmp_path: Path) -> None:
    with Browser(tmp_path) as b:
        b.open(report.as_uri())
        listed = rows(b)
        assert [r["outcome"] for r in listed] == ["failed", "passed"]  # failures first
        assert listed[0]["id"].endswith("weather.json::tool-args")
        assert "failed" in listed[0]["baseline"] and "passed" in listed[0]["baseline"]  # was -> now
        assert "survived" in listed[1]["mutants"]
        assert b.evaluate("document.querySelectorAll('tr.st-detail').length") == 0  # folded until asked

        b.click("#st-status-failed")  # the filter: failed tests only
        assert [r["outcome"] for r in rows(b)] == ["failed"]
        b.click("tr.st-row")  # one click on the failing test
        shown = b.wait_for(OPENED)
        assert "get_weather" in shown and '"city": "Oslo"' in shown, shown
        assert "Paris" in shown  # why it failed: the expected argument
        keep(b.screenshot(tmp_path / "viewer-failure.png"))

        b.click("#st-status-failed")
        b.type("#st-search", "weather.json::weather")
        assert [r["id"].rsplit("::", 1)[1] for r in rows(b)] == ["weather"]
        b.click("tr.st-row")
        shown = b.wait_for(OPENED)
        assert "Mutation:" in shown and "survived:" in shown, shown
        keep(b.screenshot(tmp_path / "viewer-mutants.png"))
        assert b.errors == []


def test_nothing_in_a_record_runs_as_markup_and_no_secret_is_on_the_page(tmp_path: Path) -> None:
    secret = "sk-viewer-secret-0123456789"
    attack = "</script><script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'>"
    records = [
        {
            "id": f"specs/a.json::{attack}",
            "name": attack,
            "file": "specs/a.json",
            "format": "semantictest",
            "outcome": "failed",
            "duration_s": 0.5,
            "message": f"got {secret!r} and {attack}",
            "steps": [{"step": "HttpRequest", "http": [{"method": "GET", "url": f"http://h/?key={secret}"}]}],
        }
    ]
    page = build(records, Redactor([secret]))
    for text in (page, unpacked(page)):
        assert secret not in text and "sk-viewer-secret" not in text
    assert "</script><script>window.pwned" not in page
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    chromium()
    with Browser(tmp_path) as b:
        b.open(path.as_uri())
        b.click("tr.st-row")
        assert attack in b.wait_for(OPENED)  # shown as text
        assert b.evaluate("window.pwned === undefined")
        assert b.errors == []


def result_line(nodeid: str, outcome: str, **more: Any) -> str:
    return json.dumps(
        {"id": nodeid, "outcome": outcome, "format": "semantictest", "results_version": 1, **more}
    )


def test_the_report_command_joins_a_split_run_and_says_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "job1.jsonl").write_text(result_line("a.json::one", "passed") + "\n")
    (tmp_path / "job2.jsonl").write_text(result_line("b.json::two", "failed", message="expected 2") + "\n")

    def report(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_semantictest.cli", "report", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    done = report("job1.jsonl", "job2.jsonl", "-o", "out/all.html")
    assert done.returncode == 1, done.stderr  # a failed test: as `semantictest merge` and pytest say
    page = (tmp_path / "out" / "all.html").read_text()
    assert "a.json::one" in page and "b.json::two" in page
    assert "expected 2" in unpacked(page)
    done = report("job1.jsonl", "-o", "one.html")
    assert done.returncode == 0 and "results viewer of 1 tests" in done.stdout

    for args, said in (
        (("missing.jsonl",), "missing.jsonl does not exist"),
        (("job1.jsonl", "-o", "out"), "out is a folder"),
    ):
        done = report(*args)
        assert done.returncode == 4, done
        assert said in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_xdist_workers_records_all_reach_the_viewer(pytester: pytest.Pytester) -> None:
    tests = [
        {
            "id": f"t{i}",
            "pipeline": [{"block": "MockData", "config": {"data": i}, "output": "n"}],
            "assertions": {"n": 3 if i == 3 else i},
        }
        for i in range(6)
    ]
    pytester.makefile(".json", suite=json.dumps({"name": "s", "tests": tests}))
    tests[3]["assertions"] = {"n": 0}
    pytester.makefile(".json", other=json.dumps({"name": "o", "tests": tests}))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "-n", "2", "--semantictest-report=r.html")
    result.assert_outcomes(passed=11, failed=1)
    page = (pytester.path / "r.html").read_text()
    records = [json.loads(line) for line in unpacked(page).splitlines()]
    assert len(records) == 12 and records[0]["id"] == "other.json::t3" and records[0]["outcome"] == "failed"


def test_the_examples_run_writes_a_viewer_chromium_opens_cleanly(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The issue's own check: ``python -m pytest examples --semantictest-report=r.html`` (the README's main
    command, run once for the session: ``tests/main_command.py``)."""
    chromium()
    run = main_command_run(request)
    assert run["code"] == 0, run["stdout"][-3000:] + run["stderr"]
    page = Path(run["report"])
    with Browser(tmp_path) as b:
        b.open(page.as_uri())
        listed = rows(b)
        formats = b.evaluate("[...document.querySelectorAll('.st-format-name')].map(e => e.textContent)")
        assert {"compliance", "highbar", "semantictest", "yao"} <= set(formats)
        assert len(listed) == int(run["stdout"].rsplit(" passed", 1)[0].rsplit(maxsplit=1)[-1])
        b.type("#st-search", "chat.highbar.yaml")
        assert {r["id"].split("::")[0] for r in rows(b)} == {"examples/highbar/chat.highbar.yaml"}
        b.click("tr.st-row")
        assert "USER" in b.wait_for(OPENED)  # the conversation, then its tool calls as cards
        assert b.evaluate("document.querySelectorAll('tr.st-detail .st-tool .st-tool-args').length") >= 1
        keep(b.screenshot(tmp_path / "viewer-examples.png"))
        assert b.errors == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--semantictest-report=out"], "--semantictest-report: * is a folder: give a file name"),
        (
            ["--semantictest-report=r.jsonl", "--semantictest-results=r.jsonl"],
            "--semantictest-report: * also*",
        ),
        (
            ["--semantictest-report=base.jsonl", "--semantictest-baseline=base.jsonl"],
            "--semantictest-report: * also*",
        ),
    ],
    ids=["folder", "results", "baseline"],
)
def test_a_viewer_path_that_cannot_be_written_stops_the_run_before_any_test(
    pytester: pytest.Pytester, args: list[str], said: str
) -> None:
    (pytester.path / "out").mkdir()
    (pytester.path / "base.jsonl").write_text(result_line("a.json::one", "passed") + "\n")
    pytester.makefile(".json", suite=json.dumps({"name": "s", "tests": [tool_args_test("Paris")]}))
    result = run_pytest(pytester, "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{said}"])
    assert (pytester.path / "base.jsonl").read_text().startswith('{"id": "a.json::one"')  # kept
