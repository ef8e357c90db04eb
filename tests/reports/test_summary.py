"""The terminal summary: per-format counts, flaky tests with k/n, LLM use; -v shows every run."""

from __future__ import annotations

import re

import pytest

from tests.llm.fake_openai import FakeOpenAI
from tests.reports.scenario import Backend, highbar_spec, report_suite, run, write_suite, xdist_run


def section(output: str) -> list[str]:
    """The lines of the semantictest summary section."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"-+ semantictest summary -+", line))
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^[-=]{3,} ", lines[i])), len(lines))
    return lines[start + 1 : end]


def test_per_format_counts_flaky_tests_and_llm_usage(
    pytester: pytest.Pytester, backend: Backend, fake_openai: FakeOpenAI
) -> None:
    fake_openai.rule("I cannot help", 0.15, reasoning="Declines instead of confirming the meeting.")
    write_suite(pytester, report_suite(backend.url, judge=True))
    highbar_spec(pytester)
    result = run(pytester, f"--semantictest-llm-base-url={fake_openai.url}")
    result.assert_outcomes(passed=5, failed=3, errors=1)
    assert section(result.stdout.str()) == [
        "highbar       1 passed, 1 failed",
        "semantictest  4 passed, 2 failed, 1 error",
        "flaky: reports.json::flaky (2/3 runs passed (95% CI 21-94%), needs 2)",
        "judge verdicts: 1 passed, 1 not passed, in 2 judged test(s)",
        "  reports.json::judged",
        "    LLMJudge: score 0.92 >= threshold 0.7 (passed): The response scores 0.92 on every criterion.",
        "  reports.json::judged-low",
        "    LLMJudge: score 0.15 < threshold 0.7 (not passed): Declines instead of confirming the meeting.",
        "semantictest: 2 LLM calls, 0 cache hits, 320 tokens",
        "semantictest: LLM gpt-4o-mini: 320 tokens (240 in, 80 out), cost unknown (no llm-price)",
    ]
    assert "run 1:" not in result.stdout.str()  # one line per run only with -v


def test_verbose_shows_one_line_per_run(pytester: pytest.Pytester, backend: Backend) -> None:
    write_suite(pytester, report_suite(backend.url))
    result = run(pytester, "-v")
    lines = section(result.stdout.str())
    at = lines.index("reports.json::flaky: 2/3 runs passed (95% CI 21-94%), needs 2")
    runs = lines[at + 1 : at + 4]
    found = [re.fullmatch(r"  (run \d): (passed|failed) \(\d+(?:\.\d+)? ms\)(.*)", line) for line in runs]
    shapes = [m for m in found if m is not None]
    assert len(shapes) == len(runs) == 3, runs
    assert [m.group(1) for m in shapes] == ["run 1", "run 2", "run 3"]
    outcomes = sorted((m.group(2), m.group(3)) for m in shapes)  # which run got the 500 varies
    assert [o for o, _ in outcomes] == ["failed", "passed", "passed"] and outcomes[1][1] == outcomes[2][
        1
    ] == ""
    assert re.fullmatch(r": response\.status \(line \d+\): Expected 500 to equal 200", outcomes[0][1]), (
        outcomes
    )


def test_the_same_summary_under_xdist(request: pytest.FixtureRequest) -> None:
    lines = section(xdist_run(request)["output"])
    assert lines[:2] == [
        "semantictest  3 passed, 1 failed, 1 error",
        "flaky: reports.json::flaky (2/3 runs passed (95% CI 21-94%), needs 2)",
    ]
    assert (
        "reports.json::flaky: 2/3 runs passed (95% CI 21-94%), needs 2" in lines
        and sum(x.startswith("  run ") for x in lines) == 3
    )


def test_sessions_without_spec_files_print_no_section(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    assert "semantictest summary" not in result.stdout.str() and "LLM calls" not in result.stdout.str()
