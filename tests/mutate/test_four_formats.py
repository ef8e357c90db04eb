"""The reference fixture in the other formats (highbar's is ``test_mutation_score.py``): one reply with
text and two tool calls from a real loopback agent; a spec checking only that the text contains
"Paris" scores below 0.3 with the dropped and the wrong-argument tool call among its survivors, the
same spec checking tool names, arguments and a forbidden tool kills at least 80%."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers import run_pytest
from tests.mutate.test_mutation_score import Weather
from tests.servers.quiet import in_thread

QUESTION = "What's the weather in Paris?"
CITY = {"get_weather": {"city": "Paris", "unit": "celsius"}, "get_forecast": {"city": "Paris", "days": 3}}


def semantictest(url: str, strong: bool) -> tuple[str, str]:
    pipeline: list[dict[str, Any]] = [
        {
            "block": "HttpRequest",
            "input": {
                "url": f"{url}/v1/chat/completions",
                "method": "POST",
                "body": {"messages": [{"role": "user", "content": QUESTION}]},
            },
            "output": "response",
        },
        {"block": "JsonParser", "input": "${response.body}", "output": {"parsed": "completion"}},
    ]
    assertions: dict[str, Any] = {"completion.choices[0].message.content": {"contains": "Paris"}}
    if strong:
        pipeline.append(
            {
                "block": "ValidateTools",
                "input": {"from": "completion.choices[0].message.tool_calls", "as": "toolCalls"},
                "config": {
                    "expected": list(CITY),
                    "forbidden": ["delete_records"],
                    "maxTools": 2,
                    "validateArgs": CITY,
                },
                "output": "tools",
            }
        )
        assertions |= {"tools.passed": True}
    suite = {"name": "weather", "tests": [{"id": "weather", "pipeline": pipeline, "assertions": assertions}]}
    return "weather.json", json.dumps(suite)


def yao(url: str, strong: bool) -> tuple[str, str]:
    checks: list[dict[str, Any]] = [{"type": "contains", "value": "Paris"}]
    if strong:
        checks += [
            {"type": "tool_called", "name": {"name": name, "arguments": args}} for name, args in CITY.items()
        ]
        checks.append({"type": "tool_called", "name": "delete_records", "negate": True})
    return "weather_test.jsonl", json.dumps({"id": "weather", "input": QUESTION, "assertions": checks})


def compliance(url: str, strong: bool) -> tuple[str, str]:
    checks = ['  choices[0].message.content: contains("Paris")']
    if strong:  # (no forbidden tools in this format: exactly these two calls)
        checks.append("  choices[0].message.tool_calls: length(2)")
        for n, (name, args) in enumerate(CITY.items()):
            checks += [
                f"  choices[0].message.tool_calls[{n}].function.name: {name}",
                f"  choices[0].message.tool_calls[{n}].function.arguments: '{json.dumps(args)}'",
            ]
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": QUESTION}]})
    newline = "\n"
    return (
        "weather.md",
        f"""---
name: weather
version: 1.0
transport: completions
---

# Weather

## Test Cases

### 1. Weather

**Request:**
POST `/v1/chat/completions`
```json
{body}
```

**Strict:**
```yaml
body:
{newline.join(checks)}
```
""",
    )


FORMATS: dict[str, Callable[[str, bool], tuple[str, str]]] = {
    "semantictest": semantictest,
    "yao": yao,
    "compliance": compliance,
}


def mutation_run(pytester: pytest.Pytester, form: str, strong: bool) -> dict[str, Any]:
    with in_thread(Weather) as url:
        name, text = FORMATS[form](url, strong)
        (pytester.path / name).write_text(text)
        if form == "yao":
            (pytester.path / "weather_test.agent.yaml").write_text(f'endpoint: "{url}/v1/chat/completions"\n')
        Weather.requests.clear()
        result = run_pytest(
            pytester,
            "-p",
            "no:cacheprovider",
            "--semantictest-mutate",
            "--semantictest-results=results.jsonl",
            f"--semantictest-compliance-base-url={url}",
        )
        assert len(Weather.requests) == 1  # the normal run's one request: every mutant was replayed
    result.assert_outcomes(passed=1)
    record: dict[str, Any] = json.loads((pytester.path / "results.jsonl").read_text().splitlines()[0])[
        "mutation"
    ]
    assert f"score {name}: {record['killed']}/{record['total']}" in result.stdout.str()
    return record


@pytest.mark.parametrize("form", list(FORMATS))
def test_checking_only_the_text_scores_low_and_names_the_missing_tool_checks(
    pytester: pytest.Pytester, form: str
) -> None:
    record = mutation_run(pytester, form, strong=False)
    assert record["score"] < 0.3, record
    survived = [m["change"] for m in record["survived"]]
    assert "dropped tool call #1 (get_weather)" in survived
    assert 'tool call #1 (get_weather): argument \'city\' "Paris" -> "mutated"' in survived


@pytest.mark.parametrize("form", list(FORMATS))
def test_checking_tool_names_arguments_and_a_forbidden_tool_kills_most(
    pytester: pytest.Pytester, form: str
) -> None:
    record = mutation_run(pytester, form, strong=True)
    assert record["score"] >= 0.8, record
    kinds = {m["kind"] for m in record["survived"]}
    assert not kinds & {"drop_tool_call", "change_argument", "drop_argument", "add_tool_call"}, record[
        "survived"
    ]
