"""Every assertion type on one turn, each with negate, plus script and validator assertions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.checks.assertions import evaluate
from pytest_semantictest.checks.conversation import check_turn
from pytest_semantictest.checks.specs import AssertionSpec
from pytest_semantictest.llm import build
from pytest_semantictest.llm.config import LLMConfig
from pytest_semantictest.run_context import RunContext
from tests.yao.fakes import ConversationFake

TURN: dict[str, Any] = {
    "turn": 1,
    "input": "Business travel, $3500",
    "output": "I created a draft travel expense of $3500. Shall I submit it?",
    "tool_calls": [
        {
            "name": "expense__create_expense",
            "arguments": {"type": "travel", "amount": 3500},
            "result": {"id": "EXP-1", "status": "draft", "total": 3500},
        },
        {"name": "notify", "arguments": {}, "error": "mail server down"},
    ],
}
JSON_TURN: dict[str, Any] = {
    "turn": 1,
    "input": "json please",
    "tool_calls": [],
    "output": '```json\n{"status": "ok", "count": 3, "items": ["a", "b"], "ok": true}\n```',
}


def spec(**raw: Any) -> AssertionSpec:
    return AssertionSpec.model_validate(raw)


CASES: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
    # (assertion, turn, holds)
    (
        {"type": "equals", "value": "I created a draft travel expense of $3500. Shall I submit it?"},
        TURN,
        True,
    ),
    ({"type": "equals", "value": "something else"}, TURN, False),
    (
        {"type": "equals", "value": {"status": "ok", "count": 3, "items": ["a", "b"], "ok": True}},
        JSON_TURN,
        True,
    ),
    ({"type": "equals", "path": "$.count", "value": 3}, JSON_TURN, True),
    ({"type": "equals", "path": "$.ok", "value": 1}, JSON_TURN, False),  # true is not 1
    ({"type": "contains", "value": "draft"}, TURN, True),
    ({"type": "contains", "value": ["draft", "$3500"]}, TURN, True),
    ({"type": "contains", "value": ["draft", "receipt"]}, TURN, False),
    ({"type": "contains", "path": "$.items", "value": "b"}, JSON_TURN, True),
    ({"type": "not_contains", "value": "error"}, TURN, True),
    ({"type": "not_contains", "value": ["receipt", "draft"]}, TURN, False),
    ({"type": "regex", "pattern": r"\$\d{4}"}, TURN, True),
    ({"type": "regex", "value": r"^Shall"}, TURN, False),
    ({"type": "regex", "pattern": "(?i)SHALL I"}, TURN, True),
    ({"type": "json_path", "path": "$.status", "value": "ok"}, JSON_TURN, True),
    ({"type": "json_path", "path": "items[1]", "value": "b"}, JSON_TURN, True),
    ({"type": "json_path", "path": "$.status", "value": ["ok", "done"]}, JSON_TURN, True),  # one of
    ({"type": "json_path", "path": "$.missing"}, JSON_TURN, False),
    ({"type": "json_path", "path": "$.status", "value": "ok"}, TURN, False),  # not JSON
    ({"type": "json_path", "path": "$..items[0]", "value": "a"}, JSON_TURN, True),  # full JSONPath
    ({"type": "type", "value": "string"}, TURN, True),
    ({"type": "type", "value": "object"}, JSON_TURN, True),
    ({"type": "type", "path": "$.count", "value": "number"}, JSON_TURN, True),
    ({"type": "type", "path": "$.count", "value": "integer"}, JSON_TURN, True),
    ({"type": "type", "path": "$.items", "value": "object"}, JSON_TURN, False),
    ({"type": "tool_called", "name": "create_expense"}, TURN, True),  # a namespaced name matches
    ({"type": "tool_called", "value": "delete_expense"}, TURN, False),
    ({"type": "tool_called", "name": ["delete_expense", "notify"]}, TURN, True),  # any of
    ({"type": "tool_called", "name": {"name": "create_expense", "arguments": {"amount": 3500}}}, TURN, True),
    ({"type": "tool_called", "name": {"name": "create_expense", "arguments": {"amount": 10}}}, TURN, False),
    ({"type": "tool_result", "tool": "create_expense", "result": {"status": "draft"}}, TURN, True),
    (
        {"type": "tool_result", "value": {"tool": "create_expense", "result": {"id": "regex:^EXP-\\d$"}}},
        TURN,
        True,
    ),
    ({"type": "tool_result", "tool": "create_expense", "result": {"status": "submitted"}}, TURN, False),
    ({"type": "tool_result", "tool": "notify"}, TURN, False),  # it failed
    ({"type": "tool_result", "tool": "archive"}, TURN, False),  # never called
]


@pytest.mark.parametrize(
    ("raw", "turn", "holds"), CASES, ids=[f"{c[0]['type']}-{i}" for i, c in enumerate(CASES)]
)
def test_assertion_and_its_negation(raw: dict[str, Any], turn: dict[str, Any], holds: bool) -> None:
    assert evaluate(spec(**raw), turn).passed is holds
    negated = evaluate(spec(**raw, negate=True), turn)
    assert negated.passed is not holds
    if holds:
        assert "not to hold, but it did" in negated.message


def test_failure_messages_say_what_was_expected_and_got() -> None:
    outcome = evaluate(spec(type="contains", value="receipt"), TURN)
    assert outcome.message == (
        "output does not contain 'receipt'; got 'I created a draft travel expense of $3500. "
        "Shall I submit it?'"
    )
    outcome = evaluate(spec(type="tool_called", name="delete_expense"), TURN)
    assert outcome.message == "'delete_expense' was not called (called: expense__create_expense, notify)"
    outcome = evaluate(spec(type="json_path", path="$.count", value=4), JSON_TURN)
    assert (outcome.expected, outcome.actual, outcome.message) == (4, 3, "$.count: expected 4, got 3")
    outcome = evaluate(spec(type="tool_result", tool="notify"), TURN)
    assert outcome.message == "'notify' returned an error: mail server down"


def test_custom_message_replaces_the_generated_one_and_keeps_it_as_detail() -> None:
    outcome = evaluate(
        spec(type="contains", value="receipt", message="the agent must ask for a receipt"), TURN
    )
    assert outcome.message == "the agent must ask for a receipt"
    assert outcome.details["detail"].startswith("output does not contain 'receipt'")


# --- script assertions --------------------------------------------------------------------

SCRIPTS = """
def mentions_amount(output, input, value):
    return str(value) in output

