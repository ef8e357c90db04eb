"""Validator agents: ``type: agent`` assertions in a run, and the ``llm_validator`` fixture."""

from __future__ import annotations

import pytest

from tests.yao.conftest import EXPENSE_TURNS, run, write_cases
from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent


def test_agent_assertions_show_score_reason_and_suggestions(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, llm: ConversationFake
) -> None:
    judged = {
        "type": "agent",
        "use": "agents:validator",
        "options": {
            "metadata": {
                "criteria": "confirms the expense was submitted",
                "threshold": 0.8,
                "tone": "professional",
            }
        },
    }
    turns = [*EXPENSE_TURNS[:2], {**EXPENSE_TURNS[2], "assertions": [judged]}]
    write_cases(
        pytester,
        "judged_test",
        {"id": "confirmed", "turns": turns},
        {
            "id": "not-confirmed",
            "input": "hello",
            "assertions": [judged, {"type": "contains", "value": "Hi"}],
        },
        {
            "id": "negated",
            "input": "hello",
            "assertions": [{**judged, "negate": True, "message": "must not confirm"}],
        },
    )
    result = run(pytester, chat_agent, llm)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "not-confirmed (judged_test.jsonl:2)",
            "reply: agent: confirms the expense was submitted (line 2): validator: the reply does not confirm the expense",
            "  operator: agent",
            "  expected: 'confirms the expense was submitted'",
            "  actual:   'Hi! How can I help?'",
            "  score: 0.3 < threshold 0.8",
            "  suggestions: Mention the reference number",
        ]
    )
    prompts = [b["messages"][1]["content"] for b in llm.bodies()]
    assert any('"tone": "professional"' in p and "## Conversation before the response" in p for p in prompts)


VALIDATOR_TESTS = """
import pytest

def test_good(llm_validator):
    result = llm_validator.check("Expense submitted. Reference: EXP-1", "confirms the submission",
                                 input="submit it", threshold=0.8)
    assert result["score"] == 0.9 and result["passed"]

def test_bad(llm_validator):
    llm_validator.check("Hi!", "confirms the submission")

def test_evaluate_does_not_assert(llm_validator):
    assert llm_validator.evaluate("Hi!", "confirms the submission")["passed"] is False

async def test_async(llm_validator):
    result = await llm_validator.acheck("Expense submitted", "confirms the submission")
    assert result["passed"]
"""


def test_llm_validator_fixture(pytester: pytest.Pytester, llm: ConversationFake) -> None:
    pytester.makepyfile(test_validate=VALIDATOR_TESTS)
    result = run(pytester, None, llm, "-p", "asyncio", "--asyncio-mode=auto")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*LLM validator: the output does not meet the criteria",
            "*validator score: 0.3 (not passed; model gpt-4o-mini)",
            "*reason: the reply does not confirm the expense",
            "*suggestion: Mention the reference number",
        ]
    )
    offline = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs", "-k", "good")
    offline.assert_outcomes(skipped=1)
    offline.stdout.fnmatch_lines(["*LLM validator not configured*"])
