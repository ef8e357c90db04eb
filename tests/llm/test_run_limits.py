"""The run's one LLM rate limit and budget (``llm/limits.py``), shared by xdist workers, against the
fake OpenAI-compatible server that records when each request arrived."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_pytest
from tests.llm.fake_openai import FakeOpenAI, status
from tests.llm.test_llm_pytest import judged, url, write

FILES = 8


def many_files(pytester: pytest.Pytester, count: int = FILES) -> None:
    """One judged test a file, each with its own prompt (no cache hit), so xdist spreads them."""
    for i in range(count):
        write(pytester, judged(f"t{i}", f"The meeting is at 14:{i:02d}."), name=f"suite{i}")


def test_requests_per_window_hold_across_workers_and_the_summary_sums_them(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    """Two workers show the limit is the run's, not each process's: with a limit of its own each worker
    would send 3 of its 4 at once (6 in the window). The same run's terminal summary adds up both
    workers' calls and tokens (8 answers of 160)."""
    many_files(pytester)
    result = run_pytest(
        pytester,
        url(fake_openai),
        "-n",
        "2",
        "--semantictest-llm-cache=off",
        "--semantictest-llm-rpm=3",
        "--semantictest-llm-rate-window=1",
    )
    result.assert_outcomes(passed=FILES)
    assert fake_openai.count == FILES
    # The property the provider sees, whatever the load: the 4th of any 4 requests was admitted only
    # once one of the others had been done for a window, and that one had arrived before it was done,
    # so no 4 arrivals fall within less than a window. (A little under it: the two clocks are read
    # by different processes.)
    assert fake_openai.most_in(0.9) <= 3
    result.stdout.fnmatch_lines(["semantictest: LLM rate limit: * request(s) waited, * s in all"])
    result.stdout.fnmatch_lines([f"semantictest: {FILES} LLM calls, 0 cache hits, {FILES * 160} tokens"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two workers"])
def test_a_long_wait_is_shown_as_it_starts(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, workers: list[str]
) -> None:
    """One request a second: the later ones wait for it, and each wait over half a second gets its line
    while it lasts (on the terminal reporter, or on a worker's stderr), the summary their count."""
    many_files(pytester, 3)
    # (a worker writes to the file descriptor)
    result = run_pytest(
        pytester,
        url(fake_openai),
        *workers,
        "--semantictest-llm-cache=off",
        "--semantictest-llm-rpm=1",
        "--semantictest-llm-rate-window=1.5",
        own_process=bool(workers),
    )
    result.assert_outcomes(passed=3)
    shown = [line for line in result.outlines + result.errlines if "waiting" in line]
    assert 2 <= len(shown) <= 3 and all(
        "for the LLM rate limit (1 requests per 1.5 s to gpt-4o-mini)" in line for line in shown
    ), shown
    result.stdout.fnmatch_lines(["semantictest: LLM rate limit: * request(s) waited, * s in all"])


def test_a_short_wait_is_not_shown(pytester: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    """Below half a second the wait only counts in the summary (the check above can fail: no line)."""
    many_files(pytester, 3)
    result = run_pytest(
        pytester,
        url(fake_openai),
        "--semantictest-llm-cache=off",
        "--semantictest-llm-rpm=1",
        "--semantictest-llm-rate-window=0.2",
    )
    result.assert_outcomes(passed=3)
    assert not [line for line in result.outlines + result.errlines if "waiting" in line]
    result.stdout.fnmatch_lines(["semantictest: LLM rate limit: * request(s) waited, * s in all"])


def test_without_a_limit_the_requests_go_at_once(pytester: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    """The check above can fail: without the limit the same tests send more than 3 within the window
    (in one process, whose look-ahead runs them together: not at the mercy of when workers start)."""
    many_files(pytester)
    result = run_pytest(pytester, url(fake_openai), "--semantictest-llm-cache=off")
    result.assert_outcomes(passed=FILES)
    assert fake_openai.most_in(0.9) > 3


def test_a_token_budget_stops_exactly_when_spent(pytester: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    many_files(pytester)
    results = pytester.path / "results.jsonl"
    # 3 answers of 160, shared by two workers (each with a budget of its own would send 3)
    result = run_pytest(
        pytester,
        url(fake_openai),
        "-n",
        "2",
        "--semantictest-llm-cache=off",
        "--semantictest-llm-budget=480",
        f"--semantictest-results={results}",
    )
    assert fake_openai.count == 3
    result.assert_outcomes(passed=3, errors=FILES - 3)
    assert result.ret == 1
    records = [json.loads(line) for line in results.read_text().splitlines()]
    spent = [r for r in records if r["outcome"] == "error"]
    assert len(spent) == FILES - 3 and all(
        "LLM budget spent (480 of 480 tokens" in r["message"] for r in spent
    )
    result.stdout.fnmatch_lines(
        ["semantictest: LLM gpt-4o-mini: 480 tokens (360 in, 120 out), cost unknown*"]
    )


def test_a_money_budget_needs_and_uses_the_price_table(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    many_files(pytester, 4)
    # 120 in, 40 out at 1000/2000 a million: 0.2 an answer; $0.5 admits two (a third would make 0.6)
    result = run_pytest(
        pytester,
        url(fake_openai),
        "--semantictest-llm-cache=off",
        "--semantictest-llm-budget=$0.5",
        "--semantictest-llm-price=gpt-4o-mini=1000/2000",
    )
    result.assert_outcomes(passed=2, errors=2)
    assert fake_openai.count == 2
    result.stdout.fnmatch_lines(["semantictest: LLM gpt-4o-mini: 320 tokens (240 in, 80 out), cost 0.4000"])
    unpriced = run_pytest(
        pytester, url(fake_openai), "--semantictest-llm-cache=off", "--semantictest-llm-budget=$1"
    )
    unpriced.assert_outcomes(errors=4)
    unpriced.stdout.fnmatch_lines(["*no price for the model 'gpt-4o-mini'*--semantictest-llm-price*"])
    assert fake_openai.count == 2  # nothing sent


def test_retry_after_pauses_every_worker(pytester: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    """One request in flight for the whole run; the first is answered 429 with Retry-After: no worker
    sends again before it has passed."""
    many_files(pytester, 4)
    fake_openai.delay = 0.1  # (requests overlap if two are in flight)
    fake_openai.queue(status(429, retry_after_ms=800))
    result = run_pytest(
        pytester,
        url(fake_openai),
        "-n",
        "2",
        "--semantictest-llm-cache=off",
        "--semantictest-llm-max-in-flight=1",
    )
    result.assert_outcomes(passed=4)
    assert fake_openai.max_in_flight == 1
    first = fake_openai.requests[0]["at"]
    later = [r["at"] - first for r in fake_openai.requests[1:]]
    assert len(later) == 4 and min(later) >= 0.8  # the retry and every other worker's request waited


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--semantictest-llm-budget=lots", "neither a number of tokens (50000) nor money ($2.50)"),
        ("--semantictest-llm-price=gpt-4o-mini=0.15", "must look like 'MODEL=INPUT/OUTPUT'"),
        ("--semantictest-llm-rpm=-1", "--semantictest-llm-rpm must be more than 0"),
    ],
)
def test_malformed_limits_are_usage_errors(pytester: pytest.Pytester, option: str, message: str) -> None:
    result = run_pytest(pytester, option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_the_limits_folder_is_removed(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    many_files(pytester, 1)
    result = run_pytest(
        pytester, url(fake_openai), "--semantictest-llm-cache=off", "--semantictest-llm-rpm=10"
    )
    result.assert_outcomes(passed=1)
    assert not list(Path(pytester.path).glob("semantictest-llm-*"))