def structured(output, input, value, context):
    return {"passed": len(context["tool_calls"]) == value, "message": f"{len(context['tool_calls'])} tool calls"}

def asserting(output):
    assert "receipt" in output, "no receipt requested"
    return True

async def slow_ok(output):
    return True

def broken(output):
    raise KeyError("boom")

def not_a_verdict(output):
    return "yes"
"""


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    (tmp_path / "checks_yao.py").write_text(SCRIPTS, encoding="utf-8")
    return tmp_path


def run_checks(
    raws: list[dict[str, Any]], turn: dict[str, Any], base: Path | None, session: Any = None
) -> Any:
    specs = [spec(**raw) for raw in raws]
    return asyncio.run(check_turn(specs, turn, run_context=session or RunContext(), base_dir=base))


def test_script_assertions_from_a_file_next_to_the_cases(scripts: Path) -> None:
    results = run_checks(
        [
            {"type": "script", "use": "scripts:checks_yao:mentions_amount", "value": 3500},
            {"type": "script", "script": "checks_yao:structured", "value": 2},
            {"type": "script", "use": "checks_yao:structured", "value": 1},
            {"type": "script", "use": "checks_yao:asserting"},
            {"type": "script", "use": "checks_yao:asserting", "negate": True},
            {"type": "script", "use": "checks_yao:slow_ok"},
        ],
        TURN,
        scripts,
    )
    assert [r.passed for r in results] == [True, True, False, False, True, True]
    assert results[2].outcome.message == "2 tool calls"
    assert results[3].outcome.message == "script checks_yao:asserting: no receipt requested"


def test_a_broken_script_is_an_error_not_a_failure(scripts: Path) -> None:
    results = run_checks(
        [
            {"type": "script", "use": "checks_yao:broken"},
            {"type": "script", "use": "checks_yao:not_a_verdict"},
            {"type": "script", "use": "no_such_module_xyz:check"},
            {"type": "script", "use": "checks_yao:missing"},
        ],
        TURN,
        scripts,
    )
    assert all(r.outcome is None for r in results)
    assert results[0].error == "script checks_yao:broken raised KeyError: 'boom'"
    assert "must return True/False" in (results[1].error or "")
    assert "cannot import module 'no_such_module_xyz'" in (results[2].error or "")
    assert "has no function 'missing'" in (results[3].error or "")


# --- validator (agent) assertions ---------------------------------------------------------


def test_validator_assertions_with_threshold_suggestions_and_negate(tmp_path: Path) -> None:
    submitted = {**TURN, "output": "Expense submitted. Reference: EXP-2025-001"}
    raws: list[dict[str, Any]] = [
        {"type": "agent", "use": "agents:validator", "options": {"metadata": {"criteria": "confirms it"}}},
        {"type": "agent", "criteria": "confirms it", "threshold": 0.95},  # 0.9 < 0.95
        {"type": "agent", "value": "confirms it", "negate": True},
    ]

    async def scenario(url: str) -> tuple[Any, Any]:
        client, _ = build(LLMConfig(base_url=url, cache_dir=tmp_path / "cache", retries=0))
        session = RunContext(llm=client)
        try:
            good = await check_turn([spec(**r) for r in raws], submitted, run_context=session)
            bad = await check_turn([spec(**raws[0])], TURN, run_context=session)
        finally:
            await client.aclose()
        return good, bad

    with ConversationFake() as fake:
        good, bad = asyncio.run(scenario(fake.url))
    assert [r.passed for r in good] == [True, False, False]
    assert good[1].outcome.details["score"] == "0.9 < threshold 0.95"
    assert bad[0].outcome.message == "validator: the reply does not confirm the expense"
    assert bad[0].outcome.details["suggestions"] == "Mention the reference number"
    prompt = fake.bodies()[0]["messages"][1]["content"]
    assert "## Criteria\nconfirms it" in prompt and "## The user's message\nBusiness travel, $3500" in prompt
    assert "## Tool calls made by the agent" in prompt and "expense__create_expense" in prompt
    assert len(fake.bodies()) == 4


def test_validator_not_configured_is_not_evaluated_and_an_error_when_required() -> None:
    results = run_checks([{"type": "agent", "criteria": "anything"}], TURN, None, RunContext())
    assert results[0].skipped == "LLM validator not configured"
    strict = RunContext()
    strict.settings.require_judge = True
    assert "--semantictest-require-judge" in (
        run_checks([{"type": "agent", "criteria": "x"}], TURN, None, strict)[0].error or ""
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "contans", "value": "x"}, "unknown assertion type 'contans' — did you mean 'contains'?"),
        ({"type": "regex", "pattern": "("}, "invalid regular expression '('"),
        ({"type": "regex"}, "a regex assertion needs 'pattern' (or 'value')"),
        ({"type": "contains"}, "a contains assertion needs 'value'"),
        ({"type": "json_path", "value": 1}, "a json_path assertion needs 'path'"),
        ({"type": "type", "value": "strng"}, "did you mean 'string'?"),
        ({"type": "tool_called"}, "a tool_called assertion needs 'name' (or 'value')"),
        ({"type": "tool_result", "result": {}}, "a tool_result assertion needs 'tool'"),
        ({"type": "script", "use": "checks.py"}, "a script assertion needs 'use' as 'module:function'"),
        (
            {"type": "script", "script": "scripts.test.Validate"},  # Yao's README spelling: a porting message
            "a script assertion's 'script': 'scripts.test.Validate' names a Yao script (TypeScript, run by Yao), which "
            "pytest-semantictest cannot run: port it to a Python function Validate(output, input, value, context) and "
            "write 'script': 'module:Validate'",
        ),
        ({"type": "agent", "use": "agents:v"}, "an agent assertion needs criteria"),
    ],
)
def test_assertion_spec_problems(raw: dict[str, Any], message: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        spec(**raw)
    assert message in str(info.value)
