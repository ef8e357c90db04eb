"""Compliance files over ``a2a`` (both dialects) and ``realtime``: the example files pass against the
example agents, and broken copies of each agent fail or error the right cases with the cause named."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import a2a_sdk_agent  # noqa: E402  (examples/agents is on sys.path: tests/compliance/conftest.py)
import a2a_webagents_agent  # noqa: E402
import pytest
import realtime_agent  # noqa: E402

from tests.compliance.conftest import REPO
from tests.helpers import run_pytest

pytest_plugins = ["pytester"]
EXAMPLES = REPO / "examples" / "compliance"
AGENTS: dict[str, tuple[Any, str, str]] = {
    "jsonrpc": (a2a_sdk_agent, "COMPLIANCE_A2A_JSONRPC_URL", "a2a-jsonrpc.md"),
    "webagents": (a2a_webagents_agent, "COMPLIANCE_A2A_WEBAGENTS_URL", "a2a-webagents.md"),
    "realtime": (realtime_agent, "COMPLIANCE_REALTIME_URL", "realtime.md"),
}


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``agent(kind, mode)`` starts that example agent (a broken copy for a mode) and points its files at it."""
    started: list[Any] = []

    def start(kind: str, mode: str = "ok") -> None:
        module, variable, _ = AGENTS[kind]
        server, url = module.start_server(0, mode)
        started.append(server)
        monkeypatch.setenv(variable, url)

    yield start
    for server in started:
        server.shutdown()


def run(pytester: pytest.Pytester, kind: str, *args: str, timeout: str = "10") -> pytest.RunResult:
    """The example file of ``kind`` (its ``timeout`` changed when asked) with strict checks only."""
    text = (EXAMPLES / AGENTS[kind][2]).read_text().replace("\ntimeout: 10\n", f"\ntimeout: {timeout}\n")
    (pytester.path / AGENTS[kind][2]).write_text(text)
    return run_pytest(
        pytester, "-p", "no:cacheprovider", "-v", "--semantictest-compliance-strict-only", *args
    )


@pytest.mark.parametrize("kind, cases", [("jsonrpc", 5), ("webagents", 3), ("realtime", 3)])
def test_the_example_files_pass_against_the_example_agents(
    pytester: pytest.Pytester, agent: Any, kind: str, cases: int
) -> None:
    agent(kind)
    run(pytester, kind).assert_outcomes(passed=cases)


def test_a2a_sdk_agent_wrong_text_fails_naming_the_text(pytester: pytest.Pytester, agent: Any) -> None:
    agent("jsonrpc", "wrong_text")
    result = run(pytester, "jsonrpc")
    result.assert_outcomes(passed=2, failed=3)  # the data artifact and the failed task are still right
    result.stdout.fnmatch_lines(['reply text (line *): expected "Echo: Hello A2A", got "Echo: A2A olleH"'])
    result.stdout.fnmatch_lines(["*A2A exchange*", "*artifact-update x2*"])  # the timeline, deltas folded


def test_a2a_sdk_agent_without_final_event_fails_with_the_last_state(
    pytester: pytest.Pytester, agent: Any
) -> None:
    agent("jsonrpc", "drop_final")
    result = run(pytester, "jsonrpc")
    result.stdout.fnmatch_lines(["*1. A streamed task completes with the echo FAILED*"])
    result.stdout.fnmatch_lines(["*the stream ended before the task completed; last state: working*"])


def test_a2a_sdk_agent_json_rpc_error_fails_naming_the_error(pytester: pytest.Pytester, agent: Any) -> None:
    agent("jsonrpc", "rpc_error")
    result = run(pytester, "jsonrpc")
    # case 4 expects a rejection, but a failed task (state: failed), not an error
    result.assert_outcomes(failed=5)
    result.stdout.fnmatch_lines(
        ["*JSON-RPC error -32006: Agent should enqueue Task before TaskStatusUpdateEvent*"]
    )


def test_a2a_hang_is_an_error_at_the_case_timeout(pytester: pytest.Pytester, agent: Any) -> None:
    agent("webagents", "hang")
    result = run(pytester, "webagents", "-k", "streams", timeout="2")
    result.assert_outcomes(errors=1, deselected=2)
    result.stdout.fnmatch_lines(
        [
            "*no final event within the case's timeout of 2 s (a deadline for the whole exchange); "
            "last state: running; last events: task.started (state=running)*"
        ]
    )


