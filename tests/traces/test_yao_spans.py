"""Yao tool assertions over spans, against the real instrumented pydantic-ai agent over its OpenAI chat
completions endpoint (its replies carry no tool calls: they are only in its spans). With the receiver
and no ``calls_from``, a turn with tool assertions reads its calls from its own spans (a later turn
does not count an earlier turn's again); a wrong argument fails naming it; ``calls_from: otel``
without the receiver says how to turn it on."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_pytest
from tests.traces.otel_agent_conftest import agent_conftest


def tool(city: str, negate: bool = False) -> dict[str, object]:
    found: dict[str, object] = {
        "type": "tool_called",
        "name": {"name": "get_weather", "arguments": {"city": city}},
    }
    return {**found, "negate": True} if negate else found


CASES = [
    {"id": "paris", "input": "What's the weather in Paris?", "assertions": [tool("Paris")]},
    {"id": "wrong", "input": "What's the weather in Oslo?", "assertions": [tool("Lima")]},
    {
        "id": "two-turns",
        "turns": [
            {"input": "What's the weather in Paris?", "assertions": [tool("Paris")]},
            {"input": "And the weather in Tokyo?", "assertions": [tool("Tokyo"), tool("Paris", negate=True)]},
        ],
    },
    {
        "id": "no-tool-assertion",
        "input": "What's the weather in Rome?",
        "assertions": [{"type": "contains", "value": "weather"}],
    },
]


def write(pytester: pytest.Pytester, sidecar: str) -> None:
    pytester.makefile(".jsonl", weather_test="\n".join(json.dumps(c) for c in CASES))
    (pytester.path / "weather_test.agent.yaml").write_text(sidecar)


def test_tool_assertions_read_the_turn_s_spans(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(agent_conftest())
    write(pytester, 'endpoint: "${OTEL_AGENT_URL}/chat/completions"\nmodel: weather\n')
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel", own_process=True)
    out = result.stdout.str()
    result.assert_outcomes(passed=3, failed=1)
    assert "wrong" in out and "Lima" in out and "Oslo" in out
    assert "Traceback" not in out


def test_calls_from_otel_without_the_receiver_says_how_to_turn_it_on(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(agent_conftest())
    write(pytester, 'endpoint: "${OTEL_AGENT_URL}/chat/completions"\nmodel: weather\ncalls_from: otel\n')
    result = run_pytest(pytester, "-p", "no:cacheprovider", own_process=True)
    out = result.stdout.str()
    assert result.ret != 0
    assert "calls_from: otel needs the run's OTLP receiver: run pytest with --semantictest-otel" in out
