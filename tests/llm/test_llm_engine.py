"""LLMJudge inside the engine: honest outcomes, concurrency of judge calls, repeat indexes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.api import arun_suite
from pytest_semantictest.llm import build
from pytest_semantictest.llm.config import LLMConfig
from pytest_semantictest.model import Outcome
from pytest_semantictest.run_context import RunContext, Settings
from tests import helpers
from tests.helpers import mock, suite
from tests.llm.fake_openai import FakeOpenAI, Reply, status


def judge_step(text: str, output: str = "j", **config: Any) -> dict[str, Any]:
    return {
        "block": "LLMJudge",
        "id": output,
        "input": {"text": text, "expected": {"expectedBehavior": "Greets"}},
        "config": config,
        "output": output,
    }


def run(
    spec: dict[str, Any], server: FakeOpenAI | None, tmp_path: Path, require: bool = False, **options: Any
) -> Any:
    async def go() -> Any:
        ctx = RunContext(Settings(require_judge=require), env={})
        if server is not None:
            ctx.llm, ctx.judge = build(
                LLMConfig(base_url=server.url, cache_dir=tmp_path / "cache", env={}, **options)
            )
        try:
            return await arun_suite(spec, ctx)
        finally:
            await ctx.aclose()

    return asyncio.run(go())


def one(
    pipeline: list[dict[str, Any]],
    assertions: dict[str, Any],
    server: FakeOpenAI | None,
    tmp_path: Path,
    **options: Any,
) -> Any:
    return run(suite(helpers.test_case(pipeline, assertions)), server, tmp_path, **options).verdict


def test_judged_pass_and_fail(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.rule("Go away", 0.1, reasoning="Rude")
    assert one(
        [judge_step("Hello!")], {"j.score": {"gt": 0.7}, "j.passed": True}, fake_openai, tmp_path
    ).passed
    verdict = one([judge_step("Go away")], {"j.score": {"gt": 0.7}}, fake_openai, tmp_path)
    assert verdict.outcome is Outcome.FAILED and verdict.failures[0].actual == 0.1


def test_judge_failure_is_an_error_and_stops_the_pipeline(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(*[status(500)] * 3)
    pipeline = [mock({"a": 1}), judge_step("Hello!"), mock({"b": 2}, output="after")]
    verdict = one(
        pipeline, {"d.a": 1, "j.score": {"gt": 0.7}, "after.b": 3}, fake_openai, tmp_path, retries=2
    )
    # checks on j and on the steps it kept from running are not evaluated
    assert verdict.outcome is Outcome.ERROR
    assert "LLM judge error in step 'j' (LLMJudge" in verdict.error and "HTTP 500" in verdict.error
    assert [t.step.id for t in verdict.trace] == ["MockData", "j"] and verdict.trace[1].output is None
    assert "j" not in verdict.bus
    fake_openai.queue(status(500))
    failing = one(pipeline, {"d.a": 2, "j.score": {"gt": 0.7}}, fake_openai, tmp_path, retries=0)
    assert failing.outcome is Outcome.FAILED  # a failure that does not depend on the judge wins
    assert [f.check for f in failing.failures] == ["d.a"] and "LLM judge error" in (failing.error or "")


def test_without_judge_skipped_or_error_when_required(tmp_path: Path) -> None:
    assert one([judge_step("Hi")], {"j.score": {"gt": 0.7}}, None, tmp_path).outcome is Outcome.SKIPPED
    spec = suite(helpers.test_case([judge_step("Hi")], {"j.score": {"gt": 0.7}}))
    verdict = run(spec, None, tmp_path, require=True).verdict
    assert verdict.outcome is Outcome.ERROR and "--semantictest-require-judge" in verdict.error


def test_bad_judge_input_is_a_block_error_before_any_call(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    step = {"block": "LLMJudge", "input": {"expected": {"expectedBehavior": "x"}}, "output": "j"}
    verdict = one([step], {"j.error": {"contains": "needs input 'text'"}}, None, tmp_path)
    assert verdict.passed and fake_openai.count == 0


def test_independent_judge_steps_run_concurrently(tmp_path: Path) -> None:
    with FakeOpenAI(delay=0.2) as server:
        one([judge_step("warm-up")], {}, server, tmp_path)
        steps = [judge_step(f"answer {i}", output=f"j{i}") for i in range(10)]
        verdict = one(steps, {f"j{i}.score": {"gt": 0.7} for i in range(10)}, server, tmp_path)
    assert verdict.passed and [t.step.id for t in verdict.trace] == [f"j{i}" for i in range(10)]
    assert server.max_in_flight == 10  # all ten calls were answered at once (bench/bench_judge.py times it)


def test_dependent_judge_steps_run_in_order(tmp_path: Path) -> None:
    with FakeOpenAI(delay=0.1) as server:
        server.rule("first", should_continue=True, next_prompt="second question")
        first = judge_step("first", output="a", continueConversation=True)
        second = {**judge_step("x", output="b"), "input": {"text": "${a.nextPrompt}", "expected": "Answers"}}
        verdict = one([first, second], {"b.score": {"gt": 0.7}}, server, tmp_path)
        assert server.max_in_flight == 1  # the second call waited for the first one's answer
        assert verdict.passed and "second question" in server.bodies()[1]["messages"][1]["content"]


def test_repeats_overlap_and_each_has_its_own_cache_entry(tmp_path: Path) -> None:
    with FakeOpenAI(delay=0.2) as server:
        one([judge_step("warm-up")], {}, server, tmp_path)
        spec = suite({**helpers.test_case([judge_step("Hello!")], {"j.score": {"gt": 0.7}}), "runs": 10})
        verdict = run(spec, server, tmp_path).verdict
        assert verdict.passed and len(verdict.runs) == 10
        assert server.max_in_flight == 10  # the repeats overlapped
        assert server.count == 11 and len(list((tmp_path / "cache").rglob("*.json"))) == 11
        run(spec, server, tmp_path)
        assert server.count == 11  # every repeat answered from its own entry


def test_one_errored_repeat_among_failures(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(refusal="no"))
    spec = suite({**helpers.test_case([judge_step("Hello!")], {"j.score": {"gt": 0.7}}), "runs": 2})
    verdict = run(spec, fake_openai, tmp_path).verdict
    assert verdict.outcome is Outcome.ERROR and "refused" in verdict.error


def test_judge_error_in_setup_names_the_step(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(refusal="no"))
    spec = suite(helpers.test_case([mock({"a": 1})], {"d.a": 1}), setup=[judge_step("Hello!", output="s")])
    verdict = run(spec, fake_openai, tmp_path).verdict
    assert verdict.outcome is Outcome.ERROR and "setup step 's' (LLMJudge) failed" in verdict.error


@pytest.mark.parametrize("criteria", [{"accuracy": 0.5, "tone": 0.4}, {"accuracy": 10**400}])
def test_criteria_weights_checked_at_collection(criteria: dict[str, float], tmp_path: Path) -> None:
    """A bad config inside one test is that test's error (Case.error), found before the judge is asked."""
    verdict = run(suite(helpers.test_case([judge_step("x", criteria=criteria)], {})), None, tmp_path).verdict
    assert verdict.outcome is Outcome.ERROR and "config.criteria" in (verdict.error or ""), verdict.error
