"""The agent / agent_factory fixtures from ordinary Python tests (real process, real HTTP)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from tests.ports import free_port

AGENT = Path(__file__).resolve().parent / "trace_agent.py"


def test_agent_fixture_starts_talks_and_stops(pytester: pytest.Pytester) -> None:
    port = free_port()
    pytester.makeini(
        f"""[pytest]
semantictest_agent_endpoint = http://127.0.0.1:{port}/chat
semantictest_agent_start = {sys.executable} {AGENT} --port {port}
semantictest_agent_health = http://127.0.0.1:{port}/health
"""
    )
    pytester.makepyfile(
        """
def test_order(agent):
    reply = agent.send("Where is order 1042?")
    assert "shipped" in reply["response"]
    assert [c["fn"] for c in reply["calls"]] == ["get_order"]
    assert reply["calls"][0]["args"] == {"order_id": "1042"}
    assert agent.tools() == {"get_order", "cancel_order"}

def test_same_process(agent, agent_factory):
    assert agent.send("hello")["calls"] == []
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert len(list(pytester.path.glob(".semantictest/logs/*.log"))) == 1
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_agent_fixture_skips_when_not_configured(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(agent):\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no agent configured*"])
