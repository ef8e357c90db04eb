"""The SemanticTest ``Spans`` block's ``expect`` entries against the real pydantic-ai agent: a matching
entry passes (name glob, attributes, duration, count); a misspelt attribute name fails with a
did-you-mean drawn from the attribute names the spans carry; an unknown entry key is the file's
problem with a did-you-mean."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_pytest
from tests.traces.otel_agent_conftest import agent_conftest


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


def test_span_expectations_pass_and_name_a_misspelt_attribute(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(agent_conftest())
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
    pytester.makefile(".json", spans=json.dumps(suite))
    typo = {"name": "t", "tests": [spans_test("typo", [{"nmae": "x"}])]}
    pytester.makefile(".json", typo=json.dumps(typo))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel", own_process=True)
    out = result.stdout.str()
    result.assert_outcomes(passed=1, failed=1, errors=1)
    assert "no span carries attribute 'gen_ai.tool.nme' — did you mean 'gen_ai.tool.name'?" in out
    assert "nmae" in out and "did you mean 'name'" in out, out
    assert "Traceback" not in out
