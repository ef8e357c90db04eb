"""Conversation blocks in SemanticTest pipelines: a static Conversation and a SimulatedConversation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.api import arun_suite, compile_suite
from pytest_semantictest.llm import build
from pytest_semantictest.llm.config import LLMConfig
from pytest_semantictest.model import Outcome
from pytest_semantictest.run_context import RunContext
from tests.yao.conftest import EXPENSE_CHECKPOINTS, EXPENSE_TURNS
from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent


def suite(url: str, *tests: dict[str, Any]) -> dict[str, Any]:
    return {"name": "conversations", "context": {"agentUrl": url}, "tests": list(tests)}


def conversation(turns: list[dict[str, Any]], **assertions: Any) -> dict[str, Any]:
    return {
        "id": "conv",
        "pipeline": [
            {
                "block": "Conversation",
                "output": "conv",
                "config": {"agent": {"endpoint": "${agentUrl}"}, "turns": turns},
            }
        ],
        "assertions": assertions,
    }


def simulated(checkpoints: list[dict[str, Any]], test_id: str = "sim", **config: Any) -> dict[str, Any]:
    return {
        "id": test_id,
        "pipeline": [
            {
                "block": "SimulatedConversation",
                "output": "sim",
                "config": {
                    "agent": {"endpoint": "${agentUrl}"},
                    "input": "I want to submit an expense",
                    "simulator": {"options": {"metadata": {"goal": "submit an expense"}}},
                    "checkpoints": checkpoints,
                    **config,
                },
            }
        ],
        "assertions": {"sim.passed": True},
    }


def run(spec: dict[str, Any], llm_url: str | None, tmp_path: Path) -> Any:
    async def go() -> Any:
        client, judge = build(LLMConfig(base_url=llm_url, cache_dir=tmp_path / "cache", retries=0))
        context = RunContext(llm=client, judge=judge, rootdir=tmp_path)
        try:
            return await arun_suite(spec, context)
        finally:
            await context.aclose()

    return asyncio.run(go())


def test_static_conversation_block(chat_agent: ScriptedAgent, tmp_path: Path) -> None:
    passing = conversation(
        EXPENSE_TURNS, **{"conv.passed": True, "conv.turns.length": 3, "conv.stoppedAt": None}
    )
    failing = {
        **conversation(
            [{"input": "hello", "assert": {"type": "contains", "value": "nope"}}, {"input": "again"}]
        ),
        "id": "stops",
    }
    verdicts = run(suite(chat_agent.url, passing, failing), None, tmp_path)
    assert verdicts["conv"].outcome is Outcome.PASSED
    stops = verdicts["stops"]
    # no assertion reads its output: the failing conversation fails the test
    assert stops.outcome is Outcome.FAILED
    assert stops.failures[0].message == (
        "block 'Conversation' (Conversation) failed and no assertion checks its output: "
        "turn 1: contains 'nope': output does not contain 'nope'; got 'Hi! How can I "
        "help?'"
    )
    out = stops.bus["conv"]
    assert (out["passed"], out["stoppedAt"], len(out["turns"])) == (False, 1, 1)
    assert out["failures"] == [
        {
            "turn": 1,
            "check": "contains 'nope'",
            "message": "output does not contain 'nope'; got 'Hi! How can I help?'",
        }
    ]
    assert out["turns"][0]["assertions"][0]["passed"] is False


def test_simulated_conversation_block(chat_agent: ScriptedAgent, tmp_path: Path) -> None:
    with ConversationFake() as fake:
        verdicts = run(
            suite(
                chat_agent.url,
                simulated(EXPENSE_CHECKPOINTS, maxTurns=5),
                simulated(
                    [{"id": "x", "assertion": {"type": "contains", "value": "zzz"}}],
                    "short",
                    maxTurns=2,
                    timeout="30s",
                ),
            ),
            fake.url,
            tmp_path,
        )
        offline = run(
            suite(
                chat_agent.url, simulated([{"id": "x", "assertion": {"type": "contains", "value": "zzz"}}])
            ),
            None,
            tmp_path,
        )
    assert verdicts["sim"].outcome is Outcome.PASSED
    timeline = verdicts["sim"].bus["sim"]["checkpoints"]
    assert [(c["id"], c["turn"]) for c in timeline] == [("ask_type", 1), ("call_create", 2), ("confirm", 3)]
    short = verdicts["short"]
    assert short.outcome is Outcome.FAILED
    assert short.bus["sim"]["reason"] == "max turns (2) reached with required checkpoints not reached: x"
    assert (
        offline["sim"].outcome is Outcome.SKIPPED
        and offline["sim"].skip_reason == "LLM simulator not configured"
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"agent": {"endpoint": "x", "protocl": "openai"}, "turns": [{"input": "a"}]},
            "config.agent: unknown key 'protocl' — did you mean 'protocol'?",
        ),
        (
            {"agent": {"endpoint": "x", "protocol": "grpc"}, "turns": [{"input": "a"}]},
            "protocol must be one of openai",
        ),
        ({"agent": {"endpoint": "x"}, "turns": []}, "config.turns: "),
        (
            {"agent": {"endpoint": "x"}, "turns": [{"input": "a", "assert": {"type": "regex"}}]},
            "config.turns[0].assert[0]: a regex assertion needs 'pattern'",
        ),
    ],
)
def test_conversation_config_is_checked_when_collected(config: dict[str, Any], message: str) -> None:
    spec = {"tests": [{"id": "t", "pipeline": [{"block": "Conversation", "config": config}]}]}
    assert message in (compile_suite(spec).cases[0].error or "")  # a problem of one test is its ERROR


def test_simulated_conversation_config_is_checked_when_collected() -> None:
    spec = simulated(
        [
            {"id": "a", "after": ["b"], "assertion": {"type": "contains", "value": "x"}},
            {"id": "b", "after": ["a"], "assertion": {"type": "contains", "value": "y"}},
        ],
        max_turns=3,
    )
    rendered = compile_suite({"tests": [spec]}).cases[0].error or ""  # a problem of one test is its ERROR
    assert "unknown config key 'max_turns' — did you mean 'maxTurns'?" in rendered
    spec["pipeline"][0]["config"].pop("max_turns")
    rendered = compile_suite({"tests": [spec]}).cases[0].error or ""
    assert "config.checkpoints[0].after: the after order has a cycle: a -> b -> a" in rendered
    assert "max_turns" not in rendered
