"""Dynamic conversations end to end: the scripted agent, and the fake LLM playing the user."""

from __future__ import annotations

from typing import Any

import pytest

from tests.llm.fake_openai import Reply
from tests.yao.conftest import EXPENSE_CHECKPOINTS, SIMULATOR, results, run, write_cases
from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent


def dynamic(case_id: str, goal: str, checkpoints: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": case_id,
        "mode": "dynamic",
        "checkpoints": checkpoints,
        "simulator": {"options": {"metadata": {"persona": "an employee", "goal": goal}}},
        **extra,
    }


EXPENSE = "submit a $3500 travel expense"
CASES = [
    dynamic("reach-all", EXPENSE, EXPENSE_CHECKPOINTS, input="I want to submit an expense", max_turns=5),
    {**dynamic("first-from-simulator", EXPENSE, EXPENSE_CHECKPOINTS), "simulator": SIMULATOR},
    dynamic(
        "agent-ends",
        EXPENSE,
        [
            *EXPENSE_CHECKPOINTS,
            {
                "id": "receipt",
                "description": "asks for the receipt",
                "assertion": {"type": "contains", "value": "receipt"},
            },
            {"id": "thanks", "required": False, "assertion": {"type": "contains", "value": "thank"}},
        ],
        input="I want to submit an expense",
    ),
    dynamic(
        "goal-achieved",
        "say hello",
        [{"id": "ask_type", "assertion": {"type": "contains", "value": "type of expense"}}],
        input="hello",
    ),
    dynamic(
        "max-turns",
        "chat forever",
        [{"id": "never", "assertion": {"type": "contains", "value": "zzz"}}],
        input="hi",
        max_turns=3,
    ),
    dynamic(
        "after-order",
        "chat forever",
        [
            {
                "id": "confirm",
                "after": ["call_create"],
                "assertion": {"type": "contains", "value": "submitted"},
            },
            {"id": "call_create", "assertion": {"type": "tool_called", "name": "create_expense"}},
        ],
        input="submitted early",
        max_turns=2,
    ),
    dynamic(
        "timeout",
        "chat forever",
        [{"id": "never", "assertion": {"type": "contains", "value": "zzz"}}],
        input="slow 4",
        timeout="1s",
    ),
    dynamic(
        "judged",
        EXPENSE,
        [
            {"id": "asks", "assertion": {"type": "contains", "value": "type of expense"}},
            {
                "id": "confirmed",
                "after": ["asks"],
                "assertion": [
                    {"type": "tool_called", "name": "submit_expense"},
                    {
                        "type": "agent",
                        "criteria": "tells the user the expense was submitted",
                        "threshold": 0.8,
                    },
                ],
            },
        ],
        input="I want to submit an expense",
    ),
]


