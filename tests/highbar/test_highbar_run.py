"""highbar specs end to end: real pytest, a real agent process speaking the trace contract."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.helpers import run_pytest
from tests.ports import free_port
from tests.reports.dom import blob, parse, table_rows

AGENT = Path(__file__).resolve().parents[1] / "agents" / "trace_agent.py"
SCRIPT_AGENT = AGENT.with_name("script_agent.py")  # replies follow a "[plan ok quiet e500]" in the message


def spec(port: int, tests: str, agent_extra: str = "", agent: Path = AGENT) -> str:
    return f"""
agent:
  start: "{sys.executable} {agent} --port {port}"
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
    result = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
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
    result = run_pytest(pytester, "-p", "no:cacheprovider", "-rA")
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
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*cannot see calls to 'cancel_ordr' (did you mean 'cancel_order'?): the agent records*"]
    )


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
    run_pytest(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=1)


NODE = "orders.highbar.yaml::Orders::"
ROW = re.compile(r"  (.+?): (passed|failed|error|skipped) \([\d.]+ ms\)(?:: (.*))?")


def summary_rows(out: str, test: str) -> list[tuple[str, str, str]]:
    """The ``-v`` summary rows of one repeated test: (label, outcome, why), in run order."""
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith(f"{NODE}{test}: "))
    rows = []
    for line in lines[header + 1 :]:
        match = ROW.fullmatch(line)
        if match is None:
            break
        rows.append((match.group(1), match.group(2), match.group(3) or ""))
    return rows


def expect_line(text: str, test: str) -> int:
    """The line of ``test``'s ``expect:`` in a spec (where its failures point)."""
    lines = text.splitlines()
    start = lines.index(f"      - name: {test}")
    return next(n for n, line in enumerate(lines[start:], start + 1) if line.strip() == "expect:")


def agent_log(pytester: pytest.Pytester) -> str:
    logs = sorted(pytester.path.glob(".semantictest/logs/*.log"))
    assert len(logs) == 1, logs
    return logs[0].read_text()


def test_min_pass_not_reached_fails_with_k_of_n_and_each_run(pytester: pytest.Pytester) -> None:
    port = free_port()
    tests = """
      - name: too few pass
        trigger: "Where is order 1042? [plan ok quiet]"
        runs: 4
        min_pass: 3
        expect:
          function_calls: [{name: get_order}]
      - name: errors do not make up for failures
        trigger: "Where is order 1043? [plan ok e500 quiet quiet]"
        runs: 4
        min_pass: 3
        expect:
          function_calls: [{name: get_order}]
      - name: enough pass
        trigger: "Where is order 1044? [plan ok ok ok quiet]"
        runs: 4
        min_pass: 0.75
        expect:
          function_calls: [{name: get_order}]
"""
    text = pytester.makefile(".highbar.yaml", orders=spec(port, tests, agent=SCRIPT_AGENT)).read_text()
    # every run, also once the outcome is decided (tests/concurrency checks the early stop)
    result = run_pytest(pytester, "-v", "-p", "no:cacheprovider", "--semantictest-no-early-stop")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            f"*{NODE}too few pass FAILED*",
            f"*{NODE}errors do not make up for failures FAILED*",
            f"*{NODE}enough pass PASSED*",
        ]
    )
    out = result.stdout.str()
    # k/n in the failure report and in the summary (with what min_pass needed)
    assert "runs: 2/4 passed, 95% CI 15-85% (" in out
    assert "runs: 1/4 passed, 95% CI 5-70% (" in out
    assert f"flaky: {NODE}too few pass (2/4 runs passed (95% CI 15-85%), needs 3)" in out
    assert f"{NODE}errors do not make up for failures: 1/4 runs passed (95% CI 5-70%), needs 3" in out
    assert f"{NODE}enough pass: 3/4 runs passed (95% CI 30-95%), needs 3" in out
    line = expect_line(text, "too few pass")
    missing_call = (
        f"function_calls (line {line}): expected a call to 'get_order', but the agent called: nothing"
    )
    http_500 = f"HTTP 500 from http://127.0.0.1:{port}/chat: scripted failure"

    rows = summary_rows(out, "too few pass")  # -v: one line a run, with why it did not pass
    assert [label for label, _, _ in rows] == ["run 1", "run 2", "run 3", "run 4"]
    assert sorted(outcome for _, outcome, _ in rows) == ["failed", "failed", "passed", "passed"]
    assert {why for _, outcome, why in rows if outcome == "failed"} == {missing_call}
    assert {why for _, outcome, why in rows if outcome == "passed"} == {""}

    rows = summary_rows(out, "errors do not make up for failures")  # 1 passed + 1 error < 3: failed
    assert sorted(outcome for _, outcome, _ in rows) == ["error", "failed", "failed", "passed"]
    assert {why for _, outcome, why in rows if outcome == "error"} == {http_500}

    rows = summary_rows(out, "enough pass")
    assert sorted(outcome for _, outcome, _ in rows) == ["failed", "passed", "passed", "passed"]

    log = agent_log(pytester)  # every run was its own request to the agent
    for trigger in (
        "1042? [plan ok quiet]",
        "1043? [plan ok e500 quiet quiet]",
        "1044? [plan ok ok ok quiet]",
    ):
        assert log.count(f"chat: Where is order {trigger}\n") == 4


