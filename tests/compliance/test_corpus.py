"""The published compliance files (``../shared/corpus/compliance``: ``tests/shared.py``), unedited,
against the example server."""

from __future__ import annotations

import socket
import sys

import pytest

from tests.compliance.conftest import CORPUS, REPO, compliance_server
from tests.ports import free_port
from tests.shared import needs_corpus

pytest_plugins = ["pytester"]
pytestmark = needs_corpus

# Every case's outcome with the example server and no LLM judge, strict checks only.
STRICT_ONLY = {
    "auth/aoauth-basic.md": ["passed"] * 9,
    "multiagent/handoff-basic.md": ["passed"] * 7,
    "transport/completions-basic.md": ["passed", "passed", "failed", "passed", "passed", "passed"],
    "transport/completions-streaming.md": ["passed"] * 4 + ["skipped", "passed"],
    "transport/completions-tools.md": ["passed"] * 3 + ["skipped", "passed", "passed", "skipped", "passed"],
}


def outcomes(result: pytest.RunResult) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in result.stdout.lines:
        for name in STRICT_ONLY:
            if (
                f"{name}::" in line
                and line.rstrip().endswith(("PASSED", "FAILED", "SKIPPED", "ERROR"))
                or (
                    f"{name}::" in line
                    and any(w in line for w in (" PASSED", " FAILED", " SKIPPED", " ERROR"))
                )
            ):
                word = next(w for w in ("PASSED", "FAILED", "SKIPPED", "ERROR") if f" {w}" in line)
                found.setdefault(name, []).append(word.lower())
    return found


@pytest.fixture
def example_plugin(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> list[str]:
    """Arguments that load examples/compliance/conftest.py as a plugin (it starts the example server);
    the rootdir (caches, agent logs) is the test's folder, not the corpus's."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    return [
        "-p",
        "examples.compliance.conftest",
        "-p",
        "no:cacheprovider",
        "-v",
        "-rs",
        f"--rootdir={pytester.path}",
    ]


def test_corpus_collects_without_errors(pytester: pytest.Pytester, example_plugin: list[str]) -> None:
    result = pytester.runpytest_inprocess(*example_plugin, "--co", "-q", str(CORPUS))
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["collected 36 items"])
    assert "error" not in result.stdout.lines[-1]


def test_corpus_strict_checks_against_the_example_server(
    pytester: pytest.Pytester, example_plugin: list[str]
) -> None:
    result = pytester.runpytest_inprocess(
        *example_plugin, "--semantictest-compliance-strict-only", str(CORPUS)
    )
    assert outcomes(result) == STRICT_ONLY, result.stdout.str()
    result.assert_outcomes(passed=32, failed=1, skipped=3)
    # the one failure: an echo agent does not answer from the conversation history
    result.stdout.fnmatch_lines(
        [
            'body choices?0?.message.content (line 101): expected it to contain "Alice", got "Echo: What is my name?"',
            "*operator: contains",
        ]
    )
    result.stdout.fnmatch_lines(["*strict-only: the case has no strict checks*"])


def test_corpus_without_a_judge_reports_assertions_not_evaluated(
    pytester: pytest.Pytester, example_plugin: list[str]
) -> None:
    result = pytester.runpytest_inprocess(*example_plugin, str(CORPUS))
    result.assert_outcomes(failed=1, skipped=35)
    result.stdout.fnmatch_lines(
        [
            "*completions-basic.md:20: 6 strict check(s) passed; 6 natural-language assertion(s) not evaluated: "
            "LLM judge not configured",
            "*completions-tools.md:152: 3 natural-language assertion(s) not evaluated: LLM judge not configured",
        ]
    )
    assert "passed" not in result.stdout.lines[-1]


def test_corpus_against_a_server_the_plugin_starts(pytester: pytest.Pytester) -> None:
    """``--semantictest-compliance-server``: the agent lifecycle starts the server and stops it after."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    tokens = compliance_server.placeholder_tokens(url)
    server = f"{sys.executable} {REPO / 'examples' / 'agents' / 'compliance_server.py'} --port {port}"
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-v",
        f"--rootdir={pytester.path}",
        "--semantictest-compliance-strict-only",
        f"--semantictest-compliance-server={server}",
        f"--semantictest-compliance-base-url={url}",
        *(f"--semantictest-compliance-value={k}={v}" for k, v in tokens.items()),
        str(CORPUS),
    )
    # without the example conftest nobody applies a case's own setup (an agent offline, a changed handoff)
    result.assert_outcomes(passed=30, failed=3, skipped=3)
    result.stdout.fnmatch_lines(
        [
            "*handoff-basic.md::5. Failed Handoff Recovery FAILED*",
            "*handoff-basic.md::6. Chained Handoffs FAILED*",
            "*completions-basic.md::3. Multi-turn Conversation FAILED*",
        ]
    )
    with socket.socket() as s:  # stopped at the end of the run
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_corpus_without_any_placeholder_value(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No token given: all 36 cases collect; the three that need one ERROR saying which, the others run."""
    monkeypatch.setenv("COMPLIANCE_BASE_URL", server.url)
    collected = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", f"--rootdir={pytester.path}", "--co", "-q", str(CORPUS)
    )
    assert collected.ret == 0, collected.stdout.str()
    collected.stdout.fnmatch_lines(["36 tests collected*"])
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "-v",
        f"--rootdir={pytester.path}",
        "--semantictest-compliance-strict-only",
        str(CORPUS),
    )
    # as with the tokens (test_corpus_against_a_server_the_plugin_starts), less the three cases that need one
    result.assert_outcomes(passed=27, failed=3, skipped=3, errors=3)
    result.stdout.fnmatch_lines(
        [
            "*aoauth-basic.md:62: case 2: placeholder {valid_jwt_token} has no value: set the environment variable "
            "VALID_JWT_TOKEN or pass --semantictest-compliance-value valid_jwt_token=...",
        ]
    )
    errors = {
        line.split("::", 1)[1].split(" - ")[0]
        for line in result.stdout.lines
        if line.startswith("ERROR ") and "::" in line
    }
    assert errors == {
        "2. Valid Token Accepted",
        "4. Expired Token Rejected",
        "5. Insufficient Scope Rejected",
    }, errors
