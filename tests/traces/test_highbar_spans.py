"""highbar's ``expect.spans`` extension against the real pydantic-ai agent the plugin starts: entries
that hold pass; a misspelt attribute name fails with a did-you-mean from the spans' own names; a
count that does not hold names the closest span; the second turn of a test waits for its own
request's spans; an unknown entry key is a spec error with a did-you-mean. The run with the agent is
shared with other tests of this folder (``tests/traces/shared_runs.py``), each checking its own file."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.helpers import run_pytest
from tests.ports import free_port
from tests.traces.otel_agent_conftest import AGENT
from tests.traces.shared_runs import SharedRun


def spec(port: int, tests: str) -> str:
    start = shlex.join([sys.executable, str(AGENT), str(port)])
    return f"""
agent:
  start: {json.dumps(start)}
  endpoint: "http://127.0.0.1:{port}/chat"
  health: "http://127.0.0.1:{port}/health"
  settle_time: 0
  calls_from: otel
suites:
  - name: Weather
    tests:
{tests}"""


TESTS = """
      - name: holds
        trigger: "What's the weather in Paris?"
        expect:
          function_calls: [{name: get_weather, params: {city: Paris}}]
          spans:
            - name: "execute_tool *"
              attributes: {gen_ai.tool.name: get_weather}
              status: unset
              max_ms: 20000
              count: 1
            - name: "chat *"
              count: {min: 2, max: 2}
      - name: misspelt
        trigger: "What's the weather in Oslo?"
        expect:
          spans:
            - attributes: {gen_ai.tool.nme: get_weather}
      - name: two turns
        turns:
          - trigger: "What's the weather in Paris?"
            expect:
              spans: [{name: "execute_tool *", count: 1}]
          - trigger: "And the weather in Tokyo?"
            expect:
              spans: [{name: "execute_tool *", count: 2}, {name: "invoke_agent *", count: 2}]
      - name: too many
        trigger: "What's the weather in Rome?"
        expect:
          spans: [{name: "execute_tool *", count: 2}]
"""


FILE = "spans.highbar.yaml"


def write_spans_spec(folder: Path, port: int) -> None:
    """The spec, for the shared run with the receiver (``tests/traces/shared_runs.py``): ``port`` is
    the agent's that ``test_framework_agent``'s highbar file there names too (one agent for both)."""
    (folder / FILE).write_text(spec(port, TESTS))


def test_span_entries_hold_or_fail_naming_why(otel_run: SharedRun) -> None:
    out = otel_run.text(FILE)
    assert otel_run.outcomes(FILE) == {"passed": 2, "failed": 2}, out
    assert "no span carries attribute 'gen_ai.tool.nme' — did you mean 'gen_ai.tool.name'?" in out
    assert 'spans matching {"name": "execute_tool *", "count": 2}: expected 2, got 1' in out
    assert "Traceback" not in otel_run.stdout


def test_an_unknown_span_key_is_a_spec_error_with_a_did_you_mean(pytester: pytest.Pytester) -> None:
    tests = """
      - name: typo
        trigger: "hi"
        expect:
          spans: [{nmae: "x"}]
"""
    pytester.makefile(".highbar.yaml", weather=spec(free_port(), tests))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel")
    out = result.stdout.str()
    assert result.ret != 0
    assert "unknown key 'nmae' — did you mean 'name'?" in out, out