def test_min_pass_reachable_only_with_errored_runs_is_an_error(pytester: pytest.Pytester) -> None:
    port = free_port()
    tests = """
      - name: errored runs could have passed
        trigger: "Where is order 1042? [plan ok e500]"
        runs: 4
        min_pass: 3
        expect:
          function_calls: [{name: get_order}]
      - name: exactly min_pass counting the error
        trigger: "Where is order 1043? [plan ok e500 quiet quiet]"
        runs: 4
        min_pass: 2
        expect:
          function_calls: [{name: get_order}]
"""
    text = pytester.makefile(".highbar.yaml", orders=spec(port, tests, agent=SCRIPT_AGENT)).read_text()
    # one run at a time: the script answers by arrival, so the runs' order is the plan's
    result = run_pytest(pytester, "-v", "-p", "no:cacheprovider", "--semantictest-concurrency=1")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            f"*{NODE}errored runs could have passed ERROR*",
            f"*{NODE}exactly min_pass counting the error ERROR*",
        ]
    )
    out = result.stdout.str()
    http_500 = f"HTTP 500 from http://127.0.0.1:{port}/chat: scripted failure"
    assert f"{http_500} (2 of 4 runs)" in out  # the errors, merged with how many runs they hit
    assert f"{http_500} (1 of 4 runs)" in out
    # runs that stop once decided: the confidence sequence (docs/statistics.md)
    assert f"{NODE}errored runs could have passed: 2/4 runs passed (95% CS 4-96%), needs 3" in out
    assert f"{NODE}exactly min_pass counting the error: 1/4 runs passed (95% CS 1-87%), needs 2" in out

    rows = summary_rows(out, "errored runs could have passed")
    assert [label for label, _, _ in rows] == ["run 1", "run 2", "run 3", "run 4"]
    assert sorted(outcome for _, outcome, _ in rows) == ["error", "error", "passed", "passed"]
    assert {why for _, outcome, why in rows if outcome == "error"} == {http_500}

    rows = summary_rows(out, "exactly min_pass counting the error")
    assert sorted(outcome for _, outcome, _ in rows) == ["error", "failed", "failed", "passed"]
    line = expect_line(text, "exactly min_pass counting the error")
    assert {why for _, outcome, why in rows if outcome == "failed"} == {
        f"function_calls (line {line}): expected a call to 'get_order', but the agent called: nothing"
    }
    assert agent_log(pytester).count("chat: Where is order 1042? [plan ok e500]\n") == 4
    # what was sent
    assert "turn 1 user:  Where is order 1042? [plan ok e500]\n         ERROR: " + http_500 in out


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
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        ["*suites[[]0].tests[[]0].expect: unknown key 'orderd' — did you mean 'ordered'?*"]
    )
    assert not list(pytester.path.glob(".semantictest/logs/*.log"))  # no agent was started