def test_webagents_agent_wrong_text_and_dropped_final_event(pytester: pytest.Pytester, agent: Any) -> None:
    agent("webagents", "wrong_text")
    result = run(pytester, "webagents")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        ['reply text (line *): expected "Echo: Hello WebAgents", got "Echo: stnegAbeW olleH"']
    )


def test_webagents_agent_dropped_final_event_fails(pytester: pytest.Pytester, agent: Any) -> None:
    agent("webagents", "drop_final")
    result = run(pytester, "webagents")
    result.assert_outcomes(passed=1, failed=2)  # the failed task ends with its own final event
    result.stdout.fnmatch_lines(["*the stream ended before the task completed; last state: running*"])


@pytest.mark.parametrize(
    "mode, outcomes, cause",
    [
        (
            "wrong_text",
            {"passed": 1, "failed": 2},
            'reply text (line *): expected "Echo: Hello realtime", got *',
        ),
        (
            "close_mid",
            {"passed": 1, "failed": 2},
            "*the socket closed before response.done (close code 1011 (the agent crashed)); last state: in_progress*",
        ),
        (
            "error_event",
            {"failed": 3},
            '*error event: {"type": "server_error", "message": "the model is unavailable"}*',
        ),
    ],
)
def test_broken_realtime_agents(
    pytester: pytest.Pytester, agent: Any, mode: str, outcomes: dict[str, int], cause: str
) -> None:
    agent("realtime", mode)
    result = run(pytester, "realtime")
    result.assert_outcomes(**outcomes)
    result.stdout.fnmatch_lines([cause])


