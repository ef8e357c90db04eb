"""Compliance strict ``spans:`` checks against the real instrumented pydantic-ai agent (its OpenAI
chat completions endpoint answers without tool calls: they are only in its spans): counts, span
entries with attributes, status and duration, the tool calls read from the spans, a did-you-mean on
a misspelt attribute name, and collection problems for unknown keys. The runs with the agent are shared
with other tests of this folder (``tests/traces/shared_runs.py``), each test checking its own file there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_pytest
from tests.traces.shared_runs import SharedRun

FRONT = """---
name: weather-spans
version: 1.0
transport: completions
timeout: 30
---

## Setup
- Name: `weather`

## Test Cases
"""


def case(number: int, title: str, city: str, strict: str) -> str:
    return f"""
### {number}. {title}

**Input:** User sends "What's the weather in {city}?" to `weather`

**Strict:**
```yaml
status: 200
{strict.strip()}
```
"""


PASSING = """
spans:
  count: {min: 4}
  errors: 0
  tool_calls:
    "[0].name": get_weather
    "[0].arguments.city": Paris
  match:
    - name: execute_tool get_weather
      attributes:
        gen_ai.tool.name: get_weather
        gen_ai.tool.call.result: contains("sunny")
      status: unset
      duration_ms: {max: 20000}
      count: 1
    - name: /^chat /
      attributes: {gen_ai.request.model: exists}
      count: {min: 2}
"""

MISSPELT = """
spans:
  match:
    - name: execute_tool get_weather
      attributes: {gen_ai.tool.nme: get_weather}
"""

WRONG_CITY = """
spans:
  tool_calls:
    "[0].arguments.city": Oslo
"""

TOO_MANY = """
spans:
  count: {max: 2}
  match:
    - name: /execute_tool/
      count: 2
"""


FILE = "weather.md"


def write_span_checks(folder: Path) -> None:
    """The span checks' file, for the shared run with the receiver (``tests/traces/shared_runs.py``): its
    conftest starts the agent with this folder's recipe (``otel_agent_conftest.py``)."""
    (folder / FILE).write_text(
        FRONT
        + case(1, "Passes", "Paris", PASSING)
        + case(2, "Misspelt attribute", "Paris", MISSPELT)
        + case(3, "Wrong city", "Paris", WRONG_CITY)
        + case(4, "Too many", "Tokyo", TOO_MANY)
    )


def test_span_checks_pass_and_fail_naming_the_difference(otel_run: SharedRun) -> None:
    # (all four cases at once: --semantictest-items-at-once=20)
    out = otel_run.text(FILE)
    assert otel_run.outcomes(FILE) == {"passed": 1, "failed": 3}, out
    assert "no span carries attribute 'gen_ai.tool.nme' — did you mean 'gen_ai.tool.name'?" in out
    assert 'expected "Oslo", got "Paris"' in out
    assert "spans.count: expected <= 2, got 4" in out
    assert 'spans matching {name: "/execute_tool/", count: 2}: expected 2, got 1' in out
    assert "Traceback" not in otel_run.stdout


def test_unknown_span_keys_are_the_case_s_error_with_a_did_you_mean(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".md",
        weather=FRONT
        + case(1, "Typo", "Paris", "spans:\n  cout: 3\n")
        + case(2, "Entry typo", "Paris", "spans:\n  match:\n    - nmae: x\n")
        + case(3, "Bad count", "Paris", "spans:\n  count: {least: 1}\n"),
    )
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-otel")
    out = result.stdout.str()
    result.assert_outcomes(errors=3)
    assert "unknown key 'spans.cout' — did you mean 'count'?" in out
    assert "unknown span key 'nmae' — did you mean 'name'?" in out
    assert "spans.count: expected a number or {min: N, max: N}" in out


def write_needs_spans(folder: Path) -> None:
    """A spans check's file, for the shared run without the receiver."""
    (folder / FILE).write_text(FRONT + case(1, "Needs spans", "Paris", "spans:\n  count: {min: 1}\n"))


def test_without_the_receiver_the_spans_check_says_how_to_turn_it_on(no_receiver_run: SharedRun) -> None:
    assert no_receiver_run.ret != 0 and {"failed", "errors"} & set(no_receiver_run.outcomes(FILE)), (
        no_receiver_run.outcomes(FILE)
    )
    assert "Spans needs the run's OTLP receiver: run pytest with --semantictest-otel" in no_receiver_run.text(
        FILE
    )
