"""The SemanticTest ``Spans`` block's ``expect`` entries against the real pydantic-ai agent: a matching
entry passes (name glob, attributes, duration, count); a misspelt attribute name fails with a
did-you-mean drawn from the attribute names the spans carry; an unknown entry key is the file's
problem with a did-you-mean. The run is shared with other tests of this folder
(``tests/traces/shared_runs.py``), which check their own files there."""

from __future__ import annotations

import json
from pathlib import Path

from tests.traces.shared_runs import SharedRun


def spans_test(test_id: str, expect: list[dict[str, object]]) -> dict[str, object]:
    return {
        "id": test_id,
        "pipeline": [
            {
                "block": "HttpRequest",
                "input": {
                    "url": "${env.OTEL_AGENT_URL}/chat",
                    "method": "POST",
                    "body": {"message": "What's the weather in Paris?"},
                },
                "output": "response",
            },
            {"block": "Spans", "config": {"waitMs": 8000, "expect": expect}, "output": "trace"},
        ],
        "assertions": {"trace.passed": True},
    }


def write_expectations(folder: Path) -> None:
    """This module's files, for the shared run with the receiver (``tests/traces/shared_runs.py``): its
    conftest starts the agent with this folder's recipe (``otel_agent_conftest.py``)."""
    good: list[dict[str, object]] = [
        {
            "name": "execute_tool *",
            "attributes": {"gen_ai.tool.name": "get_weather"},
            "status": "unset",
            "maxMs": 20000,
            "count": 1,
        },
        {"name": "chat *", "count": {"min": 2, "max": 2}},
    ]
    misspelt: list[dict[str, object]] = [
        {"name": "execute_tool *", "attributes": {"gen_ai.tool.nme": "get_weather"}}
    ]
    suite = {"name": "s", "tests": [spans_test("good", good), spans_test("misspelt", misspelt)]}
    (folder / "spans.json").write_text(json.dumps(suite))
    typo = {"name": "t", "tests": [spans_test("typo", [{"nmae": "x"}])]}
    (folder / "typo.json").write_text(json.dumps(typo))


def test_span_expectations_pass_and_name_a_misspelt_attribute(otel_run: SharedRun) -> None:
    out = otel_run.text("spans.json", "typo.json")
    assert otel_run.outcomes("spans.json", "typo.json") == {"passed": 1, "failed": 1, "errors": 1}, out
    assert "no span carries attribute 'gen_ai.tool.nme' — did you mean 'gen_ai.tool.name'?" in out
    assert "nmae" in out and "did you mean 'name'" in out, out
    assert "Traceback" not in otel_run.stdout
