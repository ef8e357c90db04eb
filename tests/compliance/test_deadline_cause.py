"""A hanging agent's ERROR keeps its cause: the exchange owns the case's timeout and reports the state it
reached and the last events; the engine's bound on the case is later by the time reporting takes.
(Repeated beside ``stress-ng --cpu 2`` by hand: the property must hold under load.)"""

from __future__ import annotations

import json

import a2a_sdk_agent  # noqa: E402  (examples/agents is on sys.path: tests/compliance/conftest.py)
import pytest

from pytest_semantictest.formats.compliance.compile import REPORT_S
from tests.compliance.test_a2a_versions import v1_app
from tests.helpers import run_pytest

pytest_plugins = ["pytester"]

HANG = """---
name: a2a-hang
version: 1.0
transport: a2a
timeout: 1
---

## Test Cases

### 1. The agent never finishes

**Input:** User sends "Hello" to `echo-agent`
"""


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_a_hanging_a2a_agent_errors_with_state_and_last_events(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    app = v1_app if version == "1.0" else a2a_sdk_agent.app
    server = a2a_sdk_agent.Server(app, mode="hang").start()
    try:
        pytester.makefile(".md", hang=HANG)
        monkeypatch.setenv("COMPLIANCE_A2A_URL", server.url)
        result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-results=r.jsonl")
    finally:
        server.shutdown()
    result.assert_outcomes(errors=1)
    record = json.loads((pytester.path / "r.jsonl").read_text().splitlines()[0])
    message = json.dumps(record)
    assert "no final event within the case's timeout of 1 s" in message
    assert "last state: working" in message
    working = "TASK_STATE_WORKING" if version == "1.0" else "working"
    assert f"| status-update (state={working})" in message and "last events: task (state=" in message
    assert "timed out after" not in message  # never the engine's bare bound


def test_the_engine_bound_is_the_exchange_bound_plus_time_to_report() -> None:
    from pytest_semantictest.formats.compliance import parse_text
    from pytest_semantictest.formats.compliance.compile import Settings, compile_document

    case = compile_document(parse_text(HANG, "hang.md"), Settings()).cases[0]
    assert case.timeout_s == 1 + REPORT_S and case.steps[0].config["timeout"] == 1000