def test_agent_start_failure_errors_every_test(pytester: pytest.Pytester) -> None:
    port = free_port()
    text = spec(port, PASSING).replace(f"--port {port}", f"--port {port} --exit-at-start")
    pytester.makefile(".highbar.yaml", orders=text)
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(["*the agent could not be used*"])


def paraphrased(pytester: pytest.Pytester, count: int, variations: object = None) -> Path:
    """A spec whose one test asks for ``count`` variations of "Where is order 1042?" (an order lookup) and,
    unless ``variations`` is None, a committed ``.highbar/variations.json`` entry with them; returns the
    cache's path."""
    import json

    from pytest_semantictest.blocks.variations import cache_key

    trigger = "Where is order 1042?"
    tests = f"""
      - name: paraphrased
        trigger: "{trigger}"
        variations: {count}
        expect:
          function_calls: [{{name: get_order, params: {{order_id: "1042"}}}}]
"""
    pytester.makefile(".highbar.yaml", orders=spec(free_port(), tests))
    cache = pytester.path / ".highbar" / "variations.json"
    if variations is None:
        return cache
    cache.parent.mkdir()
    entry = {"trigger": trigger, "count": count, "variations": variations}
    cache.write_text(json.dumps({cache_key(trigger, count): entry}))
    return cache


def test_variations_from_highbar_cache_each_phrasing_judged(pytester: pytest.Pytester) -> None:
    # the second makes no call: fails
    paraphrased(pytester, 2, ["Can you check order 1042?", "hello, any news?"])
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected a call to 'get_order'*"])


