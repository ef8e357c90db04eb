"""Yao tool assertions over spans, against the real instrumented pydantic-ai agent over its OpenAI chat
completions endpoint (its replies carry no tool calls: they are only in its spans). With the receiver
and no ``calls_from``, a turn with tool assertions reads its calls from its own spans (a later turn
does not count an earlier turn's again); a wrong argument fails naming it; ``calls_from: otel``
without the receiver says how to turn it on. Both runs are shared with other tests of this folder
(``tests/traces/shared_runs.py``), each test checking its own file there."""

from __future__ import annotations

import json
from pathlib import Path

from tests.traces.shared_runs import SharedRun


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


WITH_RECEIVER = 'endpoint: "${OTEL_AGENT_URL}/chat/completions"\nmodel: weather\n'
CALLS_FROM_OTEL = WITH_RECEIVER + "calls_from: otel\n"
FILE = "weather_test.jsonl"


def write(folder: Path, sidecar: str) -> None:
    """The cases and their sidecar, for a shared run (``tests/traces/shared_runs.py``): its conftest
    starts the agent with this folder's recipe (``otel_agent_conftest.py``)."""
    (folder / FILE).write_text("\n".join(json.dumps(c) for c in CASES))
    (folder / "weather_test.agent.yaml").write_text(sidecar)


def test_tool_assertions_read_the_turn_s_spans(otel_run: SharedRun) -> None:
    out = otel_run.text(FILE)
    assert otel_run.outcomes(FILE) == {"passed": 3, "failed": 1}, out
    assert otel_run.category(f"{FILE}::wrong") == ["failed"]
    assert "wrong" in out and "Lima" in out and "Oslo" in out
    assert "Traceback" not in otel_run.stdout


def test_calls_from_otel_without_the_receiver_says_how_to_turn_it_on(no_receiver_run: SharedRun) -> None:
    assert no_receiver_run.ret != 0 and {"failed", "errors"} & set(no_receiver_run.outcomes(FILE)), (
        no_receiver_run.outcomes(FILE)
    )
    assert (
        "calls_from: otel needs the run's OTLP receiver: run pytest with --semantictest-otel"
        in no_receiver_run.text(FILE)
    )
