"""A mutation run scores a weak spec low and names what it misses; a strong one kills most mutants
(the reference fixture: one reply with text and two tool calls, a real agent on loopback)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.helpers import run_pytest
from tests.servers.quiet import QuietHandler, in_thread

REPLY = {
    "choices": [
        {
            "message": {
                "role": "assistant",
                "content": "It is sunny in Paris.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": json.dumps({"city": "Paris", "unit": "celsius"}),
                        },
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {
                            "name": "get_forecast",
                            "arguments": json.dumps({"city": "Paris", "days": 3}),
                        },
                    },
                ],
            }
        }
    ]
}


class Weather(QuietHandler):
    requests: list[str] = []

    def serve(self, body: bytes) -> None:
        Weather.requests.append(self.path)
        data = json.dumps(REPLY).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def spec(url: str, expect: str) -> str:
    return f"""
agent:
  endpoint: "{url}/v1/chat/completions"
  request:
    body:
      messages: [{{role: user, content: "{{{{message}}}}"}}]
  response: choices.0.message.content
  calls_from: reply
suites:
  - name: Weather
    tests:
      - name: weather
        trigger: "What's the weather in Paris?"
        expect:
{expect}
"""


WEAK = """          response:
            contains: "Paris"
"""
STRONG = """          response:
            contains: "Paris"
          function_calls:
            - name: get_weather
              params: {city: "Paris", unit: "celsius"}
            - name: get_forecast
              params: {city: "Paris", days: 3}
          forbid: [delete_records]
"""


def mutation_run(pytester: pytest.Pytester, expect: str) -> tuple[dict[str, Any], str]:
    with in_thread(Weather) as url:
        pytester.makefile(".highbar.yaml", weather=spec(url, expect))
        result = run_pytest(
            pytester,
            "-p",
            "no:cacheprovider",
            "--semantictest-mutate",
            "--semantictest-results=results.jsonl",
        )
    result.assert_outcomes(passed=1)
    record = json.loads((pytester.path / "results.jsonl").read_text().splitlines()[0])
    return record["mutation"], result.stdout.str()


def test_a_spec_checking_only_the_text_scores_low_and_names_the_missing_tool_checks(
    pytester: pytest.Pytester,
) -> None:
    Weather.requests.clear()
    mutation, out = mutation_run(pytester, WEAK)
    assert mutation["score"] < 0.3, mutation
    survived = [m["change"] for m in mutation["survived"]]
    assert "dropped tool call #1 (get_weather)" in survived
    assert 'tool call #1 (get_weather): argument \'city\' "Paris" -> "mutated"' in survived
    assert len(Weather.requests) == 1  # the normal run; every mutant was replayed
    assert "SURVIVED drop_tool_call: dropped tool call #1 (get_weather)" in out
    assert f"score weather.highbar.yaml: {mutation['killed']}/{mutation['total']} = 0.29" in out
    assert "score of the run: " in out
    phase = re.search(r"mutation phase \(replayed, (\d+) mutants\): ([0-9.]+)s", out)
    assert phase and int(phase[1]) == mutation["total"] + len(mutation["left_out"])
    # highbar's settle time (500 ms a turn) is not waited for
    assert float(phase[2]) < 0.5 * int(phase[1]) / 2


def test_checking_tool_names_arguments_and_forbidden_tools_kills_most_mutants(
    pytester: pytest.Pytester,
) -> None:
    mutation, out = mutation_run(pytester, STRONG)
    assert mutation["score"] >= 0.8, mutation
    kinds = {m["kind"] for m in mutation["survived"]}
    assert "drop_tool_call" not in kinds and "change_argument" not in kinds and "add_tool_call" not in kinds
    assert "SURVIVED reorder_tool_calls" in out  # the spec does not say `ordered: true`


def test_without_the_option_nothing_is_mutated(pytester: pytest.Pytester) -> None:
    Weather.requests.clear()
    with in_thread(Weather) as url:
        pytester.makefile(".highbar.yaml", weather=spec(url, WEAK))
        result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "mutation scores" not in result.stdout.str() and len(Weather.requests) == 1
