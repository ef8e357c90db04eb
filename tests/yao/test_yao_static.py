"""Static conversations end to end: real pytest runs against the scripted agent."""

from __future__ import annotations

import base64
import socket
import sys
from pathlib import Path

import pytest

from tests.ports import free_port
from tests.yao.conftest import EXPENSE_TURNS, run, write_cases
from tests.yao.scripted_agent import ScriptedAgent

HERE = Path(__file__).resolve().parent
TRACE_AGENT = HERE.parent / "agents" / "trace_agent.py"


def test_a_static_flow_passes_one_fails_at_turn_2_and_one_times_out(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    failing = [
        EXPENSE_TURNS[0],
        {
            "input": "Business travel, $3500",
            "assertions": [
                {
                    "type": "tool_called",
                    "name": "delete_expense",
                    "message": "the agent must delete the draft",
                }
            ],
        },
        {"input": "Yes, confirm"},
    ]
    write_cases(
        pytester,
        "expense_test",
        {
            "id": "happy",
            "name": "Expense flow",
            "mode": "static",
            "turns": EXPENSE_TURNS,
            "assertions": [{"type": "regex", "pattern": "EXP-\\d{4}-\\d{3}"}],
        },
        {"id": "fails-at-2", "turns": failing},
        {
            "id": "single",
            "input": "json please",
            "assert": [{"type": "json_path", "path": "$.count", "value": 3}],
        },
        {"id": "expected", "input": "hello", "expected": "Hi! How can I help?"},
        {"id": "slow", "timeout": "2s", "turns": [{"input": "hello"}, {"input": "slow 6"}]},
    )
    result = run(pytester, chat_agent, None, "-v")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "turn 2 (line 5): timeout after 2s (turn 2: waiting for the agent)",
            "*ERROR: timeout after 2s (turn 2: waiting for the agent)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*expense_test.jsonl::happy PASSED*",
            "fails-at-2 (expense_test.jsonl:2)",
            "turn 2: tool_called 'delete_expense' (line 2): the agent must delete the draft",
            "  operator: tool_called",
            "  expected: 'delete_expense'",
            '  actual:   ["create_expense"]',
            "  detail: 'delete_expense' was not called (called: create_expense)",
            "*Captured conversation call*",
            "turn 1 (static) user:  I want to submit an expense",
            "         agent: What type of expense would you like to submit?",
            "turn 2 (static) user:  Business travel, $3500",
            '         tool:  create_expense({"amount": 3500, "type": "travel"}) -> {"id": "EXP-1", "status": "draft"}',
        ]
    )
    assert "turn 3" not in result.stdout.str()
    assert "Captured pipeline trace" not in result.stdout.str()  # the transcript tells the whole story
    sent = chat_agent.user_messages()
    assert sent.count("Yes, confirm") == 1  # only the passing flow reached turn 3


def test_history_options_and_attachments_reach_the_agent(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    (pytester.path / "receipt.png").write_bytes(b"\x89PNG fake")
    write_cases(
        pytester,
        "context_test",
        {
            "id": "memory",
            "options": {"model": "agent-v2", "metadata": {"scenario": "memory", "tier": "gold"}},
            "turns": [
                {"input": "hello there", "options": {"metadata": {"turn": 1}}},
                {
                    "input": "what did I say first?",
                    "assertions": [{"type": "contains", "value": "hello there"}],
                    "options": {"mode": "chat"},
                },
                {
                    "input": "here is my receipt",
                    "attachments": [{"type": "image", "source": "file://receipt.png"}],
                    "assertions": [{"type": "contains", "value": "data:image/png"}],
                },
            ],
        },
        {
            "id": "history-input",
            "input": [
                {"role": "user", "content": "my name is Ada"},
                {"role": "assistant", "content": "Hello Ada"},
                {"role": "user", "content": "what did I say first?"},
            ],
            "assertions": [{"type": "contains", "value": "my name is Ada"}],
        },
    )
    # one test after another: what follows reads the requests in the order the agent got them
    run(pytester, chat_agent, None, "--semantictest-items-at-once=1").assert_outcomes(passed=2)
    first, second, third, history = (r["body"] for r in chat_agent.requests)
    assert first == {
        "model": "agent-v2",
        "metadata": {"scenario": "memory", "tier": "gold", "turn": 1},
        "messages": [{"role": "user", "content": "hello there"}],
    }
    assert second["mode"] == "chat" and second["metadata"] == {"scenario": "memory", "tier": "gold"}
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1] == {"role": "assistant", "content": "Hi! How can I help?"}
    parts = third["messages"][-1]["content"]
    encoded = base64.b64encode(b"\x89PNG fake").decode()
    assert parts == [
        {"type": "text", "text": "here is my receipt"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}"}},
    ]
    assert len(third["messages"]) == 5
    assert [m["content"] for m in history["messages"]] == [
        "my name is Ada",
        "Hello Ada",
        "what did I say first?",
    ]
    assert (
        chat_agent.requests[0]["headers"]["x-highbar-test"]
        != chat_agent.requests[3]["headers"]["x-highbar-test"]
    )


def test_no_agent_skips_and_an_unreachable_one_is_an_error(pytester: pytest.Pytester) -> None:
    write_cases(pytester, "nowhere_test", {"id": "a", "input": "hi"}, {"id": "b", "input": "hi"})
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(
        ["*no agent to test: set --semantictest-agent-endpoint*nowhere_test.agent.yaml*"]
    )
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        f"--semantictest-agent-endpoint=http://127.0.0.1:{free_port()}/v1/chat/completions",
    )
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*the agent could not be used: *nothing answers at 127.0.0.1:*"])


def test_agents_started_from_sidecars_openai_and_highbar(pytester: pytest.Pytester) -> None:
    openai_port, highbar_port = free_port(), free_port()
    (pytester.path / "chat_test.agent.yaml").write_text(
        f"endpoint: http://127.0.0.1:{openai_port}/v1/chat/completions\n"
        f'start: "{sys.executable} {HERE / "scripted_agent.py"} --port {openai_port}"\n'
        f"health: http://127.0.0.1:{openai_port}/health\n",
        encoding="utf-8",
    )
    write_cases(pytester, "chat_test", {"id": "flow", "turns": EXPENSE_TURNS})
    (pytester.path / "orders_test.agent.yaml").write_text(
        f"protocol: highbar\nendpoint: http://127.0.0.1:{highbar_port}/chat\n"
        f'start: "{sys.executable} {TRACE_AGENT} --port {highbar_port}"\n'
        f"health: http://127.0.0.1:{highbar_port}/health\n",
        encoding="utf-8",
    )
    write_cases(
        pytester,
        "orders_test",
        {
            "id": "lookup-then-cancel",
            "turns": [
                {
                    "input": "Where is order 1042?",
                    "assertions": [
                        {
                            "type": "tool_called",
                            "name": {"name": "get_order", "arguments": {"order_id": "1042"}},
                        },
                        {"type": "contains", "value": "shipped"},
                    ],
                },
                {
                    "input": "Please cancel order 1042",
                    "assertions": [
                        {
                            "type": "tool_result",
                            "value": {"tool": "cancel_order", "result": {"cancelled": True}},
                        }
                    ],
                },
            ],
        },
        {
            "id": "no-tools",
            "input": "hello there",
            "assert": {"type": "tool_called", "name": "get_order", "negate": True},
        },
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=3)
    for port in (openai_port, highbar_port):  # both agents were stopped
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0
