"""The main command (``python -m pytest examples``) replays the examples' recorded judge answers
offline: every judged check runs, and the summary shows the verdicts with scores and reasons."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_examples_replay_their_judge_answers_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTEST_"))}
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"  # were anything sent, it would fail: replay sends nothing
    run = subprocess.run([sys.executable, "-m", "pytest", "examples", "-p", "no:cacheprovider", "-q"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)
    out = run.stdout
    assert run.returncode == 0, out[-4000:]
    assert "32 passed in" in out and "skipped" not in out  # every example, judged ones included
    assert "judge verdicts: 3 passed, 0 not passed, in 2 judged test(s)" in out
    assert "LLMJudge: score 0.935 >= threshold 0.7 (passed): 14:00 is 2 PM" in out
    assert "held: The reply starts with \"Echo:\"" in out
    assert "semantictest: 0 LLM calls, 2 cache hits, 0 tokens" in out
    assert "not evaluated" not in out and "LLM judge not configured" not in out


def test_the_examples_use_only_public_api() -> None:
    """A conftest in examples/ imports ``pytest_semantictest.api`` only, and never writes ``config.option``."""
    for path in (ROOT / "examples").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        imports = re.findall(r"^\s*(?:from|import) (pytest_semantictest[\w.]*)", text, re.M)
        assert all(name == "pytest_semantictest.api" for name in imports), (path, imports)
        assert "config.option." not in text, path
