"""A mutant whose judged check the replay cache cannot answer is told by the miss itself (counted
where ``ReplayMiss`` is raised), not by a message that mentions one."""

from __future__ import annotations

import pytest

from pytest_semantictest.model import Failure, Outcome, Verdict
from pytest_semantictest.mutate.score import JUDGE_OFFLINE, KILLED, LEFT_OUT, SURVIVED, outcome

MISS_TEXT = "replay cache miss for the judge call (model m, key k): no entry"


def test_a_failure_that_only_mentions_a_cache_miss_kills_the_mutant() -> None:
    said = Verdict(Outcome.FAILED, [Failure("response", f"expected {MISS_TEXT!r} in the reply")])
    assert outcome(said, []) == (KILLED, "")
    assert outcome(Verdict(Outcome.ERROR, error=f"the agent answered: {MISS_TEXT}"), []) == (KILLED, "")


@pytest.mark.parametrize(
    "verdict",
    [
        Verdict(Outcome.ERROR, error="LLM judge error (assertions, line 3): the judge did not answer"),
        Verdict(Outcome.PASSED),
        Verdict(
            Outcome.FAILED, [Failure("score", "Expected 0 to be above 0.7", cause="LLMJudge: no answer")]
        ),
    ],
    ids=["judge error", "passed", "failure behind the judge step"],
)
def test_a_run_whose_judge_missed_is_left_out_unless_a_check_failed_on_its_own(verdict: Verdict) -> None:
    assert outcome(verdict, [], judge_misses=1) == (LEFT_OUT, JUDGE_OFFLINE)


def test_a_check_that_failed_on_its_own_kills_whatever_the_judge_would_say() -> None:
    failed = Verdict(Outcome.FAILED, [Failure("status", "expected 200, got 500")])
    assert outcome(failed, [], judge_misses=2) == (KILLED, "")
    assert outcome(Verdict(Outcome.PASSED), []) == (SURVIVED, "")