def test_a_card_that_does_not_validate_fails(
    pytester: pytest.Pytester, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The WebAgents card served where the A2A card belongs: AgentCard's required fields are missing."""
    server, url = a2a_webagents_agent.start_server(0)
    monkeypatch.setenv("COMPLIANCE_A2A_JSONRPC_URL", url)
    try:
        shutil.copy(EXAMPLES / "a2a-jsonrpc.md", pytester.path / "a2a-jsonrpc.md")
        result = run_pytest(
            pytester, "-p", "no:cacheprovider", "--semantictest-compliance-strict-only", "-k", "streamed"
        )
    finally:
        server.shutdown()
    result.assert_outcomes(failed=1, deselected=4)
    result.stdout.fnmatch_lines(["*the agent card at */.well-known/agent-card.json answered status 404*"])


def test_expected_failure_keeps_the_cards_problem(
    pytester: pytest.Pytester, agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``**Expected:** failure`` wants the agent to reject the request, and this one does (its endpoint
    answers 4xx), but its A2A card is missing: the case fails on the card, as every other case does."""
    server, url = a2a_webagents_agent.start_server(0)
    monkeypatch.setenv("COMPLIANCE_A2A_JSONRPC_URL", url)
    (pytester.path / "rejects.md").write_text(REJECTED)
    try:
        result = run_pytest(
            pytester, "-p", "no:cacheprovider", "--semantictest-compliance-strict-only", "-rA"
        )
    finally:
        server.shutdown()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the agent card at */.well-known/agent-card.json answered status 404*"])


def test_expected_failure_passes_on_the_rejection_alone(pytester: pytest.Pytester, agent: Any) -> None:
    agent("jsonrpc", "rpc_error")  # a valid card, and a JSON-RPC error for every request
    (pytester.path / "rejects.md").write_text(REJECTED)
    run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-compliance-strict-only").assert_outcomes(
        passed=1
    )


REJECTED = """---
name: rejects
version: 1
transport: a2a
dialect: jsonrpc
---

## Test Cases

### 1. Rejected

**Input:** User sends "fail" to `echo-agent`

**Expected:** failure
"""


def test_nothing_listening_is_an_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPLIANCE_REALTIME_URL", "http://127.0.0.1:9")
    result = run(pytester, "realtime", "-k", "user")
    result.assert_outcomes(errors=1, deselected=2)
    result.stdout.fnmatch_lines(["*ws://127.0.0.1:9/realtime: cannot connect to *"])


def test_assertions_are_judged_on_the_assembled_reply_with_a_stable_prompt(
    pytester: pytest.Pytester, agent: Any
) -> None:
    """The judge sees the transport, the user's message, the reply's state, text and event timeline, and no
    id drawn anew each run: the second run is a cache hit."""
    from tests.compliance.conftest import doc
    from tests.llm.fake_openai import FakeOpenAI, Reply

    agent("webagents")
    case = (
        '### 1. Judged\n\n**Input:** User sends "Bonjour" to `echo-agent`\n\n'
        "**Assertions:**\n- The agent echoes the user\n- The reply is in English\n"
    )
    pytester.makefile(".md", judged=doc(case, transport="a2a", dialect="webagents"))
    verdict = {
        "assertions": {
            "1": {"passed": True, "reason": "it echoes"},
            "2": {"passed": False, "reason": "the reply is French"},
        }
    }
    with FakeOpenAI() as fake:
        fake.queue(Reply(content=json.dumps(verdict)))
        args = ("-p", "no:cacheprovider", f"--semantictest-llm-base-url={fake.url}")
        result = run_pytest(pytester, *args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            ["assertion 2 (line *): The reply is in English", "  judge: not met (*): the reply is French"]
        )
        prompt = fake.bodies()[0]["messages"][1]["content"]
        again = run_pytest(pytester, *args)
    assert "transport a2a (webagents)\nuser: Bonjour" in prompt
    assert 'state: "completed"' in prompt and 'text: "Echo: Bonjour"' in prompt
    assert "task.message x2" in prompt and "127.0.0.1" not in prompt
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["semantictest: 0 LLM calls, 1 cache hits, 0 tokens"])


def test_secrets_are_masked_in_the_reply_and_the_events(pytester: pytest.Pytester, agent: Any) -> None:
    """The API key is sent as a bearer token over the WebSocket too; the realtime agent echoes it back in a
    message, and no report shows it."""
    agent("realtime")
    secret = "sk-transport-secret-1234567890"
    shutil.copy(EXAMPLES / "realtime.md", pytester.path / "realtime.md")
    source = (pytester.path / "realtime.md").read_text()
    (pytester.path / "realtime.md").write_text(source.replace('"Hello realtime"', f'"{secret}"'))
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-compliance-strict-only",
        f"--semantictest-compliance-api-key={secret}",
        "-k",
        "user",
        "-vv",
        "--semantictest-results=results.jsonl",
    )
    result.assert_outcomes(failed=1)  # the text is not "Echo: Hello realtime"
    results = (pytester.path / "results.jsonl").read_text()
    assert secret not in result.stdout.str() and secret not in results
    notes = json.loads(results.splitlines()[0])[
        "notes"
    ]  # the event timeline, deltas folded, in the results file
    assert notes[0]["title"] == "Realtime session" and "response.text.delta x2" in notes[0]["text"]


def test_the_look_ahead_runs_transport_cases_at_once_with_the_verdicts_of_one_by_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.compliance.conftest import doc

    cases = "".join(
        f'### {n}. Wait {n}\n\n**Input:** User sends "wait {n}" to `echo-agent`\n\n**Strict:**\n'
        f'```yaml\nreply:\n  text: "Echo: wait {1 if n == 4 else n}"\n```\n\n'
        for n in range(1, 5)
    )
    pytester.makefile(".md", waits=doc(cases, transport="a2a", dialect="webagents"))
    outcomes = []
    for concurrency in ("4", "1"):
        server, url = a2a_webagents_agent.start_server(0)
        monkeypatch.setenv("COMPLIANCE_A2A_WEBAGENTS_URL", url)
        try:
            result = run_pytest(
                pytester, "-p", "no:cacheprovider", "-v", f"--semantictest-items-at-once={concurrency}"
            )
        finally:
            server.shutdown()
        result.assert_outcomes(passed=3, failed=1)
        outcomes.append(
            (server.max_in_flight, [line for line in result.outlines if "::" in line and "Wait" in line])
        )
    (at_once, verdicts), (alone, one_by_one) = outcomes
    assert at_once >= 2 and alone == 1, (at_once, alone)
    assert [v.split()[-2] for v in verdicts] == [v.split()[-2] for v in one_by_one]


@pytest.mark.parametrize("kind, dialect", [("jsonrpc", "jsonrpc"), ("webagents", "webagents")])
def test_the_dialect_is_found_from_the_agent_card(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str, dialect: str
) -> None:
    """A file naming no dialect: the card the server has decides (COMPLIANCE_A2A_URL for every dialect)."""
    from tests.compliance.conftest import doc

    module = AGENTS[kind][0]
    server, url = module.start_server(0)
    monkeypatch.setenv("COMPLIANCE_A2A_URL", url)
    case = (
        f'### 1. Hi\n\n**Input:** User sends "Hi" to `echo-agent`\n\n**Strict:**\n```yaml\nreply:\n'
        f'  dialect: {dialect}\n  text: "Echo: Hi"\n```\n'
    )
    pytester.makefile(".md", found=doc(case, transport="a2a"))
    try:
        run_pytest(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=1)
    finally:
        server.shutdown()
