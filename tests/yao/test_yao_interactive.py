"""Interactive mode: skipped (or failed, when asked) without a terminal; a person answers with one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.blocks import interactive
from pytest_semantictest.engine.runner import run_case
from pytest_semantictest.formats.detect import CollectContext
from pytest_semantictest.formats.yao.compile import compile_file
from pytest_semantictest.model import Outcome
from pytest_semantictest.options import OPTIONS
from pytest_semantictest.run_context import RunContext
from tests.yao.conftest import EXPENSE_CHECKPOINTS, jsonl, write_cases
from tests.yao.scripted_agent import ScriptedAgent


def test_interactive_cases_without_a_terminal(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    write_cases(
        pytester,
        "people_test",
        {
            "id": "needs-a-person",
            "input": "I want to submit an expense",
            "interactive": {"enabled": True, "timeout": "2m"},
        },
        {"id": "scripted", "input": "hello"},
    )
    base = ["-p", "no:cacheprovider", "-rs", f"--semantictest-agent-endpoint={chat_agent.url}"]
    result = pytester.runpytest_inprocess(*base)
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*interactive case: needs a person at the terminal, but CI is set (run it locally "
            "with a terminal, or --semantictest-on-missing-input=fail to fail instead)"
        ]
    )
    result = pytester.runpytest_inprocess(*base, "--semantictest-interactive")
    result.assert_outcomes(skipped=2)  # the run option makes every case interactive
    result = pytester.runpytest_inprocess(*base, "--semantictest-on-missing-input=fail")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["interactive (line 1): interactive case: needs a person at the terminal, but CI is set"]
    )
    assert chat_agent.user_messages() == ["hello", "hello"]  # the interactive case never reached the agent


def test_no_terminal_reasons() -> None:
    assert interactive.unavailable_reason({"CI": "1"}) == "CI is set"
    assert (interactive.unavailable_reason({"CI": "false", "PYTEST_XDIST_WORKER": "gw0"}) or "").startswith(
        "tests run on"
    )


class FakeTerminal:
    """Answers prompts from a list (None: the person typed nothing) and records what it showed."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.shown: list[str] = []

    async def ask(self, shown: str, prompt: str, timeout_s: float | None) -> str | None:
        self.shown.append(shown)
        return self.answers.pop(0) if self.answers else None


def compiled(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, *cases: dict[str, Any]) -> Any:
    monkeypatch.setattr(interactive, "unavailable_reason", lambda env=None: None)
    defaults = {name: default for name, _, default, _ in OPTIONS}
    defaults["agent-endpoint"] = url
    path = tmp_path / "people_test.jsonl"
    path.write_text(jsonl(*cases), encoding="utf-8")
    return compile_file(path, CollectContext(tmp_path, tmp_path, {}, defaults.get, ()))


def run(case: Any, terminal: FakeTerminal) -> Any:
    async def go() -> Any:
        session = RunContext(terminal=terminal)
        try:
            return await run_case(case, session, {})
        finally:
            await session.aclose()

    return asyncio.run(go())


def test_a_person_continues_a_static_conversation_while_the_agent_awaits_input(
    tmp_path: Path, chat_agent: ScriptedAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = compiled(
        tmp_path,
        chat_agent.url,
        monkeypatch,
        {
            "id": "p",
            "interactive": {"enabled": True},
            "turns": [
                {"input": "hello", "assertions": [{"type": "contains", "value": "help"}]},
                {"input": "I want to submit an expense"},
            ],
        },
    )
    terminal = FakeTerminal("Business travel, $200", "yes")
    verdict = run(suite.cases[0], terminal)
    assert verdict.outcome is Outcome.PASSED
    last = verdict.trace[-1].output
    assert [(f["turn"], f["source"], f["input"]) for f in last["followups"]] == [
        (3, "person", "Business travel, $200"),
        (4, "person", "yes"),
    ]
    assert last["followups"][-1]["awaiting_input"] is False  # so nobody was asked again
    assert terminal.shown[0] == "[turn 2] agent: What type of expense would you like to submit?"
    assert chat_agent.user_messages() == [
        "hello",
        "I want to submit an expense",
        "Business travel, $200",
        "yes",
    ]


def test_a_person_replaces_the_simulator_when_the_agent_awaits_input(
    tmp_path: Path, chat_agent: ScriptedAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = compiled(
        tmp_path,
        chat_agent.url,
        monkeypatch,
        {
            "id": "p",
            "mode": "dynamic",
            "input": "I want to submit an expense",
            "simulator": {"options": {"metadata": {"goal": "file an expense"}}},
            "checkpoints": EXPENSE_CHECKPOINTS,
            "interactive": {"enabled": True, "timeout": "1m"},
        },
        {
            "id": "q",
            "mode": "dynamic",
            "input": "I want to submit an expense",
            "simulator": {"options": {"metadata": {"goal": "file an expense"}}},
            "checkpoints": EXPENSE_CHECKPOINTS,
            "interactive": {"enabled": True},
        },
    )
    verdict = run(suite.cases[0], FakeTerminal("Business travel, $300", "confirm"))
    assert verdict.outcome is Outcome.PASSED  # no simulator is configured: only the person spoke
    turns = verdict.trace[0].output["turns"]
    assert [t["source"] for t in turns] == ["input", "person", "person"]
    ended = run(suite.cases[1], FakeTerminal(""))
    assert ended.outcome is Outcome.FAILED
    assert ended.failures[0].message.startswith("the person ended the conversation after turn 1")
