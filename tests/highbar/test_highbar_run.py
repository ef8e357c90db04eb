"""highbar specs end to end: real pytest, a real agent process speaking the trace contract."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parents[1] / "agents" / "trace_agent.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spec(port: int, tests: str, agent_extra: str = "") -> str:
    return f"""
agent:
  start: "{sys.executable} {AGENT} --port {port}"
  endpoint: "http://127.0.0.1:{port}/chat"
  health: "http://127.0.0.1:{port}/health"
  settle_time: 0
{agent_extra}
suites:
  - name: Orders
    tests:
{tests}
"""


PASSING = """
      - name: looks the order up
        trigger: "Where is order 1042?"
        expect:
          function_calls:
            - name: get_order
              params: {order_id: "1042"}
          response:
            contains: "shipped"
      - name: cancels after looking it up
        trigger: "Please cancel order 1042"
        expect:
          ordered: true
          exclusive: true
          function_calls:
            - name: get_order
            - name: cancel_order
              params: {order_id: "1042"}
              result: {cancelled: true}
          response:
            icontains: "CANCELLED"
      - name: greets without tools
        trigger: "hello there"
        expect:
          function_calls: []
"""


def test_passing_spec_node_ids_and_process_stopped(pytester: pytest.Pytester) -> None:
    port = free_port()
    pytester.makefile(".highbar.yaml", orders=spec(port, PASSING))
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*orders.highbar.yaml::Orders::looks the order up PASSED*"])
    with socket.socket() as s:  # the agent was stopped: its port is free again
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_failures_read_clearly_and_multi_turn_templates(pytester: pytest.Pytester) -> None:
    port = free_port()
    tests = """
      - name: wrong params
        trigger: "Where is order 1042?"
        expect:
          function_calls:
            - name: get_order
              params: {order_id: "9999"}
      - name: forbidden
        trigger: "Please cancel order 1042"
        expect:
          forbid: [cancel_order]
      - name: follows up
        turns:
          - trigger: "Where is order 1042?"
            expect:
              function_calls: [{name: get_order}]
          - trigger: "cancel order {{previous.function_calls[0].args.order_id}}"
            expect:
              function_calls:
                - name: cancel_order
                  params: {order_id: "1042"}
      - name: stops at the first failing turn
        turns:
          - trigger: "hello"
            expect:
              response: {contains: "nonexistent words"}
          - trigger: "cancel order 1042"
            expect:
              function_calls: [{name: cancel_order}]
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=1, failed=3)
    out = result.stdout.str()
    assert "'get_order' was called but did not match: params: expected {'order_id': '9999'}" in out
    assert "forbidden tool 'cancel_order' was called" in out
    assert "response does not contain 'nonexistent words'" in out
    assert out.count("[1] turn2 (AgentTurn)") == 0  # the conversation stopped after turn 1


def test_unknown_tool_is_an_error_with_suggestion(pytester: pytest.Pytester) -> None:
    port = free_port()
    tests = """
      - name: typo in tool name
        trigger: "hello"
        expect:
          forbid: [cancel_ordr]
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*tool 'cancel_ordr' is neither declared by the agent nor called — did you mean 'cancel_order'?*"])


def test_runs_and_min_pass_report_k_of_n(pytester: pytest.Pytester) -> None:
    port = free_port()
    tests = """
      - name: repeated
        trigger: "Where is order 1042?"
        runs: 4
        min_pass: 0.5
        expect:
          function_calls: [{name: get_order}]
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests))
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_spec_error_exit_2_before_agent_starts(pytester: pytest.Pytester) -> None:
    port = free_port()
    tests = """
      - name: typo
        trigger: "hi"
        expect:
          orderd: true
          function_calls: []
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*suites[[]0].tests[[]0].expect: unknown key 'orderd' — did you mean 'ordered'?*"])
    assert not list(pytester.path.glob(".semantictest/logs/*.log"))  # no agent was started


def test_agent_start_failure_errors_every_test(pytester: pytest.Pytester) -> None:
    port = free_port()
    text = spec(port, PASSING).replace(f"--port {port}", f"--port {port} --exit-at-start")
    pytester.makefile(".highbar.yaml", orders=text)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(["*the agent could not be used*"])


def test_xdist_one_agent_for_all_workers(pytester: pytest.Pytester) -> None:
    port = free_port()
    pytester.makefile(".highbar.yaml", orders=spec(port, PASSING))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    logs = list(pytester.path.glob(".semantictest/logs/*.log"))
    assert len(logs) == 1, logs  # one agent process served both workers
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_variations_from_highbar_cache_each_phrasing_judged(pytester: pytest.Pytester) -> None:
    import json

    from pytest_semantictest.formats.highbar.variations import cache_key

    port = free_port()
    tests = """
      - name: paraphrased
        trigger: "Where is order 1042?"
        variations: 2
        expect:
          function_calls: [{name: get_order, params: {order_id: "1042"}}]
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests))
    cache = pytester.path / ".highbar" / "variations.json"
    cache.parent.mkdir()
    phrasings = ["Can you check order 1042?", "hello, any news?"]  # the second makes no call: fails
    key = cache_key("Where is order 1042?", 2)
    cache.write_text(json.dumps({key: {"trigger": "Where is order 1042?", "count": 2, "variations": phrasings}}))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected a call to 'get_order'*"])


def test_variations_without_cache_or_llm_is_an_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    port = free_port()
    tests = """
      - name: paraphrased
        trigger: "Where is order 1042?"
        variations: 2
        expect:
          function_calls: [{name: get_order}]
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no paraphrases of*no LLM is configured*"])


def test_late_tool_call_is_warned_about(pytester: pytest.Pytester) -> None:
    port = free_port()
    tests = """
      - name: answers now, calls later
        trigger: "check it later"
        expect:
          function_calls: []
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests).replace("settle_time: 0", "settle_time: 200"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*late tool call 'get_order' for test 'answers now, calls later' arrived after its turn*"])