def test_committed_variations_are_all_run_as_highbar_runs_them(pytester: pytest.Pytester) -> None:
    """A hand-written cache entry with more sentences than ``variations: N`` asks for: highbar runs every
    one of them, as written, and says "(4 of 3 variations)"; a repeat is run again."""
    paraphrased(
        pytester,
        3,
        ["Can you check order 1042?", "order 1042 status?", "order 1042 status?", "hello, any news?"],
    )
    result = run_pytest(pytester, "-v", "-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)  # the fourth sentence makes no call
    out = result.stdout.str()
    assert "variation 4: 'hello, any news?': failed" in out, out
    assert f"{NODE}paraphrased: 4/5 runs passed" in out
    result.stdout.fnmatch_lines(["*tested: 4 of 3 variations*"])
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert 'name="variations: tested" value="4 of 3 variations"' in junit
    # the trigger and all four, the repeat too
    assert agent_log(pytester).count('"POST /chat HTTP/1.1" 200') == 5


def test_a_committed_cache_highbar_cannot_use_is_an_error(pytester: pytest.Pytester) -> None:
    """An entry with an empty list, or a file that is not JSON: highbar's test is an ERROR, never a run
    of the trigger alone nor a fall-back to generating."""
    cache = paraphrased(pytester, 2, [])
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no variations available (0 of 2)*"])
    cache.write_text("{\n<<<<<<< HEAD\n")
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*variations.json is not valid JSON (line 2)*"])


def test_variations_generated_by_the_paraphraser_saved_then_read_back(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import shutil

    from pytest_semantictest.blocks.variations import cache_key
    from tests.llm.fake_openai import FakeOpenAI, Reply

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    port = free_port()
    trigger = "Where is order 1042?"
    tests = """
      - name: paraphrased
        trigger: "Where is order 1042?"
        variations: 2
        expect:
          function_calls: [{name: get_order, params: {order_id: "1042"}}]
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests, agent=SCRIPT_AGENT))
    phrasings = [
        "Could you check on order 1042 for me?",
        "hello, any news on my parcel?",
    ]  # the 2nd calls nothing
    answer = [
        "where is ORDER 1042?",  # the trigger again: dropped
        phrasings[0],
        "could you check on  order 1042 for me?",  # a repeat (case, spacing): dropped
        phrasings[1],
        "Order 1042: status please",  # one more than asked for: trimmed
    ]
    cache = pytester.path / ".highbar" / "variations.json"
    expected_rows = [
        ("trigger", "passed"),
        (f"variation 1: {phrasings[0]!r}", "passed"),
        (f"variation 2: {phrasings[1]!r}", "failed"),
    ]

    def check_run(result: pytest.RunResult) -> None:
        result.assert_outcomes(failed=1)
        out = result.stdout.str()
        rows = summary_rows(out, "paraphrased")  # each phrasing judged on its own
        assert [(label, outcome) for label, outcome, _ in rows] == expected_rows
        assert "expected a call to 'get_order', but the agent called: nothing" in rows[2][2]
        assert f"{NODE}paraphrased: 2/3 runs passed (95% CI 21-94%)" in out
        log = agent_log(pytester)  # each phrasing was sent to the agent, once
        for message in (trigger, *phrasings):
            assert log.count(f"chat: {message}\n") == 1, message
        assert log.count("chat: ") == 3

    with FakeOpenAI() as fake:
        fake.queue(Reply(content="Sure! Here they are:\n" + json.dumps(answer)))
        first = run_pytest(
            pytester, f"--semantictest-llm-base-url={fake.url}", "-v", "-p", "no:cacheprovider"
        )
        check_run(first)
        assert fake.count == 1  # one paraphraser call for the test, whatever its phrasings
        request = fake.requests[0]
        assert request["path"] == "/v1/chat/completions"
        body = request["body"]
        assert body["model"] == "gpt-4o-mini"
        assert body["temperature"] == 0.9  # the paraphraser samples
        [message] = body["messages"]
        assert message["role"] == "user"
        assert "Write 2 different ways" in message["content"]
        assert "a JSON array of 2 strings" in message["content"]
        assert message["content"].endswith(f"Message: {trigger}")
        assert "semantictest: 1 LLM calls" in first.stdout.str()

        saved = json.loads(cache.read_text(encoding="utf-8"))  # highbar's cache, as highbar writes it
        assert saved == {
            cache_key(trigger, 2): {
                "trigger": trigger,
                "count": 2,
                "model": "gpt-4o-mini",
                "variations": phrasings,
            }
        }

        # Second run: the phrasings come from .highbar/variations.json, even with the replay cache off.
        shutil.rmtree(pytester.path / ".semantictest" / "logs")
        second = run_pytest(
            pytester,
            f"--semantictest-llm-base-url={fake.url}",
            "--semantictest-llm-cache=off",
            "-v",
            "-p",
            "no:cacheprovider",
        )
        check_run(second)
        assert fake.count == 1  # no LLM call
        assert "LLM calls" not in second.stdout.str()

        # Replay mode (CI) answers from the replay cache and never writes highbar's cache.
        cache.unlink()
        shutil.rmtree(pytester.path / ".semantictest" / "logs")
        third = run_pytest(pytester, "--semantictest-llm-cache=replay", "-v", "-p", "no:cacheprovider")
        check_run(third)
        assert "semantictest: 0 LLM calls, 1 cache hits" in third.stdout.str()
        assert fake.count == 1
        assert not cache.exists()


def test_variations_generated_with_highbars_own_llm_settings(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HIGHBAR_LLM_API_KEY / _BASE_URL / _MODEL write the paraphrases as in ``highbar run``, above OPENAI_*
    (which point nowhere here), below our own options; the key is never printed."""
    import json

    from tests.llm.fake_openai import FakeOpenAI, Reply

    key = "hb-test-key-" + "7f3a9c" * 4
    cache = paraphrased(pytester, 2)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-be-used-0000000000")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")  # nothing listens there
    monkeypatch.delenv("HIGHBAR_LLM_API_KEY", raising=False)
    with FakeOpenAI() as fake:
        monkeypatch.setenv("HIGHBAR_LLM_BASE_URL", fake.url)
        result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-llm-cache=off")
        result.assert_outcomes(errors=1)  # highbar's base URL without highbar's key: highbar cannot generate
        result.stdout.fnmatch_lines(["*no LLM is configured*HIGHBAR_LLM_API_KEY*"])
        assert fake.count == 0

        monkeypatch.setenv("HIGHBAR_LLM_API_KEY", key)
        monkeypatch.setenv("HIGHBAR_LLM_MODEL", "hb-paraphrase-model")
        fake.queue(Reply(content=json.dumps(["Can you check order 1042?", "order 1042: where is it?"])))
        result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-llm-cache=off")
        result.assert_outcomes(passed=1)
        assert fake.count == 1
        request = fake.requests[0]
        assert request["body"]["model"] == "hb-paraphrase-model"
        assert request["headers"]["authorization"] == f"Bearer {key}"
        assert key not in result.stdout.str() + result.stderr.str()
        saved = json.loads(cache.read_text(encoding="utf-8"))
        assert [entry["model"] for entry in saved.values()] == ["hb-paraphrase-model"]

        cache.unlink()
        with FakeOpenAI() as ours:  # our own options win over highbar's variables
            ours.queue(Reply(content=json.dumps(["Can you check order 1042?", "order 1042: where is it?"])))
            result = run_pytest(
                pytester,
                "-p",
                "no:cacheprovider",
                "--semantictest-llm-cache=off",
                f"--semantictest-llm-base-url={ours.url}",
                "--semantictest-llm-model=our-model",
            )
            result.assert_outcomes(passed=1)
            assert (ours.count, fake.count) == (1, 1)
            assert ours.requests[0]["body"]["model"] == "our-model"
            assert ours.requests[0]["headers"]["authorization"] != f"Bearer {key}"


def test_variations_without_cache_or_llm_is_an_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no paraphrases of*no LLM is configured*"])


def test_late_tool_call_fails_the_test_it_was_tagged_with(pytester: pytest.Pytester) -> None:
    """highbar reads once more after a test's window: a tagged call recorded then fails it."""
    port = free_port()
    tests = """
      - name: answers now, calls later
        trigger: "check it later"
        expect:
          function_calls: []
"""
    pytester.makefile(".highbar.yaml", orders=spec(port, tests).replace("settle_time: 0", "settle_time: 200"))
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*get_order was recorded after the test's window closed (settle_time 200 ms): "
            "expected no function calls, but got: get_order*"
        ]
    )


