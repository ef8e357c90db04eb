"""``--semantictest-results``: one JSON object per test of every kind, written by the xdist controller."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_pytest
from tests.yao.conftest import EXPENSE_TURNS, results, write_cases
from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent

SECRET = "sk-secret-4242424242"
PLAIN = """
import pytest

def test_ok():
    assert True

def test_broken():
    assert 1 == 2, "numbers differ"

@pytest.mark.skip(reason="not today")
def test_later():
    pass
"""
SUITE = {
    "name": "s",
    "tests": [
        {
            "id": "mock",
            "pipeline": [{"block": "MockData", "config": {"data": {"a": 1}}, "output": "d"}],
            "assertions": {"d.a": 1},
        }
    ],
}


def test_results_file_under_xdist_with_generated_cases(
    pytester: pytest.Pytester,
    chat_agent: ScriptedAgent,
    llm: ConversationFake,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_API_TOKEN", SECRET)
    llm.cases = [
        {
            "id": "gen-1",
            "name": "generated",
            "input": "hello",
            "turns": None,
            "assertions": [{"type": "contains", "value": "help", "path": None, "negate": False}],
        }
    ]
    pytester.makepyfile(test_plain=PLAIN)
    (pytester.path / "suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    write_cases(
        pytester,
        "flows_test",
        {"id": "flow", "name": "Expense flow", "turns": EXPENSE_TURNS},
        {"id": "leaky", "input": f"my token is {SECRET}", "assertions": [{"type": "contains", "value": "x"}]},
    )
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        f"--semantictest-agent-endpoint={chat_agent.url}",
        f"--semantictest-llm-base-url={llm.url}",
        "--semantictest-generate=bot",
        "--semantictest-generate-run",
        "--semantictest-generate-out=generated/bot.jsonl",
        "--semantictest-results=out/results.jsonl",
        "test_plain.py",
        "suite.json",
        "flows_test.jsonl",
    )
    result.assert_outcomes(passed=4, failed=2, skipped=1)
    text = (pytester.path / "out" / "results.jsonl").read_text(encoding="utf-8")
    assert SECRET not in text and "my token is ***" in text
    records = results(pytester, "out/results.jsonl")
    assert set(records) == {
        "test_ok",
        "test_broken",
        "test_later",
        "mock",
        "Expense flow",
        "leaky",
        "generated",
    }
    assert records["test_ok"]["outcome"] == "passed" and records["test_ok"]["format"] == "python"
    assert "numbers differ" in records["test_broken"]["message"]
    assert (records["test_later"]["outcome"], records["test_later"]["message"]) == ("skipped", "not today")
    assert records["mock"]["format"] == "semantictest" and records["mock"]["llm_usage"]["calls"] == 0
    flow = records["Expense flow"]
    assert (flow["id"], flow["format"], flow["outcome"]) == ("flows_test.jsonl::flow", "yao", "passed")
    assert [t["input"] for t in flow["turns"]] == [t["input"] for t in EXPENSE_TURNS]
    assert flow["turns"][2]["tool_calls"][0] == {
        "name": "submit_expense",
        "arguments": {"id": "EXP-1"},
        "result": {"status": "submitted", "reference": "EXP-2025-001"},
    }
    assert flow["duration_s"] > 0 and list(flow)[:6] == [
        "id",
        "name",
        "file",
        "format",
        "outcome",
        "duration_s",
    ]
    assert records["leaky"]["outcome"] == "failed"
    assert records["generated"]["id"].startswith("generated/bot.jsonl::gen-1")
    result.stdout.fnmatch_lines(["semantictest: results of 7 tests in *out/results.jsonl"])
