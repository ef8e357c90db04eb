"""A suite split across CI jobs with pytest-split (``-n`` inside each job) and merged with
``semantictest merge`` gives the verdicts, counts, results file and report of one whole run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.cli import main
from tests.helpers import run_pytest

pytest.importorskip("pytest_split")

FILES, PER_FILE = 4, 3  # 12 tests in 3 jobs: pytest-split alone would cut the second file
VOLATILE = ("duration_s", "latency_ms")


def suite(pytester: pytest.Pytester) -> None:
    """Four files of three offline tests; every file's first test fails."""
    for f in range(FILES):
        tests = [
            {
                "id": f"t{n}",
                "pipeline": [
                    {"block": "MockData", "config": {"data": {"n": f * PER_FILE + n}}, "output": "out"}
                ],
                "assertions": {"out.n": {"gt": 0} if (f * PER_FILE + n) % 3 else {"lt": 0}},
            }
            for n in range(PER_FILE)
        ]
        pytester.makefile(".json", **{f"file{f}": json.dumps({"name": f"file{f}", "tests": tests})})


def merged(
    capsys: pytest.CaptureFixture[str], out: Path, *results: Path
) -> tuple[int, str, list[dict[str, Any]], str]:
    status = main(["merge", *map(str, results), "-o", str(out), "--html", str(out.with_suffix(".html"))])
    text = capsys.readouterr().out
    records = [
        {k: v for k, v in json.loads(line).items() if k not in VOLATILE}
        for line in out.read_text().splitlines()
    ]
    summary = "\n".join(
        line for line in text.splitlines() if not line.startswith(("merged results", "HTML report"))
    )
    return status, summary, records, out.with_suffix(".html").read_text()


def test_three_jobs_merged_are_the_whole_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    suite(pytester)
    whole = pytester.path / "whole.jsonl"
    run_pytest(pytester, "-n", "2", f"--semantictest-results={whole}").assert_outcomes(passed=8, failed=4)
    jobs = []
    for group in (1, 2, 3):
        job = pytester.path / f"job{group}.jsonl"
        result = run_pytest(
            pytester, "-n", "2", "--splits", "3", "--group", str(group), f"--semantictest-results={job}"
        )
        assert result.ret in (0, 1)
        jobs.append(job)
    ran = [{json.loads(line)["file"] for line in job.read_text().splitlines()} for job in jobs]
    assert all(ran) and sum(map(len, ran)) == FILES  # each file's tests in one job
    capsys.readouterr()
    one = merged(capsys, pytester.path / "whole-merged.jsonl", whole)
    three = merged(capsys, pytester.path / "merged.jsonl", *jobs)
    assert three == one
    status, summary, records, report = three
    assert status == 1 and len(records) == FILES * PER_FILE
    assert "12 tests: 8 passed, 4 failed" in summary and "semantictest  8 passed, 4 failed" in summary
    assert report.count('<tr class="failed">') == 4
    baseline = run_pytest(
        pytester,
        "-p",
        "no:pytest_split",
        f"--semantictest-baseline={pytester.path / 'merged.jsonl'}",
        "--semantictest-fail-on-regression",
    )
    baseline.assert_outcomes(passed=8, failed=4)
    assert (
        "regressed" not in baseline.stdout.str().split("semantictest")[-1]
        or "0 regressed" in baseline.stdout.str()
    )


def test_without_the_file_rule_pytest_split_cuts_a_file(pytester: pytest.Pytester) -> None:
    """The rule above can fail: pytest-split alone puts the second file's first test in the first job."""
    suite(pytester)
    result = run_pytest(
        pytester,
        "--splits",
        "3",
        "--group",
        "1",
        "-p",
        "no:semantictest-split",
        "--co",
        "-q",
        own_process=True,
    )
    assert "file1.json::t0" in result.stdout.str() and "file1.json::t1" not in result.stdout.str()
    kept = run_pytest(pytester, "--splits", "3", "--group", "1", "--co", "-q", own_process=True)
    assert "file1.json::t2" in kept.stdout.str() and "file2.json" not in kept.stdout.str()  # the whole file
    kept.stdout.fnmatch_lines(["6/12 tests collected (6 deselected)*"])


def test_a_test_two_jobs_ran_is_refused(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {"id": "a.json::t", "outcome": "passed", "results_version": 1}
    for name in ("one", "two"):
        (pytester.path / f"{name}.jsonl").write_text(json.dumps(record) + "\n")
    assert main(["merge", str(pytester.path / "one.jsonl"), str(pytester.path / "two.jsonl")]) == 4
    assert "a.json::t is in" in capsys.readouterr().err
    (pytester.path / "old.jsonl").write_text(json.dumps({**record, "results_version": 99}) + "\n")
    assert main(["merge", str(pytester.path / "old.jsonl")]) == 4
    assert "old.jsonl:1 is results format 99" in capsys.readouterr().err
    assert main(["merge", str(pytester.path / "missing.jsonl")]) == 4
    assert "missing.jsonl does not exist: give the results files the jobs wrote" in capsys.readouterr().err


def test_merge_history_pools_the_runs_of_several_results_files(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """``merge --history``: the same test in several runs' files is one record of all its runs, which
    the baseline comparison reads as the test's history."""
    for i in range(3):
        record = {
            "id": "a.json::t",
            "file": "a.json",
            "outcome": "failed" if i == 1 else "passed",
            "latency_ms": 10.0 + i,
            "results_version": 1,
        }
        (pytester.path / f"run{i}.jsonl").write_text(json.dumps(record) + "\n")
    out = pytester.path / "history.jsonl"
    files = [str(pytester.path / f"run{i}.jsonl") for i in range(3)]
    assert main(["merge", *files, "--history", "-o", str(out)]) == 0
    capsys.readouterr()
    (pooled,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert pooled["runs"] == ["passed", "failed", "passed"] and pooled["history"] == 3
    assert pooled["run_durations_ms"] == [10.0, 11.0, 12.0]