def test_dynamic_runs_and_their_replay(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, llm: ConversationFake
) -> None:
    write_cases(pytester, "dynamic_test", *CASES)
    result = run(pytester, chat_agent, llm, "--semantictest-results=results.jsonl")
    result.assert_outcomes(passed=3, failed=5)
    result.stdout.fnmatch_lines(
        [
            "conversation (line 3): the agent ended the conversation at turn 3 (awaiting_input: false) with required "
            "checkpoints not reached: receipt (asks for the receipt)",
            "conversation (line 4): the simulator says the goal is achieved after turn 1, but required checkpoints were "
            "not reached: ask_type",
            "conversation (line 5): max turns (3) reached with required checkpoints not reached: never",
            "conversation (line 6): max turns (2) reached with required checkpoints not reached: confirm [its assertion "
            "held at turn 1, before 'call_create' was reached], call_create",
            "conversation (line 7): timeout after 1s (turn 1: waiting for the agent); required checkpoints not reached: "
            "never",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*Captured conversation call*",
            "turn 1 (input) user:  I want to submit an expense",
            "*reached: ask_type",
            "turn 2 (simulator) user:  Business travel, $3500",
            "*reached: call_create",
            "turn 3 (simulator) user:  Yes, confirm",
            "*awaiting input: false",
            "*reached: confirm",
            "checkpoints:",
            "  ask_type     turn 1      asks the expense type",
            "  call_create  turn 2      after ask_type",
            "  confirm      turn 3      after call_create",
            "  receipt      MISSING     asks for the receipt; last check: turn 3: output does not contain 'receipt'*",
            "  thanks       not reached optional*",
        ]
    )
    first = results(pytester)
    reach = first["reach-all"]
    assert reach["outcome"] == "passed"
    assert [(t["turn"], t["source"], t["input"]) for t in reach["turns"]] == [
        (1, "input", "I want to submit an expense"),
        (2, "simulator", "Business travel, $3500"),
        (3, "simulator", "Yes, confirm"),
    ]
    assert [(c["id"], c["turn"]) for c in reach["checkpoints"]] == [
        ("ask_type", 1),
        ("call_create", 2),
        ("confirm", 3),
    ]
    assert reach["turns"][1]["tool_calls"][0]["name"] == "create_expense"
    usage = reach["llm_usage"]
    assert {k: usage[k] for k in ("calls", "cache_hits", "tokens")} == {
        "calls": 2,
        "cache_hits": 0,
        "tokens": 320,
    }
    # per model
    assert (usage["prompt_tokens@gpt-4o-mini"], usage["completion_tokens@gpt-4o-mini"]) == (
        240,
        80,
    )
    assert first["first-from-simulator"]["turns"][0]["source"] == "simulator"
    assert len(first["max-turns"]["turns"]) == 3
    assert first["timeout"]["turns"][0]["error"] == "timeout after 1s (turn 1: waiting for the agent)"
    assert first["timeout"]["duration_s"] < 3.5  # the in-flight turn was interrupted
    simulator_calls = llm.roles().count("simulator_turn")
    # reach-all, first-from-simulator, agent-ends, ... judged
    assert simulator_calls == 2 + 3 + 2 + 1 + 2 + 1 + 2
    # a checkpoint's validator is asked only on replies where its deterministic assertions hold
    assert llm.roles().count("validator_result") == 1
    assert first["judged"]["outcome"] == "passed"
    calls = len(llm.bodies())

    llm.stop()  # replay: every simulator call is cached, so the same conversations happen offline
    again = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        f"--semantictest-agent-endpoint={chat_agent.url}",
        "--semantictest-llm-cache=replay",
        "--semantictest-results=replay.jsonl",
        "-k",
        "not timeout",
    )
    again.assert_outcomes(passed=3, failed=4)
    again.stdout.fnmatch_lines([f"semantictest: 0 LLM calls, {calls} cache hits, 0 tokens"])
    second = results(pytester, "replay.jsonl")

    def transcript(record: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in turn.items() if k != "duration_ms"} for turn in record["turns"]]

    for name, record in second.items():
        assert transcript(record) == transcript(first[name]), name
        assert record["checkpoints"] == first[name]["checkpoints"]


def test_a_simulator_answering_garbage_is_an_error(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, llm: ConversationFake
) -> None:
    llm.queue(Reply(content="Sure! I'd say: book it."), Reply(content='{"goal_achieved": "maybe"}'))
    write_cases(
        pytester,
        "garbage_test",
        dynamic("garbage", EXPENSE, EXPENSE_CHECKPOINTS, input="I want to submit an expense"),
    )
    result = run(pytester, chat_agent, llm)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of yao: garbage*",
            "*simulator error at turn 2: the simulator model (gpt-4o-mini) gave unusable output twice (asked again "
            "once): not a valid simulator answer*",
            "*Captured conversation call*",
            "turn 1 (input) user:  I want to submit an expense",
            "  ask_type     turn 1      asks the expense type",
        ]
    )
    assert not list((pytester.path / ".semantictest" / "cache").rglob("*.json"))  # errors are never cached


def test_a_validator_checkpoint_and_a_simulator_that_is_not_configured(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    validated = [
        {
            "id": "confirm",
            "assertion": {
                "type": "agent",
                "use": "agents:validator",
                "options": {"metadata": {"criteria": "confirms the expense"}},
            },
        }
    ]
    write_cases(
        pytester,
        "offline_test",
        dynamic(
            "needs-simulator",
            EXPENSE,
            [{"id": "x", "assertion": {"type": "contains", "value": "zzz"}}],
            input="hello",
        ),
        dynamic(
            "done-in-one",
            EXPENSE,
            [{"id": "ask", "assertion": {"type": "contains", "value": "type of"}}],
            input="I want to submit an expense",
        ),
        dynamic("needs-validator", EXPENSE, validated, input="hello"),
    )
    result = run(pytester, chat_agent, None, "-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*offline_test.jsonl:1: LLM simulator not configured*",
            "*offline_test.jsonl:3: LLM validator not configured*",
        ]
    )
    result = run(pytester, chat_agent, None, "--semantictest-require-judge", "-k", "needs")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*LLM simulator not configured and --semantictest-require-judge is set*"])
