"""Files that share one agent process but talk to it differently each keep their own settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_semantictest.agents import AgentConfig, agent_key
from pytest_semantictest.agents.keys import live_key
from tests.agents.agent_helpers import agent_command
from tests.helpers import run_pytest
from tests.ports import free_port


def mirror_spec(port: int, tag: str) -> str:
    """A spec whose request body carries ``tag`` and whose reply is that body (the /mirror route)."""
    return f"""
agent:
  start: "{agent_command(port)}"
  endpoint: "http://127.0.0.1:{port}/mirror"
  health: "http://127.0.0.1:{port}/health"
  settle_time: 0
  request:
    body: {{message: "{{{{message}}}}", tag: "{tag}"}}
  response: tag
suites:
  - name: Mirror {tag}
    tests:
      - name: sends its own body
        trigger: "which tag?"
        expect:
          response: {{equals: "{tag}"}}
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_one_process_two_request_bodies(pytester: pytest.Pytester, workers: list[str]) -> None:
    port = free_port()
    pytester.makefile(".highbar.yaml", a=mirror_spec(port, "alpha"), b=mirror_spec(port, "beta"))
    result = run_pytest(pytester, "-p", "no:cacheprovider", *workers)
    result.assert_outcomes(passed=2)
    assert len(list(pytester.path.glob(".semantictest/logs/*.log"))) == 1  # still one agent process


def test_keys_separate_turn_settings_not_processes(tmp_path: Path) -> None:
    one = AgentConfig(endpoint="http://127.0.0.1:1/chat", start="agent", cwd=tmp_path, request_body={"a": 1})
    other = AgentConfig(
        endpoint="http://127.0.0.1:1/chat",
        start="agent",
        cwd=tmp_path,
        request_body={"a": 2},
        name="other file",
    )
    assert agent_key(one) == agent_key(other)
    assert live_key(one) != live_key(other) and live_key(one) != live_key(one, "reply")
    renamed = AgentConfig(
        endpoint="http://127.0.0.1:1/chat",
        start="agent",
        cwd=tmp_path,
        request_body={"a": 1},
        name="other file",
    )
    assert live_key(one) == live_key(renamed)  # the same settings from another file share one LiveAgent