START_TOGETHER = """
import os, pathlib, time

def pytest_runtest_setup(item):
    here = pathlib.Path(str(item.config.rootpath), "started")
    here.mkdir(exist_ok=True)
    (here / os.environ.get("PYTEST_XDIST_WORKER", "main")).touch()
    deadline = time.monotonic() + 30
    while len(list(here.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
"""
"""A barrier for an inner run's two xdist workers: each worker's first test starts once both are there."""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_late_call_after_the_extra_settle_fails_the_session(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    """A tagged call that arrives while a later test runs: highbar judges the earlier test again ("now
    fails") and exits 1. Its report is written, so the terminal summary lists it as failed by a late
    call and the exit status is 1, also when another worker ran the later test. Under xdist also: one
    agent process served both workers (each ran a test), and it is stopped at the end."""
    port = free_port()
    # the late call comes 1.5 s after the reply (the earlier test's window and extra settle are 0.2 s),
    # and not before the slow test's message, which waits for it: it lands while the later test runs
    fidelity = Path(__file__).with_name("fidelity_agent.py")
    tests = """
      - name: answers now, calls much later
        trigger: "look into it later"
        expect:
          function_calls: []
      - name: greets slowly
        trigger: "hello, slowly"
        expect:
          function_calls: []
"""
    text = spec(port, tests, agent=fidelity).replace("settle_time: 0", "settle_time: 100")
    pytester.makefile(".highbar.yaml", orders=text.replace("--port", "--late-s 1.5 --late-on-slow --port"))
    if workers:  # the two tests start together, however far apart the two fresh workers came up
        pytester.makeconftest(START_TOGETHER)
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--junitxml=junit.xml",
        "--semantictest-results=results.jsonl",
        "--html=report.html",
        "--self-contained-html",
        *workers,
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            f"FAILED by a late call: {NODE}answers now, calls much later - now fails: get_order was recorded after "
            "the test's window closed (settle_time 100 ms): expected no function calls, but got: get_order. Raise "
            "agent.settle_time to read it in time",
            "highbar  1 passed, 1 failed",  # the semantictest summary counts highbar's verdicts
            "*2 passed*1 failed by a late call in*",
        ]
    )
    assert "FAILED by a late call" not in result.stdout.str().split("answers now, calls much later - ", 1)[1]
    # every artefact agrees with the exit status: the test as it was reported, and an entry of its own,
    # failed, for the late call (a CI dashboard reads JUnit)
    late = f"{NODE}answers now, calls much later (late call)"
    cases = {
        (case.get("classname"), case.get("name")): case
        for case in ElementTree.parse(pytester.path / "junit.xml").iter("testcase")
    }
    assert len(cases) == 3
    failed = [key for key, case in cases.items() if case.find("failure") is not None]
    assert failed == [("orders.highbar.yaml.Orders", "answers now, calls much later (late call)")]
    failure = cases[failed[0]].find("failure")
    assert failure is not None and "now fails: get_order was recorded after" in str(failure.get("message"))
    root = ElementTree.parse(pytester.path / "junit.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("3", "1")
    records = {
        r["id"]: r
        for r in map(json.loads, (pytester.path / "results.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert records[late]["outcome"] == "failed"
    assert records[late]["late_call_of"] == f"{NODE}answers now, calls much later"
    assert records[late]["format"] == "highbar" and "now fails: get_order" in records[late]["message"]
    assert [r["outcome"] for r in records.values()].count("failed") == 1
    rows = blob(pytester.path / "report.html")["tests"]
    assert {nodeid: [row["result"] for row in runs] for nodeid, runs in rows.items()}[late] == ["Failed"]
    assert [row["result"] for runs in rows.values() for row in runs].count("Failed") == 1
    summary = parse((pytester.path / "report.html").read_text(encoding="utf-8")).find(
        "table", cls="st-formats"
    )
    assert table_rows(summary) == [["highbar", "2", "1", "1", "0", "0", "50%", "0"]]  # highbar's verdicts
    if workers:
        assert sorted(p.name for p in (pytester.path / "started").iterdir()) == ["gw0", "gw1"]
    logs = list(pytester.path.glob(".semantictest/logs/*.log"))
    assert len(logs) == 1, logs  # one agent process (under xdist: for both workers)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # stopped


def test_guardrail_on_a_tool_never_declared_nor_seen_is_said_at_the_end(pytester: pytest.Pytester) -> None:
    """highbar's end-of-run warning: the agent declared no tools, so 'forbid' cannot tell a tool it
    never records from one it did not call; the test still passes, as in highbar."""
    port = free_port()
    fidelity = Path(__file__).with_name("fidelity_agent.py")
    tests = """
      - name: never deletes
        trigger: "Where is order 1042?"
        expect:
          forbid: [delete_account, get_ordr]
"""
    text = spec(port, tests, agent=fidelity).replace("--port", "--no-declare --port")
    pytester.makefile(".highbar.yaml", orders=text)
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*the agent has not declared the tools it records*: delete_account, "
            "get_ordr (did you mean 'get_order'?)*"
        ]
    )
