"""The main command (``python -m pytest examples``) replays the examples' recorded judge answers
offline: every judged check runs, and the summary shows the verdicts with scores and reasons."""

from __future__ import annotations

import re

import pytest

from tests.main_command import ROOT, main_command_run


def test_the_examples_replay_their_judge_answers_offline(request: pytest.FixtureRequest) -> None:
    run = main_command_run(request)
    out = run["stdout"]
    assert run["code"] == 0, out[-4000:] + run["stderr"]
    # every example (all four compliance transports, the MCP ones in examples/mcp), judged ones included
    assert "65 passed in" in out and "skipped" not in out
    assert "judge verdicts: 3 passed, 0 not passed, in 2 judged test(s)" in out
    assert "LLMJudge: score 0.935 >= threshold 0.7 (passed): 14:00 is 2 PM" in out
    assert 'held: The reply starts with "Echo:"' in out
    assert "semantictest: 0 LLM calls, 2 cache hits, 0 tokens" in out
    assert "not evaluated" not in out and "LLM judge not configured" not in out


def test_the_examples_use_only_public_api() -> None:
    """A conftest in examples/ imports ``pytest_semantictest.api`` only, and never writes ``config.option``."""
    for path in (ROOT / "examples").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        imports = re.findall(r"^\s*(?:from|import) (pytest_semantictest[\w.]*)", text, re.M)
        assert all(name == "pytest_semantictest.api" for name in imports), (path, imports)
        assert "config.option." not in text, path
