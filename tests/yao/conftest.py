"""Fixtures for the conversation tests: the scripted agent, the fake LLM, and in-process pytest runs
(the root conftest keeps one copy of every library module and fresh plugin state per run)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent


@pytest.fixture(autouse=True)
def _no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def chat_agent() -> Iterator[ScriptedAgent]:
    with ScriptedAgent() as agent:
        yield agent


@pytest.fixture
def llm() -> Iterator[ConversationFake]:
    with ConversationFake() as server:
        yield server


def jsonl(*cases: dict[str, Any], comment: str | None = None) -> str:
    lines = [f"// {comment}"] if comment else []
    return "\n".join(lines + [json.dumps(case) for case in cases]) + "\n"


def write_cases(pytester: pytest.Pytester, name: str, *cases: dict[str, Any]) -> Path:
    path = pytester.path / f"{name}.jsonl"
    path.write_text(jsonl(*cases), encoding="utf-8")
    return path


def run(
    pytester: pytest.Pytester, agent: ScriptedAgent | None, llm: ConversationFake | None, *args: str
) -> Any:
    """``pytest`` (in-process) against the scripted agent and the fake LLM (either may be None)."""
    extra = ["-p", "no:cacheprovider", "-rA"]
    if agent is not None:
        extra.append(f"--semantictest-agent-endpoint={agent.url}")
    if llm is not None:
        extra += [f"--semantictest-llm-base-url={llm.url}", "--semantictest-llm-retries=0"]
    return pytester.runpytest_inprocess(*extra, *args)


def results(pytester: pytest.Pytester, name: str = "results.jsonl") -> dict[str, dict[str, Any]]:
    """The results file's records by test name."""
    lines = (pytester.path / name).read_text(encoding="utf-8").splitlines()
    return {record["name"]: record for record in map(json.loads, lines)}


EXPENSE_TURNS: list[dict[str, Any]] = [
    {
        "input": "I want to submit an expense",
        "assertions": [{"type": "contains", "value": "type of expense"}],
    },
    {
        "input": "Business travel, $3500",
        "assert": [
            {"type": "tool_called", "name": {"name": "create_expense", "arguments": {"amount": 3500}}}
        ],
    },
    {
        "input": "Yes, confirm",
        "assertions": [
            {"type": "contains", "value": "submitted"},
            {"type": "tool_result", "tool": "submit_expense", "result": {"status": "submitted"}},
        ],
    },
]

SIMULATOR = {
    "use": "agents:simulator",
    "options": {"metadata": {"persona": "a new employee", "goal": "submit a $3500 travel expense"}},
}

EXPENSE_CHECKPOINTS = [
    {
        "id": "ask_type",
        "description": "asks the expense type",
        "assertion": {"type": "contains", "value": "type of expense"},
    },
    {
        "id": "call_create",
        "after": ["ask_type"],
        "assertion": {"type": "tool_called", "name": "create_expense"},
    },
    {
        "id": "confirm",
        "after": ["call_create"],
        "assert": {"type": "regex", "pattern": "submitted.*EXP-\\d+"},
    },
]


SESSION_HOOKS = '''"""Session hooks for the scripted agent's highbar protocol: they count at the agent."""
import json
import urllib.request

AGENT = {base!r}
_open = urllib.request.build_opener(urllib.request.ProxyHandler({{}})).open


def _post(hook, payload):
    request = urllib.request.Request(f"{{AGENT}}/session/{{hook}}", data=json.dumps(payload).encode(),
                                     headers={{"Content-Type": "application/json"}})
    with _open(request, timeout=30) as reply:
        return json.loads(reply.read())


def setup(ctx):
    session_id = _post("setup", {{"test": ctx.test_id, "name": ctx.test_name}})["session_id"]
    return {{"id": session_id, "headers": {{"X-Session": session_id}}}}


def teardown(ctx, session):
    _post("teardown", {{"test": ctx.test_id, "name": ctx.test_name, "session_id": session.get("id", "none")}})
'''


def write_session_hooks(
    pytester: pytest.Pytester, agent: ScriptedAgent, module: str = "session_hooks"
) -> str:
    """A hooks module next to the test files whose setup and teardown POST to the scripted agent;
    returns the agent file's ``session:`` value (YAML flow mapping)."""
    base = agent.highbar_url.rsplit("/", 1)[0]
    (pytester.path / f"{module}.py").write_text(SESSION_HOOKS.format(base=base), encoding="utf-8")
    return f"{{setup: {{python: '{module}:setup'}}, teardown: {{python: '{module}:teardown'}}}}"
