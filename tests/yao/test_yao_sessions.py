"""The agent file's ``${ENV}`` values (body, request.body) and highbar session hooks, end to end."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.agents.chat import ChatTarget
from pytest_semantictest.formats.yao.compile import compile_file
from tests.yao.conftest import (
    EXPENSE_CHECKPOINTS,
    jsonl,
    results,
    run,
    write_cases,
    write_session_hooks,
)
from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent
from tests.yao.test_yao_dynamic import dynamic
from tests.yao.test_yao_format import context, problems

# not a secret-looking name (no KEY, TOKEN, ...): only the agent file's expansion makes it a secret
ACCOUNT = "acct-7f3k9q2x"


def test_body_env_reaches_the_agent_expanded_and_is_masked(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLING_ACCOUNT_KEY", ACCOUNT)
    (pytester.path / "acct_test.agent.yaml").write_text(
        f"endpoint: {chat_agent.url}\nmodel: bot-${{BILLING_ACCOUNT_KEY}}\n"
        "body: {account: '${BILLING_ACCOUNT_KEY}', tags: ['t-${BILLING_ACCOUNT_KEY}'], tier: gold}\n",
        encoding="utf-8",
    )
    write_cases(
        pytester,
        "acct_test",
        {
            "id": "shows-account",
            "input": "what is my account?",
            "assertions": [{"type": "contains", "value": "no such words"}],
        },
    )
    result = run(pytester, None, None, "--semantictest-results=results.jsonl")
    result.assert_outcomes(failed=1)
    body = chat_agent.requests[0]["body"]
    assert (body["account"], body["tags"], body["tier"]) == (ACCOUNT, [f"t-{ACCOUNT}"], "gold")
    assert body["model"] == f"bot-{ACCOUNT}"
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["*actual:*Your account is ***.*", "*agent: Your account is ***.*"])
    assert ACCOUNT not in out
    assert ACCOUNT not in (pytester.path / "results.jsonl").read_text(encoding="utf-8")
    assert "Your account is ***." in (pytester.path / "results.jsonl").read_text(encoding="utf-8")


def test_a_missing_variable_names_the_file_key_and_line(tmp_path: Path) -> None:
    path = tmp_path / "env_test.jsonl"
    path.write_text(jsonl({"id": "a", "input": "hi"}), encoding="utf-8")
    sidecar = tmp_path / "env_test.agent.yaml"
    sidecar.write_text(
        "endpoint: http://127.0.0.1:9/v1/chat/completions\nbody:\n  temperature: 0\n"
        "  meta: {account: '${NOT_SET_ACCOUNT}'}\n",
        encoding="utf-8",
    )
    assert problems(path, context(tmp_path)) == [
        f"{sidecar}:4: body.meta.account: environment variable NOT_SET_ACCOUNT is not set"
    ]
    sidecar.write_text(
        "endpoint: http://127.0.0.1:9/v1/chat/completions\nheaders:\n  X-A: ok\n"
        "  X-Account: '${NOT_SET_ACCOUNT}'\n",
        encoding="utf-8",
    )
    assert problems(path, context(tmp_path)) == [
        f"{sidecar}:4: headers.X-Account: environment variable NOT_SET_ACCOUNT is not set"
    ]
    sidecar.write_text(
        "protocol: highbar\nendpoint: http://127.0.0.1:9/chat\n"
        "request: {body: {message: '{{message}}', account: '${NOT_SET_ACCOUNT}'}}\n",
        encoding="utf-8",
    )
    assert problems(path, context(tmp_path)) == [
        f"{sidecar}:3: request.body.account: environment variable NOT_SET_ACCOUNT is not set"
    ]
    sidecar.write_text(
        "protocol: highbar\nendpoint: http://127.0.0.1:9/chat\n"
        "request: {body: {message: '{{message}}', account: '${ACCT}'}}\n",
        encoding="utf-8",
    )
    target = compile_file(path, context(tmp_path, env={"ACCT": ACCOUNT})).cases[0].steps[0].compiled
    assert isinstance(target, ChatTarget)
    assert target.config.request_body == {"message": "{{message}}", "account": ACCOUNT}
    assert target.config.secrets == []  # a plain name, in a body only: not a secret (by name or header only)


HIGHBAR_CASES = [
    dynamic(
        "dyn-passes",
        "submit a $3500 travel expense",
        EXPENSE_CHECKPOINTS,
        input="I want to submit an expense",
        max_turns=5,
    ),
    dynamic(
        "dyn-max-turns",
        "chat forever",
        [{"id": "never", "assertion": {"type": "contains", "value": "zzz"}}],
        input="what is my account?",
        max_turns=2,
    ),
    dynamic(
        "dyn-times-out",
        "chat forever",
        [{"id": "never", "assertion": {"type": "contains", "value": "zzz"}}],
        input="slow 3",
        timeout="1s",
    ),
    dynamic(
        "dyn-agent-error",
        "chat forever",
        [{"id": "never", "assertion": {"type": "contains", "value": "zzz"}}],
        input="break please",
    ),
    {
        "id": "static-passes",
        "turns": [
            {"input": "hello"},
            {"input": "what is my account?", "assertions": [{"type": "contains", "value": "account"}]},
        ],
    },
    {"id": "static-agent-error", "turns": [{"input": "break please"}, {"input": "hello"}]},
]
TURNS = {
    "dyn-passes": 3,
    "dyn-max-turns": 2,
    "dyn-times-out": 1,
    "dyn-agent-error": 1,
    "static-passes": 2,
    "static-agent-error": 1,
}


def test_highbar_sessions_one_per_conversation_static_and_dynamic(
    pytester: pytest.Pytester,
    chat_agent: ScriptedAgent,
    llm: ConversationFake,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BILLING_ACCOUNT_KEY", ACCOUNT)
    session = write_session_hooks(pytester, chat_agent)
    (pytester.path / "hb_test.agent.yaml").write_text(
        f"protocol: highbar\nendpoint: {chat_agent.highbar_url}\n"
        "request: {body: {message: '{{message}}', account: '${BILLING_ACCOUNT_KEY}'}}\n"
        f"session: {session}\n",
        encoding="utf-8",
    )
    write_cases(pytester, "hb_test", *HIGHBAR_CASES)
    result = run(pytester, None, llm, "--semantictest-results=results.jsonl")
    result.assert_outcomes(passed=2, failed=4)
    outcomes = {name: r["outcome"] for name, r in results(pytester).items()}
    assert outcomes == {
        "dyn-passes": "passed",
        "dyn-max-turns": "failed",
        "dyn-times-out": "failed",
        "dyn-agent-error": "failed",
        "static-passes": "passed",
        "static-agent-error": "failed",
    }
    result.stdout.fnmatch_lines(["*timeout after 1s (turn 1: waiting for the agent)*"])

    hooks: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for entry in chat_agent.sessions:
        hooks[entry["name"]][entry["hook"]].append(entry)
    assert sorted(hooks) == sorted(TURNS)
    for name, calls in hooks.items():  # one session per conversation, set up once and torn down once
        assert (len(calls["setup"]), len(calls["teardown"])) == (1, 1), name
        setup, teardown = calls["setup"][0], calls["teardown"][0]
        assert (teardown["test"], teardown["session_id"]) == (setup["test"], setup["session_id"]), name
    assert len({entry["session_id"] for entry in chat_agent.sessions}) == len(TURNS)

    test_of = {calls["setup"][0]["test"]: name for name, calls in hooks.items()}
    log = [(i, r) for i, r in enumerate(chat_agent.requests)]
    for test, name in test_of.items():
        opened = next(i for i, r in log if r["path"] == "/session/setup" and r["body"]["test"] == test)
        closed = next(i for i, r in log if r["path"] == "/session/teardown" and r["body"]["test"] == test)
        turns = [(i, r) for i, r in log if r["path"] == "/chat" and r["headers"]["x-highbar-test"] == test]
        assert len(turns) == TURNS[name], name
        # setup before turn 1, teardown after the last
        assert all(opened < i < closed for i, _ in turns), name
        session_id = hooks[name]["setup"][0]["session_id"]
        # every turn carries it
        assert all(r["headers"].get("x-session") == session_id for _, r in turns), name
        assert all(r["body"]["account"] == ACCOUNT for _, r in turns), name  # request.body ${ENV} expanded

    out = result.stdout.str()
    assert "Your account is ***." in out and ACCOUNT not in out  # dyn-max-turns' transcript, masked


def test_a_teardown_without_setup_still_runs_once_per_conversation(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, llm: ConversationFake
) -> None:
    write_session_hooks(pytester, chat_agent)
    (pytester.path / "down_test.agent.yaml").write_text(
        f"protocol: highbar\nendpoint: {chat_agent.highbar_url}/down\n"
        "session: {teardown: {python: 'session_hooks:teardown'}}\n",
        encoding="utf-8",
    )
    write_cases(
        pytester,
        "down_test",
        {"id": "static", "turns": [{"input": "hello"}, {"input": "hello again"}]},
        HIGHBAR_CASES[1],
    )
    run(pytester, None, llm).assert_outcomes(passed=1, failed=1)
    assert sorted((s["hook"], s["name"], s["session_id"]) for s in chat_agent.sessions) == [
        ("teardown", "dyn-max-turns", "none"),
        ("teardown", "static", "none"),
    ]
