"""LLMJudge semantics (pytest_semantictest.llm.judge) against the fake server."""

from __future__ import annotations

import asyncio
import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.llm import build
from pytest_semantictest.llm.config import LLMConfig, RoleSettings
from pytest_semantictest.llm.errors import LLMError
from pytest_semantictest.llm.judge import request_from_args
from pytest_semantictest.llm.judge_request import JudgeRequest
from pytest_semantictest.llm.verdict import parse_verdict, verdict_schema
from tests.llm.fake_openai import FakeOpenAI, Reply

EXPECTED = {"expectedBehavior": "Confirms the meeting at 2 PM"}


def judge_once(
    server: FakeOpenAI,
    tmp_path: Path,
    inputs: dict[str, Any],
    config: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    client, judge = build(LLMConfig(base_url=server.url, cache_dir=tmp_path / "cache", env={}, **options))
    assert judge is not None

    async def go() -> dict[str, Any]:
        try:
            return await judge.evaluate(inputs, config or {})
        finally:
            await client.aclose()

    return asyncio.run(go())


def prompt(server: FakeOpenAI, n: int = 0) -> str:
    return server.bodies()[n]["messages"][1]["content"]


def test_score_is_the_weighted_sum_computed_by_us(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.rule("14:00", details={"accuracy": 1.0, "completeness": 0.5, "relevance": 0.8})
    out = judge_once(fake_openai, tmp_path, {"text": "Set for 14:00.", "expected": EXPECTED})
    assert out["score"] == pytest.approx(0.4 * 1.0 + 0.3 * 0.5 + 0.3 * 0.8)
    assert out["details"] == {"accuracy": 1.0, "completeness": 0.5, "relevance": 0.8}
    assert out["passed"] is True and out["threshold"] == 0.7 and out["model"] == "gpt-4o-mini"
    assert out["shouldContinue"] is False and out["nextPrompt"] is None and out["constraints"] == []


def test_a_score_the_model_adds_is_not_trusted(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    bad = {
        "reasoning": "r",
        "score": 1.0,
        "details": {"accuracy": 0.1, "completeness": 0.1, "relevance": 0.1},
    }
    good = {"reasoning": "r", "details": {"accuracy": 0.1, "completeness": 0.1, "relevance": 0.1}}
    fake_openai.queue(Reply(content=json.dumps(bad)), Reply(content=json.dumps(good)))
    out = judge_once(fake_openai, tmp_path, {"text": "x", "expected": EXPECTED})
    assert out["score"] == pytest.approx(0.1) and fake_openai.count == 2  # extra key -> asked again


def test_custom_criteria_are_asked_for_exactly(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    criteria = {"accuracy": 0.5, "completeness": 0.3, "clarity": 0.2}
    fake_openai.rule("REST", details={"accuracy": 0.9, "completeness": 0.6, "clarity": 0.5})
    out = judge_once(
        fake_openai, tmp_path, {"text": "REST vs GraphQL ...", "expected": EXPECTED}, {"criteria": criteria}
    )
    assert out["details"] == {"accuracy": 0.9, "completeness": 0.6, "clarity": 0.5}
    assert out["score"] == pytest.approx(0.45 + 0.18 + 0.1)
    schema = fake_openai.bodies()[0]["response_format"]["json_schema"]
    assert schema["strict"] is True and schema["schema"]["properties"]["details"]["required"] == list(
        criteria
    )
    assert "- clarity: Judge the response for clarity." in prompt(fake_openai)


def test_threshold_decides_passed(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.rule("so-so", 0.75)
    out = judge_once(fake_openai, tmp_path, {"text": "so-so", "expected": EXPECTED}, {"threshold": 0.8})
    assert out["score"] == 0.75 and out["passed"] is False and out["threshold"] == 0.8


def test_a_violated_constraint_fails_the_verdict(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.rule("Booked", 0.95, violated=(2,))
    expected = {
        "expectedBehavior": "Books the flight",
        "constraints": ["Must confirm price", "Must ask before booking"],
    }
    out = judge_once(fake_openai, tmp_path, {"text": "Booked!", "expected": expected})
    assert out["score"] == 0.95 and out["passed"] is False
    assert [(c["constraint"], c["met"]) for c in out["constraints"]] == [
        ("Must confirm price", True),
        ("Must ask before booking", False),
    ]
    assert "## Constraints (each must hold)\n1. Must confirm price\n2. Must ask before booking" in prompt(
        fake_openai
    )


def test_prompt_has_text_objects_tool_calls_and_history_but_no_date(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    history = [
        {"role": "user", "content": "I'm looking for a laptop"},
        {"role": "assistant", "content": "Budget?"},
        {"role": "user", "content": "Around $1000"},
    ]
    calls = [{"name": "search", "args": {"max": 1000}}]
    judge_once(
        fake_openai,
        tmp_path,
        {"text": {"message": "Try these"}, "toolCalls": calls, "history": history, "expected": EXPECTED},
    )
    text = prompt(fake_openai)
    assert (
        "## Conversation so far\nuser: I'm looking for a laptop\nassistant: Budget?\nuser: Around $1000"
        in text
    )
    assert '"message": "Try these"' in text and '"name": "search"' in text
    assert "## Tool calls made by the assistant" in text
    today = datetime.date.today()
    everything = json.dumps(fake_openai.bodies()[0])
    for form in (today.isoformat(), str(today.year), today.strftime("%B")):
        assert form not in everything


def test_empty_tool_calls_are_stated_and_absent_ones_omitted(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    judge_once(fake_openai, tmp_path, {"text": "x", "toolCalls": [], "expected": EXPECTED})
    judge_once(fake_openai, tmp_path, {"text": "y", "expected": EXPECTED})
    assert "No tool calls were made." in prompt(fake_openai, 0)
    assert "Tool calls" not in prompt(fake_openai, 1)


def test_continue_conversation_and_max_turns(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.rule("2 PM", should_continue=True, next_prompt="Who is invited?")
    history = [
        {"role": "user", "content": "Schedule a meeting"},
        {"role": "assistant", "content": "When?"},
        {"role": "user", "content": "Tomorrow at 2 PM"},
    ]
    inputs = {"text": "Booked for 2 PM. Location?", "history": history, "expected": EXPECTED}
    out = judge_once(fake_openai, tmp_path, inputs, {"continueConversation": True, "maxTurns": 5})
    assert out["shouldContinue"] is True and out["nextPrompt"] == "Who is invited?"
    assert "This is turn 2 of at most 5." in prompt(fake_openai)
    out = judge_once(fake_openai, tmp_path, inputs, {"continueConversation": True, "maxTurns": 2})
    assert out["shouldContinue"] is False and out["nextPrompt"] is None
    plain = judge_once(fake_openai, tmp_path, inputs)
    assert plain["shouldContinue"] is False
    assert (
        "shouldContinue"
        not in fake_openai.bodies()[-1]["response_format"]["json_schema"]["schema"]["properties"]
    )


def test_model_per_test_then_per_role_then_global(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    inputs = {"text": "x", "expected": EXPECTED}
    judge_once(
        fake_openai, tmp_path, inputs, {"model": "per-test"}, roles={"judge": RoleSettings(model="judge-m")}
    )
    judge_once(
        fake_openai, tmp_path, inputs, roles={"judge": RoleSettings(model="judge-m")}, model="global-m"
    )
    judge_once(fake_openai, tmp_path, inputs, model="global-m")
    assert [b["model"] for b in fake_openai.bodies()] == ["per-test", "judge-m", "global-m"]


def test_out_of_range_scores_are_asked_again_then_an_error(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    ten = json.dumps({"reasoning": "r", "details": {"accuracy": 9, "completeness": 8, "relevance": 10}})
    fake_openai.queue(Reply(content=ten), Reply(content=ten))
    with pytest.raises(LLMError, match="unusable output twice"):
        judge_once(fake_openai, tmp_path, {"text": "x", "expected": EXPECTED})
    assert "less than or equal to 1" in fake_openai.bodies()[1]["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"expected": EXPECTED}, "needs input 'text'"),
        ({"text": "x"}, "needs input 'expected'"),
        ({"text": "x", "expected": {"constraints": []}}, "expected.expectedBehavior"),
        ({"text": "x", "expected": EXPECTED, "history": "hi"}, "'history' must be a list"),
        ({"text": "x", "expected": {"expectedBehavior": "y", "constraints": 3}}, "must be a list of strings"),
    ],
)
def test_bad_inputs_name_what_is_missing(inputs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JudgeRequest.from_inputs(inputs, {})


def test_string_expected_and_body_input_forms() -> None:
    request = JudgeRequest.from_inputs({"body": "hello", "expected": "Greets the user"}, {})
    assert request.text == "hello" and request.expected_behavior == "Greets the user"


def test_verdict_schema_and_parse() -> None:
    schema = verdict_schema(["a", "b"], constraints=2, continue_conversation=True)["schema"]
    assert schema["required"] == ["reasoning", "details", "constraints", "shouldContinue", "nextPrompt"]
    assert schema["additionalProperties"] is False
    ok = {
        "reasoning": "r",
        "details": {"a": 1, "b": 0},
        "constraints": {"1": {"met": True, "reason": ""}, "2": {"met": False, "reason": "no"}},
        "shouldContinue": False,
        "nextPrompt": None,
    }
    assert parse_verdict(json.dumps(ok), ["a", "b"], 2).details == {"a": 1.0, "b": 0.0}
    with pytest.raises(ValueError, match="missing \\['b'\\]"):
        parse_verdict(json.dumps({**ok, "details": {"a": 1}}), ["a", "b"], 2)
    with pytest.raises(ValueError, match="constraints must answer exactly"):
        parse_verdict(json.dumps({**ok, "constraints": {}}), ["a", "b"], 2)
    with pytest.raises(ValueError, match="not a valid verdict"):
        parse_verdict("[]", ["a"], 0)


def test_request_from_fixture_arguments() -> None:
    request = request_from_args("hi", "Greets", constraints=["Polite"], threshold=0.8, tool_calls=[])
    assert request.threshold == 0.8 and request.constraints == ["Polite"] and request.has_tool_calls
