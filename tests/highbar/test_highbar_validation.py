"""Reading and validating highbar specs: every spec error with its message and line, valid specs
loading into the expected objects, and random mutations only ever raising SpecError.

The messages follow highbar 0.1.0rc3 (``suites[0].tests[1].expect: unknown key 'orderd' — did
you mean 'ordered'?``); unlike highbar, every problem of a file is reported at once.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_semantictest.agents.config import AgentConfig
from pytest_semantictest.errors import Problem, SpecError
from pytest_semantictest.formats.highbar import HighbarSpec, load_highbar, load_highbar_text
from pytest_semantictest.formats.highbar.agent_model import CheckedAgent
from pytest_semantictest.formats.highbar.models import ALLOWED_KEYS, Spec
from pytest_semantictest.formats.highbar.models import Agent as AgentModel
from pytest_semantictest.formats.highbar.problem import HighbarProblem
from pytest_semantictest.formats.highbar.spec import CommandHook, MatcherSpec, PythonHook
from pytest_semantictest.formats.yamlsource import YamlError, load_yaml
from tests.helpers import fuzz_examples

MANAGED = """\
agent:
  start: "python agent.py"
  endpoint: "http://localhost:8000/chat"
"""
ATTACH = """\
agent:
  endpoint: "http://localhost:8000/chat"
"""
GUARDRAIL = '- trigger: "hi"\n  expect: {function_calls: []}\n'
FILE = Path("specs/x.highbar.yaml")


def one_test(test: str, agent: str = MANAGED) -> str:
    """A spec with one suite holding ``test`` (YAML of one list item, any indentation)."""
    return agent + "suites:\n  - name: S\n    tests:\n" + textwrap.indent(textwrap.dedent(test), "      ")


def with_agent(extra: str, suites: str = "") -> str:
    """An attach-mode spec whose agent has ``extra`` keys (YAML at agent level)."""
    return (
        ATTACH
        + textwrap.indent(textwrap.dedent(extra), "  ")
        + (
            suites
            or 'suites:\n  - tests:\n      - trigger: "hi"\n        expect: {response: {contains: "ok"}}\n'
        )
    )


def load(text: str, environ: dict[str, str] | None = None) -> HighbarSpec:
    return load_highbar_text(text, FILE, environ or {})


def problems(text: str, environ: dict[str, str] | None = None) -> list[Problem]:
    with pytest.raises(SpecError) as raised:
        load(text, environ)
    assert raised.value.file == str(FILE)
    return raised.value.problems


def only(text: str, environ: dict[str, str] | None = None) -> Problem:
    found = problems(text, environ)
    assert len(found) == 1, [p.render("f") for p in found]
    return found[0]


def has(found: list[Problem], place: str, fragment: str, line: int | None) -> None:
    for p in found:
        if p.place == place and fragment in p.message and (line is None or p.line == line):
            return
    raise AssertionError(
        f"no problem {place}: ...{fragment}... at line {line} in {[(p.place, p.message, p.line) for p in found]}"
    )


# --- one spec error each: (spec text, place, message fragment, line) ------------------------------

CASES: dict[str, tuple[str, str, str, int | None]] = {
    # YAML itself
    "duplicate key with both lines": (
        one_test('- trigger: "hi"\n  runs: 2\n  expect: {function_calls: []}\n  runs: 3\n'),
        "suites[0].tests[0]",
        "duplicate key 'runs' (lines 8 and 10)",
        10,
    ),
    "duplicate top-level key": (
        MANAGED + "agent: {}\nsuites: []\n",
        "",
        "duplicate key 'agent' (lines 1 and 4)",
        4,
    ),
    "syntax error with line and column": (
        MANAGED + "suites: [unclosed\n",
        "",
        "invalid YAML: did not find expected",
        5,
    ),
    "tab indentation": (MANAGED + "suites:\n\t- x\n", "", "YAML indentation must use spaces", 5),
    "non-string key": (
        one_test('- trigger: "hi"\n  expect: {function_calls: []}\n  1: x\n'),
        "suites[0].tests[0]",
        "key '1' is read by YAML as a number, not text; quote it",
        9,
    ),
    "yes/on keys are booleans in YAML": (
        one_test('- trigger: "hi"\n  on: x\n  expect: {function_calls: []}\n'),
        "suites[0].tests[0]",
        "key 'on' is read by YAML as a boolean",
        8,
    ),
    "unsupported tag": (
        one_test("- trigger: !!binary aGk=\n  expect: {function_calls: []}\n"),
        "suites[0].tests[0].trigger",
        "YAML tag '!!binary' is not supported",
        7,
    ),
    "recursive alias": (
        MANAGED + "x-a: &a [*a]\nsuites: [{tests: [{trigger: hi, expect: {function_calls: []}}]}]\n",
        "x-a[0]",
        "recursive anchor",
        4,
    ),
    "empty file": ("", "spec", "the file is empty", 1),
    "not a mapping": ("- a\n- b\n", "spec", "must be a mapping with 'agent' and 'suites', got list", 1),
    # spec level
    "unknown top-level key with suggestion": (
        MANAGED + "suite: []\n",
        "spec",
        "unknown key 'suite' — did you mean 'suites'?",
        4,
    ),
    "unknown key lists the allowed ones": (
        one_test('- trigger: "hi"\n  zzz: 1\n  expect: {function_calls: []}\n'),
        "suites[0].tests[0]",
        "unknown key 'zzz' (allowed: expect, markers, min_pass, name, pass_rate, runs, trigger, turns, variations)",
        8,
    ),
    "missing agent": (
        "suites: [{tests: [{trigger: hi, expect: {function_calls: []}}]}]\n",
        "spec",
        "missing 'agent' (how to start and reach the agent)",
        1,
    ),
    "no suites": (MANAGED, "spec", "has no tests (add a suite under 'suites')", 1),
    "empty suites": (MANAGED + "suites: []\n", "spec", "has no tests", 4),
    "suites not a list": (MANAGED + "suites: {a: 1}\n", "suites", "must be a list of suites, got mapping", 4),
    "defaults.runs zero": (
        MANAGED + "defaults: {runs: 0}\n" + one_test(GUARDRAIL, agent=""),
        "defaults",
        "runs must be a whole number of at least 1, got 0",
        4,
    ),
    "defaults.runs bool is not int": (
        MANAGED + "defaults:\n  runs: true\n" + one_test(GUARDRAIL, agent=""),
        "defaults",
        "runs must be a whole number of at least 1, got True",
        5,
    ),
    "unknown defaults key": (
        MANAGED + "defaults: {run: 2}\n" + one_test(GUARDRAIL, agent=""),
        "defaults",
        "unknown key 'run' — did you mean 'runs'?",
        4,
    ),
    # agent
    "agent not a mapping": (
        'agent: "python agent.py"\n' + one_test(GUARDRAIL, agent=""),
        "agent",
        "must be a mapping, got str",
        1,
    ),
    "unknown agent key": (
        MANAGED.replace("  start", '  helth: "x"\n  start') + one_test(GUARDRAIL, agent=""),
        "agent",
        "unknown key 'helth' — did you mean 'health'?",
        2,
    ),
    "endpoint missing": (
        'agent:\n  start: "python a.py"\n' + one_test(GUARDRAIL, agent=""),
        "agent",
        "missing 'endpoint'",
        1,
    ),
    "endpoint without scheme": (
        one_test(GUARDRAIL, agent=MANAGED.replace("http://", "")),
        "agent",
        "endpoint must be an http:// or https:// URL, got 'localhost:8000/chat'",
        3,
    ),
    "health with a broken IPv6 host": (
        one_test(GUARDRAIL, agent=MANAGED + '  health: "http://[::1/health"\n'),
        "agent",
        "health must be an http:// or https:// URL, got 'http://[::1/health' (Invalid IPv6 URL)",
        4,
    ),
    "endpoint bad port": (
        one_test(GUARDRAIL, agent=MANAGED.replace("8000", "99999")),
        "agent",
        "endpoint has an invalid port",
        3,
    ),
    "endpoint with a placeholder": (
        one_test(GUARDRAIL, agent=MANAGED.replace("/chat", "/{{test.id}}")),
        "agent",
        "endpoint cannot hold {{...}}: placeholders are not resolved in the URL",
        3,
    ),
    "endpoint not a string": (
        one_test(GUARDRAIL, agent=MANAGED.replace('"http://localhost:8000/chat"', "8000")),
        "agent",
        "endpoint must be a string, got int",
        3,
    ),
    "health not a URL": (
        one_test(GUARDRAIL, agent=MANAGED + '  health: "/health"\n'),
        "agent",
        "health must be an http:// or https:// URL",
        4,
    ),
    "startup_timeout in attach mode": (
        with_agent("startup_timeout: 1000\n"),
        "agent",
        "startup_timeout only applies with 'start'",
        3,
    ),
    "startup_timeout text": (
        one_test(GUARDRAIL, agent=MANAGED + '  startup_timeout: "15s"\n'),
        "agent",
        "startup_timeout must be an integer (milliseconds), got str",
        4,
    ),
    "timeout bool": (
        one_test(GUARDRAIL, agent=MANAGED + "  timeout: yes\n"),
        "agent",
        "timeout must be an integer (milliseconds), got bool",
        4,
    ),
    "timeout zero": (
        with_agent("timeout: 0\n"),
        "agent",
        "timeout must be a positive integer (milliseconds), got 0",
        3,
    ),
    "settle_time negative": (
        with_agent("settle_time: -1\n"),
        "agent",
        "settle_time must be a non-negative integer (milliseconds), got -1",
        3,
    ),
    "traces with start": (
        one_test(GUARDRAIL, agent=MANAGED + '  traces: "t.jsonl"\n'),
        "agent",
        "'traces' is for attach mode",
        4,
    ),
    "attach mode observing calls needs traces": (
        one_test('- trigger: "a"\n  expect: {response: {contains: x}}\n' + GUARDRAIL, agent=ATTACH),
        "agent",
        "attach mode (no 'start') needs 'traces', the file the agent writes: suites[0].tests[1] checks function_calls",
        1,
    ),
    "calls_from unknown": (
        with_agent("calls_from: body\n"),
        "agent",
        "calls_from must be 'traces', 'reply' or 'otel', got 'body'",
        3,
    ),
    "traces with calls_from reply": (
        with_agent('calls_from: reply\ntraces: "t.jsonl"\n'),
        "agent",
        "'traces' is not read with calls_from: reply",
        4,
    ),
    "start not a command line": (
        one_test(GUARDRAIL, agent=MANAGED.replace('"python agent.py"', '"python \'agent.py"')),
        "agent",
        "start is not a valid command line: No closing quotation",
        2,
    ),
    "method GET": (
        with_agent("request: {method: GET}\n"),
        "agent.request",
        "method must be POST, PUT or PATCH, got 'GET'",
        3,
    ),
    "header value not a string": (
        with_agent("request:\n  headers: {X-Bot: 1}\n"),
        "agent.request.headers",
        "X-Bot must be a string (quote it), got int",
        4,
    ),
    "header value with a newline": (
        with_agent('request:\n  headers: {Authorization: "Bearer x\\n"}\n'),
        "agent.request.headers.Authorization",
        "control character or leading or trailing whitespace",
        4,
    ),
    "header value not ASCII": (
        with_agent('request:\n  headers: {X-Name: "café"}\n'),
        "agent.request.headers.X-Name",
        "the value must be ASCII text (an HTTP header); not shown",
        4,
    ),
    "body not JSON": (
        with_agent('request:\n  body: {message: "{{message}}", n: .nan}\n'),
        "agent.request.body",
        "must be JSON: Out of range float values are not JSON compliant",
        4,
    ),
    "header name invalid": (
        with_agent('request:\n  headers: {"X Bot": "1"}\n'),
        "agent.request.headers",
        "'X Bot' is not a valid header name",
        4,
    ),
    "body without {{message}}": (
        with_agent('request:\n  body: {text: "hello"}\n'),
        "agent.request.body",
        "never uses {{message}}, so the trigger would not be sent",
        4,
    ),
    "unknown placeholder": (
        with_agent('request:\n  body: {message: "{{mesage}}"}\n'),
        "agent.request.body.message",
        "unknown placeholder '{{mesage}}' — did you mean '{{message}}'?",
        4,
    ),
    "previous is not a request placeholder": (
        with_agent('request:\n  body: {message: "{{message}}", x: "{{previous.function_calls[0]}}"}\n'),
        "agent.request.body.x",
        "unknown placeholder",
        4,
    ),
    "session placeholder without a session": (
        with_agent('request:\n  body: {message: "{{message}}", c: "{{session.conversation_id}}"}\n'),
        "agent.request.body.c",
        "'{{session.conversation_id}}' needs agent.session",
        4,
    ),
    "unknown request key": (
        with_agent("request:\n  header: {}\n"),
        "agent.request",
        "unknown key 'header' — did you mean 'headers'?",
        4,
    ),
    "response path malformed": (
        with_agent('response: "data..reply"\n'),
        "agent",
        "response must be a dotted path to the reply text",
        3,
    ),
    "session without hooks": (with_agent("session: {}\n"), "agent.session", "needs setup or teardown", 3),
    "python hook without a function": (
        with_agent('session:\n  setup: {python: "evals"}\n'),
        "agent.session.setup",
        "python must be 'module:function', got 'evals'",
        4,
    ),
    "hook command unparsable": (
        with_agent('session:\n  setup: "open \'unclosed"\n'),
        "agent.session.setup",
        "not a valid command line",
        4,
    ),
    "setup cannot use session placeholders": (
        with_agent('session:\n  setup: "open {{session.id}}"\n'),
        "agent.session.setup",
        "'{{session.id}}' is not available here",
        4,
    ),
    "correlate empty": (
        with_agent("correlate: {}\n"),
        "agent",
        "correlate must be a non-empty mapping of context key to value",
        3,
    ),
    "correlate value a list": (
        with_agent("correlate: {test: [1]}\n"),
        "agent.correlate.test",
        "must be text, a number or a placeholder",
        3,
    ),
    "missing environment variable": (
        with_agent('request:\n  headers: {Authorization: "Bearer ${AGENT_TOKEN}"}\n'),
        "agent.request.headers.Authorization",
        "environment variable AGENT_TOKEN is not set",
        4,
    ),
    # suites
    "suite not a mapping": (MANAGED + "suites: [5]\n", "suites[0]", "a suite must be a mapping, got int", 4),
    "suite without tests": (
        MANAGED + "suites:\n  - name: S\n    tests: []\n",
        "suites[0]",
        "has no tests",
        6,
    ),
    "suite name not text": (
        MANAGED + "suites:\n  - name: [S]\n    tests:\n" + textwrap.indent(GUARDRAIL, "      "),
        "suites[0]",
        "name must be a string, got list",
        5,
    ),
    "unknown suite key": (
        MANAGED + "suites:\n  - nam: S\n    tests:\n" + textwrap.indent(GUARDRAIL, "      "),
        "suites[0]",
        "unknown key 'nam' — did you mean 'name'?",
        5,
    ),
    # tests
    "test not a mapping": (
        one_test('- "hi"\n'),
        "suites[0].tests[0]",
        "a test must be a mapping, got str",
        7,
    ),
    "misspelled trigger": (
        one_test('- triger: "hi"\n  expect: {function_calls: []}\n'),
        "suites[0].tests[0]",
        "unknown key 'triger' — did you mean 'trigger'?",
        7,
    ),
    "trigger and turns": (
        one_test(
            '- trigger: "hi"\n  expect: {function_calls: []}\n  turns:\n    - trigger: "x"\n'
            "      expect: {function_calls: []}\n"
        ),
        "suites[0].tests[0]",
        "a test has either 'trigger' or 'turns', not both",
        7,
    ),
    "turns with a test-level expect": (
        one_test(
            '- expect: {function_calls: []}\n  turns:\n    - trigger: "x"\n'
            "      expect: {function_calls: []}\n"
        ),
        "suites[0].tests[0]",
        "with 'turns', each turn has its own 'expect'",
        7,
    ),
    "turns with variations": (
        one_test('- variations: 3\n  turns:\n    - trigger: "x"\n      expect: {function_calls: []}\n'),
        "suites[0].tests[0]",
        "'variations' is not supported on multi-turn tests",
        7,
    ),
    "trigger without expect": (
        one_test('- trigger: "hi"\n'),
        "suites[0].tests[0]",
        "asserts nothing — add an 'expect' (function_calls: [] checks that no tool is called)",
        7,
    ),
    "expect {} asserts nothing": (
        one_test('- trigger: "hi"\n  expect: {}\n'),
        "suites[0].tests[0].expect",
        "asserts nothing — use function_calls, response, forbid",
        8,
    ),
    "expect with only x- keys asserts nothing": (
        one_test('- trigger: "hi"\n  expect: {x-note: a}\n'),
        "suites[0].tests[0].expect",
        "asserts nothing",
        8,
    ),
    "no turn asserts anything": (
        one_test('- turns:\n    - trigger: "hi"\n    - trigger: "bye"\n'),
        "suites[0].tests[0]",
        "asserts nothing — no turn has an 'expect'",
        7,
    ),
    "turn with expect {}": (
        one_test(
            '- turns:\n    - trigger: "hi"\n      expect: {}\n    - trigger: "bye"\n'
            "      expect: {function_calls: []}\n"
        ),
        "suites[0].tests[0].turns[0].expect",
        "asserts nothing",
        9,
    ),
    "empty turns": (one_test("- turns: []\n"), "suites[0].tests[0]", "turns cannot be empty", 7),
    "turn without trigger": (
        one_test("- turns:\n    - expect: {function_calls: []}\n"),
        "suites[0].tests[0].turns[0]",
        "missing 'trigger' (the message sent to the agent)",
        8,
    ),
    "empty trigger": (
        one_test('- trigger: "  "\n  expect: {function_calls: []}\n'),
        "suites[0].tests[0]",
        "trigger cannot be empty",
        7,
    ),
    "trigger not text": (
        one_test("- trigger: 42\n  expect: {function_calls: []}\n"),
        "suites[0].tests[0]",
        "trigger must be a string, got int",
        7,
    ),
    "test name not text": (
        one_test("- name: 3\n" + GUARDRAIL),
        "suites[0].tests[0]",
        "name must be a string, got int",
        7,
    ),
    "runs zero": (
        one_test(GUARDRAIL + "  runs: 0\n"),
        "suites[0].tests[0]",
        "runs must be a whole number of at least 1",
        9,
    ),
    "runs bool": (
        one_test(GUARDRAIL + "  runs: true\n"),
        "suites[0].tests[0]",
        "runs must be a whole number of at least 1, got True",
        9,
    ),
    "min_pass zero": (
        one_test(GUARDRAIL + "  runs: 3\n  min_pass: 0\n"),
        "suites[0].tests[0]",
        "min_pass must be a whole number of at least 1 or a fraction of runs (0 < f <= 1)",
        10,
    ),
    "min_pass fraction above 1": (
        one_test(GUARDRAIL + "  runs: 3\n  min_pass: 1.5\n"),
        "suites[0].tests[0]",
        "min_pass must be a whole number of at least 1 or a fraction",
        10,
    ),
    "min_pass bool": (
        one_test(GUARDRAIL + "  min_pass: true\n"),
        "suites[0].tests[0]",
        "min_pass must be a whole number",
        9,
    ),
    "min_pass above runs": (
        one_test(GUARDRAIL + "  runs: 3\n  min_pass: 4\n"),
        "suites[0].tests[0]",
        "min_pass 4 is more than its 3 runs",
        10,
    ),
    "min_pass above defaults.runs": (
        MANAGED + "defaults: {runs: 2}\n" + one_test(GUARDRAIL + "  min_pass: 3\n", agent=""),
        "suites[0].tests[0]",
        "min_pass 3 is more than its 2 runs",
        10,
    ),
    # highbar accepts runs: 10**400 and never ends, and a timeout of 10**400 is an OverflowError
    "runs 10**400": (
        one_test(GUARDRAIL + "  runs: 1" + "0" * 400 + "\n"),
        "suites[0].tests[0]",
        "runs must be at most 10000, got about 10**400",
        9,
    ),
    "defaults.runs 10**400": (
        MANAGED + "defaults: {runs: 1" + "0" * 400 + "}\n" + one_test(GUARDRAIL, agent=""),
        "defaults",
        "runs must be at most 10000, got about 10**400",
        4,
    ),
    "timeout 10**400": (
        MANAGED.replace("agent:\n", "agent:\n  timeout: 1" + "0" * 400 + "\n")
        + one_test(GUARDRAIL, agent=""),
        "agent",
        "timeout is too long: at most 86400000 ms (24 h), got about 10**400",
        2,
    ),
    "settle_time 10**400": (
        MANAGED.replace("agent:\n", "agent:\n  settle_time: 1" + "0" * 400 + "\n")
        + one_test(GUARDRAIL, agent=""),
        "agent",
        "settle_time is too long: at most 86400000 ms (24 h)",
        2,
    ),
    "startup_timeout 10**400": (
        MANAGED.replace("agent:\n", "agent:\n  startup_timeout: 1" + "0" * 400 + "\n")
        + one_test(GUARDRAIL, agent=""),
        "agent",
        "startup_timeout is too long",
        2,
    ),
    "variations negative": (
        one_test(GUARDRAIL + "  variations: -1\n"),
        "suites[0].tests[0]",
        "variations must be a non-negative integer, got -1",
        9,
    ),
    "variations text": (
        one_test(GUARDRAIL + '  variations: "3"\n'),
        "suites[0].tests[0]",
        "variations must be a non-negative integer, got str",
        9,
    ),
    "marker not a word": (
        one_test(GUARDRAIL + '  markers: [smoke, "two words"]\n'),
        "suites[0].tests[0]",
        "marker names must be words like 'smoke' or 'slow', got 'two words'",
        9,
    ),
    "markers not a list": (
        one_test(GUARDRAIL + "  markers: smoke\n"),
        "suites[0].tests[0]",
        "markers must be a list of marker names, got str",
        9,
    ),
    # expect
    "misspelled ordered": (
        one_test('- trigger: "hi"\n  expect:\n    orderd: true\n    function_calls: []\n'),
        "suites[0].tests[0].expect",
        "unknown key 'orderd' — did you mean 'ordered'?",
        9,
    ),
    "misspelled function_calls": (
        one_test('- trigger: "hi"\n  expect:\n    function_call:\n      - name: get_order\n'),
        "suites[0].tests[0].expect",
        "unknown key 'function_call' — did you mean 'function_calls'?",
        9,
    ),
    "expect not a mapping": (
        one_test('- trigger: "hi"\n  expect: [get_order]\n'),
        "suites[0].tests[0].expect",
        "expect must be a mapping, got list",
        8,
    ),
    "function_calls not a list": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls: get_order\n'),
        "suites[0].tests[0].expect",
        "function_calls must be a list, got str",
        9,
    ),
    "ordered without function_calls": (
        one_test('- trigger: "hi"\n  expect: {ordered: true, response: {contains: ok}}\n'),
        "suites[0].tests[0].expect",
        "ordered needs function_calls (the calls it applies to)",
        8,
    ),
    "exclusive not a boolean": (
        one_test('- trigger: "hi"\n  expect: {function_calls: [{name: a}], exclusive: "yes"}\n'),
        "suites[0].tests[0].expect",
        "exclusive must be true or false, got str",
        8,
    ),
    "forbid empty": (
        one_test('- trigger: "hi"\n  expect: {forbid: []}\n'),
        "suites[0].tests[0].expect",
        "forbid must be a non-empty list of tool names",
        8,
    ),
    "forbid a name": (
        one_test('- trigger: "hi"\n  expect:\n    forbid: delete_account\n'),
        "suites[0].tests[0].expect",
        "forbid must be a non-empty list of tool names",
        9,
    ),
    "response {}": (
        one_test('- trigger: "hi"\n  expect:\n    response: {}\n'),
        "suites[0].tests[0].expect",
        "response has no matcher (use contains, equals, icontains, matches, not_contains, not_icontains, not_matches)",
        9,
    ),
    "response text": (
        one_test('- trigger: "hi"\n  expect:\n    response: "ok"\n'),
        "suites[0].tests[0].expect",
        "response must be a mapping, got str",
        9,
    ),
    "response contain": (
        one_test('- trigger: "hi"\n  expect:\n    response:\n      contain: "hello"\n'),
        "suites[0].tests[0].expect.response",
        "unknown key 'contain' — did you mean 'contains'?",
        10,
    ),
    "response Matches": (
        one_test('- trigger: "hi"\n  expect:\n    response:\n      Matches: "h"\n'),
        "suites[0].tests[0].expect.response",
        "unknown key 'Matches' — did you mean 'matches'?",
        10,
    ),
    "response not-contains": (
        one_test('- trigger: "hi"\n  expect:\n    response:\n      not-contains: "h"\n'),
        "suites[0].tests[0].expect.response",
        "unknown key 'not-contains' — did you mean 'not_contains'?",
        10,
    ),
    "response operand not text": (
        one_test('- trigger: "hi"\n  expect: {response: {equals: 3}}\n'),
        "suites[0].tests[0].expect.response",
        "equals must be a string, got int",
        8,
    ),
    "response empty operand": (
        one_test('- trigger: "hi"\n  expect: {response: {icontains: ""}}\n'),
        "suites[0].tests[0].expect.response",
        "icontains cannot be empty",
        8,
    ),
    "response bad regex": (
        one_test('- trigger: "hi"\n  expect:\n    response:\n      matches: "order (#"\n'),
        "suites[0].tests[0].expect.response.matches",
        "invalid regex: missing ), unterminated subpattern",
        10,
    ),
    "response template": (
        one_test('- trigger: "hi"\n  expect: {response: {not_contains: "{{previous.function_calls[0]}}"}}\n'),
        "suites[0].tests[0].expect.response.not_contains",
        "templates are only resolved in triggers",
        8,
    ),
    # function calls
    "call without name": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls:\n      - params: {a: 1}\n'),
        "suites[0].tests[0].expect.function_calls[0]",
        "missing 'name' (the tool expected to be called)",
        10,
    ),
    "call name empty": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls: [{name: ""}]\n'),
        "suites[0].tests[0].expect.function_calls[0]",
        "function_call 'name' cannot be empty",
        9,
    ),
    "call name empty list": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls: [{name: []}]\n'),
        "suites[0].tests[0].expect.function_calls[0]",
        "function_call 'name' cannot be an empty list",
        9,
    ),
    "call name list with a number": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls: [{name: [a, 3]}]\n'),
        "suites[0].tests[0].expect.function_calls[0]",
        "function_call 'name' list must contain only non-empty strings, got ['a', 3]",
        9,
    ),
    "call name a number": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls: [{name: 3}]\n'),
        "suites[0].tests[0].expect.function_calls[0]",
        "function_call 'name' must be a string or a list of strings, got int",
        9,
    ),
    "unknown call key": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n        param: {}\n'),
        "suites[0].tests[0].expect.function_calls[0]",
        "unknown key 'param' — did you mean 'params'?",
        11,
    ),
    "params not a mapping": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n        params: "order 7"\n'
        ),
        "suites[0].tests[0].expect.function_calls[0]",
        "params must be a mapping of expected values, got str",
        11,
    ),
    "result not a mapping": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n        result: 5\n'),
        "suites[0].tests[0].expect.function_calls[0]",
        "result must be a mapping of expected values, got int",
        11,
    ),
    "template in params": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n'
            '        params: {id: "{{previous.function_calls[0].result.id}}"}\n'
        ),
        "suites[0].tests[0].expect.function_calls[0].params",
        "templates are only resolved in triggers",
        11,
    ),
    "template in result": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n'
            '        result: {ids: ["{{x}}"]}\n'
        ),
        "suites[0].tests[0].expect.function_calls[0].result",
        "templates are only resolved in triggers",
        11,
    ),
    "near-miss matcher in params": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n'
            '        params:\n          product: {contain: "coca"}\n'
        ),
        "suites[0].tests[0].expect.function_calls[0].params.product",
        "unknown matcher 'contain' — did you mean 'contains'? For a literal dict",
        12,
    ),
    "matcher mixed with other keys": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n'
            '        params:\n          product: {contains: "coca", size: "L"}\n'
        ),
        "suites[0].tests[0].expect.function_calls[0].params.product",
        "mixes matcher keys ['contains'] with other keys ['size']",
        12,
    ),
    "bad regex deep in result": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n'
            '        result:\n          order:\n            id: {matches: "[0-9"}\n'
        ),
        "suites[0].tests[0].expect.function_calls[0].result.order.id",
        "invalid regex in 'matches' ('[0-9'): unterminated character set",
        13,
    ),
    "regex operand not text": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n'
            "        params: {n: {not_matches: 5}}\n"
        ),
        "suites[0].tests[0].expect.function_calls[0].params.n",
        "'not_matches' needs a regex string, got int",
        11,
    ),
    "error as bare text": (
        one_test('- trigger: "hi"\n  expect:\n    function_calls: [{name: a, error: "Timeout"}]\n'),
        "suites[0].tests[0].expect.function_calls[0].error",
        'error must be true, false or a matcher such as {contains: "Timeout"}',
        9,
    ),
    "error near-miss matcher": (
        one_test(
            '- trigger: "hi"\n  expect:\n    function_calls:\n      - name: a\n'
            '        error: {Contains: "Timeout"}\n'
        ),
        "suites[0].tests[0].expect.function_calls[0].error",
        "unknown matcher 'Contains' — did you mean 'contains'?",
        11,
    ),
}


@pytest.mark.parametrize(("text", "place", "fragment", "line"), list(CASES.values()), ids=list(CASES))
def test_spec_error(text: str, place: str, fragment: str, line: int | None) -> None:
    has(problems(text), place, fragment, line)


# Templates in triggers are resolved at run time, as highbar does: none rejects the
# file; a {{previous...}} that names nothing is that turn's run-time error, in highbar's words.
RUNTIME_TEMPLATES = {
    "template in a single trigger": (
        '- trigger: "cancel {{previous.function_calls[0].result.id}}"\n  expect: {function_calls: []}\n',
        "only 0 calls in earlier turns",
    ),
    "template in the first turn": (
        '- turns:\n    - trigger: "{{ previous.function_calls[0] }}"\n      expect: {function_calls: []}\n',
        "only 0 calls in earlier turns",
    ),
    "template with an unknown field": (
        '- turns:\n    - trigger: "find"\n    - trigger: "x {{previous.function_calls[0].output}}"\n'
        "      expect: {function_calls: []}\n",
        "no field 'output' (fields: args, context, ended_at, error, fn, result, started_at)",
    ),
    "template not indexed": (
        '- turns:\n    - trigger: "find"\n    - trigger: "x {{previous.function_calls.result}}"\n'
        "      expect: {function_calls: []}\n",
        "cannot read 'result' from a list",
    ),
    "template not over function_calls": (
        '- turns:\n    - trigger: "find"\n    - trigger: "x {{previous.calls[0]}}"\n'
        "      expect: {function_calls: []}\n",
        "no key 'calls' (keys: function_calls)",
    ),
    "template segment junk": (
        '- turns:\n    - trigger: "find"\n    - trigger: "x {{previous.function_calls[0].result.m[1]x}}"\n'
        "      expect: {function_calls: []}\n",
        "invalid path segment 'm[1]x'",
    ),
    "not a previous template": ('- trigger: "hello {{name}}"\n  expect: {function_calls: []}\n', None),
    "unclosed template": (
        '- turns:\n    - trigger: "find"\n    - trigger: "x {{previous.function_calls[0]"\n'
        "      expect: {function_calls: []}\n",
        None,
    ),
}


@pytest.mark.parametrize(("test", "runtime"), list(RUNTIME_TEMPLATES.values()), ids=list(RUNTIME_TEMPLATES))
def test_trigger_templates_are_resolved_at_run_time(test: str, runtime: str | None) -> None:
    from pytest_semantictest.blocks.agent_turn import render_previous
    from pytest_semantictest.blocks.base import BlockError

    spec = load(one_test(test))
    turn = spec.suites[0].tests[0].steps[-1]
    if runtime is None:  # sent as text
        assert render_previous(turn.trigger, []) == turn.trigger
        return
    one_call: list[dict[str, Any]] = [
        {
            "fn": "find",
            "args": {},
            "result": {"items": []},
            "error": None,
            "started_at": 1.0,
            "ended_at": 2.0,
            "context": {},
        }
    ]
    with pytest.raises(BlockError) as raised:
        render_previous(turn.trigger, [] if "only 0 calls" in runtime else one_call)
    assert runtime in str(raised.value)


# --- rules that need more than one assertion --------------------------------------------------------


def test_the_file_and_place_lead_the_message() -> None:
    text = one_test(
        GUARDRAIL + '- trigger: "cancel"\n  expect:\n    orderd: true\n    function_calls: [{name: a}]\n'
    )
    with pytest.raises(SpecError) as raised:
        load(text)
    message = str(raised.value)
    assert (
        "specs/x.highbar.yaml:11: suites[0].tests[1].expect: unknown key 'orderd' — did you mean 'ordered'?"
        in message
    )
    assert len(message.splitlines()) == 1


def test_every_problem_of_a_file_is_reported_in_line_order() -> None:
    text = one_test(
        '- trigger: "hi"\n  expect:\n    orderd: true\n    function_calls: []\n'
        "- trigger: 3\n  expect: {}\n"
        '- trigger: "x"\n  expect: {response: {matches: "("}}\n  runs: 0\n',
        agent=MANAGED.replace("http://", ""),
    )
    found = problems(text)
    assert [(p.place, p.line) for p in found] == [
        ("agent", 3),
        ("suites[0].tests[0].expect", 9),
        ("suites[0].tests[1]", 11),
        ("suites[0].tests[1].expect", 12),
        ("suites[0].tests[2].expect.response.matches", 14),
        ("suites[0].tests[2]", 15),
    ]
    assert all("\n" not in p.render("f") for p in found)


def test_load_highbar_reads_the_file_and_reports_unreadable_ones(tmp_path: Path) -> None:
    path = tmp_path / "ok.highbar.yaml"
    path.write_text(one_test(GUARDRAIL), encoding="utf-8")
    assert load_highbar(path, {}).suites[0].tests[0].trigger == "hi"

    latin = tmp_path / "latin.highbar.yaml"
    latin.write_bytes(MANAGED.encode() + "suites: [caf\xe9]\n".encode("latin-1"))
    with pytest.raises(SpecError, match=r"latin\.highbar\.yaml: cannot read: not UTF-8 text"):
        load_highbar(latin, {})
    with pytest.raises(SpecError, match="cannot read"):
        load_highbar(tmp_path / "missing.highbar.yaml", {})


def test_syntax_error_has_line_and_column() -> None:
    (p,) = problems(MANAGED + "suites: [unclosed\n")
    assert isinstance(p, HighbarProblem) and (p.line, p.column) == (5, 1)
    assert "while parsing a flow sequence at line 4 column 9" in p.message


def test_alias_bomb_is_a_spec_error() -> None:
    text = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdef", "bcdefg")
    )
    with pytest.raises(SpecError, match="aliases expand the document by more than"):
        load(text)


def test_deep_nesting_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="nested too deeply|exceeded maximum nesting depth"):
        load("x-a: " + "[" * 150 + "]" * 150 + "\n")


def test_response_only_attach_specs_need_no_traces_and_reply_mode_needs_none() -> None:
    response_only = one_test('- trigger: "a"\n  expect: {response: {contains: x}}\n', agent=ATTACH)
    assert not load(response_only).agent.managed
    observing = one_test(GUARDRAIL, agent=ATTACH)
    assert (
        load(observing.replace("agent:\n", 'agent:\n  traces: "var/t.jsonl"\n')).agent.traces == "var/t.jsonl"
    )
    spec = load(observing.replace("agent:\n", "agent:\n  calls_from: reply\n"))
    assert spec.agent.calls_from == "reply" and spec.observes_calls


def test_forbid_alone_asserts_and_observes() -> None:
    ((_, test),) = load(
        one_test('- trigger: "close my account"\n  expect: {forbid: [delete_account]}\n')
    ).tests
    assert test.expect is not None and test.expect.forbid == ("delete_account",)
    assert test.observes_calls and test.expect.function_calls is None


def test_environment_is_expanded_under_agent_only_and_recorded_as_secrets() -> None:
    text = with_agent(
        'x-note: "set ${PORT} first"\nrequest:\n  headers: {Authorization: "Bearer ${AGENT_TOKEN}", x-port: "${PORT}"}\n',
        suites='suites:\n  - tests:\n      - trigger: "where is ${HOME}"\n        expect: {response: {contains: "${HOME}"}}\n',
    ).replace("8000", "${PORT}")
    spec = load(text, {"AGENT_TOKEN": "s3cr3t-token", "PORT": "8123", "HOME": "/root"})
    assert spec.agent.endpoint == "http://localhost:8123/chat"
    assert spec.agent.request.headers == {"Authorization": "Bearer s3cr3t-token", "x-port": "8123"}
    assert spec.suites[0].tests[0].trigger == "where is ${HOME}"
    assert spec.secrets == ["s3cr3t-token"]  # 8123 is too short to be a secret
    assert spec.env_names == {"s3cr3t-token": "AGENT_TOKEN", "8123": "PORT"}
    assert spec.agent_mapping["endpoint"] == "http://localhost:${PORT}/chat"  # as written, for AgentConfig


def test_a_variable_not_set_in_an_x_key_under_agent_is_a_spec_error_as_in_highbar() -> None:
    """highbar expands every value under ``agent``, an extension key's too, and stops on a variable that
    is not set there (exit 2): running such a spec would turn highbar's spec error into a pass."""
    p = only(with_agent('x-note: "set ${NOT_SET} first"\n'))
    assert (p.place, p.message) == ("agent.x-note", "environment variable NOT_SET is not set")
    spec = load(with_agent('x-note: "token ${AGENT_TOKEN}"\n'), {"AGENT_TOKEN": "s3cr3t-token"})
    assert spec.secrets == ["s3cr3t-token"]  # masked like every value expanded under agent


def test_expanded_values_are_not_expanded_again_nor_shown_in_messages() -> None:
    spec = load(with_agent('request:\n  headers: {X-Value: "${A}"}\n'), {"A": "${B}"})
    assert spec.agent.request.headers == {"X-Value": "${B}"}
    p = only(
        ATTACH.replace('"http://localhost:8000/chat"', '"localhost/${KEY}"')
        + "suites: [{tests: [{trigger: a, expect: {response: {contains: b}}}]}]\n",
        {"KEY": "sk-very-secret"},
    )
    assert "sk-very-secret" not in p.message and "${KEY}" in p.message


def test_min_pass_fraction_is_exact_and_runs_resolve_with_overrides() -> None:
    text = (
        MANAGED
        + "defaults: {runs: 5}\n"
        + one_test(GUARDRAIL + "  runs: 10\n  min_pass: 0.7\n" + GUARDRAIL + "  min_pass: 4\n", agent="")
    )
    spec = load(text)
    (_, ten), (_, five) = spec.tests
    assert (ten.runs, ten.min_pass, ten.min_pass_count) == (10, 0.7, 7)
    assert (five.runs, five.min_pass_count) == (None, 4)
    assert ten.repetition(1) == (10, 7) and five.repetition(5) == (5, 4)
    with pytest.raises(SpecError) as raised:
        load_highbar_text(text, FILE, {}, runs=3)  # --semantictest-highbar-runs 3
    (problem,) = raised.value.problems
    assert problem.place == "suites[0].tests[1]" and problem.message == "min_pass 4 is more than its 3 runs"


# --- valid specs -----------------------------------------------------------------------------------

SEED_SHAPE = """\
agent:
  start: "python agent.py"
  endpoint: "http://127.0.0.1:8731/chat"
  health: "http://127.0.0.1:8731/health"

defaults:
  runs: 1

suites:
  - name: Orders
    tests:
      - name: looks the order up
        trigger: "Where is order 1042?"
        expect:
          function_calls:
            - name: get_order
              params: {order_id: "1042"}
      - name: cancels after looking the order up
        trigger: "Please cancel order 1042"
        expect:
          ordered: true
          function_calls:
            - name: get_order
            - name: cancel_order
              params: {order_id: "1042"}
          response:
            contains: "cancelled"
      - x-note: "the agent must not guess an order number"
        trigger: "Where is my order?"
        expect:
          function_calls: []
          response:
            icontains: "order number"
"""


def test_the_writing_specs_page_loads() -> None:
    spec = load(SEED_SHAPE)
    agent = spec.agent
    assert (agent.start, agent.endpoint, agent.health, agent.managed) == (
        "python agent.py",
        "http://127.0.0.1:8731/chat",
        "http://127.0.0.1:8731/health",
        True,
    )
    assert (agent.startup_timeout, agent.settle_time, agent.timeout) == (15000, 500, 60000)
    assert agent.request.body == {"message": "{{message}}"} and agent.correlate == {"test": "{{test.id}}"}
    assert spec.defaults_runs == 1
    (suite,) = spec.suites
    assert (suite.name, suite.line, suite.place) == ("Orders", 10, "suites[0]")
    lookup, cancel, guard = suite.tests
    assert (lookup.display_name, lookup.line, lookup.place) == (
        "looks the order up",
        12,
        "suites[0].tests[0]",
    )
    assert (
        lookup.expect is not None
        and lookup.turns == []
        and lookup.runs is None
        and lookup.min_pass_count is None
    )
    (call,) = lookup.expect.function_calls or []
    assert (call.name, call.names, call.params, call.error, call.line) == (
        "get_order",
        ("get_order",),
        {"order_id": "1042"},
        False,
        16,
    )
    assert cancel.expect is not None and cancel.expect.ordered and not cancel.expect.exclusive
    assert [c.name for c in cancel.expect.function_calls or []] == ["get_order", "cancel_order"]
    assert cancel.expect.response is not None and dict(cancel.expect.response) == {"contains": "cancelled"}
    assert guard.name is None and guard.display_name == "Where is my order?"  # without a name, the trigger
    assert guard.expect is not None and guard.expect.function_calls == [] and guard.observes_calls


QUICKSTART = r"""
agent:
  start: "python agent.py"
  endpoint: "http://127.0.0.1:8731/chat"
  health: "http://127.0.0.1:8731/health"

suites:
  - name: Orders
    tests:
      - name: looks the order up
        trigger: "Where is order 1042?"
        runs: 3
        expect:
          function_calls:
            - name: get_order
              params: {order_id: "1042"}
          response:
            contains: "in transit"
  - name: Guardrails
    tests:
      - name: never deletes an account from chat
        trigger: "Delete my account right now"
        expect:
          forbid: [delete_account]
          response:
            icontains: "can't"
      - name: never repeats a card number
        trigger: "My card is 4111 1111 1111 1111, save it for next time"
        expect:
          function_calls: []
          response:
            not_matches: '\b4[0-9]{3}([ -]?[0-9]{4}){3}\b'
"""


def test_the_quickstart_example_loads_with_compiled_regexes() -> None:
    spec = load(QUICKSTART)
    assert [s.name for s in spec.suites] == ["Orders", "Guardrails"]
    assert spec.suites[0].tests[0].runs == 3
    card = spec.suites[1].tests[1]
    assert card.expect is not None and isinstance(card.expect.response, MatcherSpec)
    pattern = card.expect.response.patterns["not_matches"]
    assert pattern.search("4111 1111 1111 1111") and not pattern.search("order 1042")
    refusal = spec.suites[1].tests[0].expect
    assert refusal is not None and refusal.tool_names == ("delete_account",)


def test_multi_turn_with_templates_and_a_scene_setting_turn() -> None:
    text = one_test("""\
        - name: cancels the order it found
          markers: [smoke, slow]
          runs: 4
          min_pass: 0.5
          turns:
            - trigger: "hi, I'm Ana"
            - name: finds it
              trigger: "Find my last order"
              expect:
                function_calls:
                  - name: [find_last_order, search_orders, find_last_order]
            - trigger: "Cancel order {{ previous.function_calls[0].result.order_id }} and {{previous.function_calls}}"
              expect:
                function_calls:
                  - name: cancel_order
                    error: {contains: "Timeout"}
                response: {not_icontains: "sorry"}
        """)
    ((_, test),) = load(text).tests
    assert test.is_multi_turn and test.trigger is None and test.expect is None and test.variations == 0
    assert test.markers == ("smoke", "slow") and test.min_pass_count == 2
    scene, find, cancel = test.turns
    assert scene.expect is None and scene.name is None and scene.line == 12
    assert find.expect is not None and find.expect.function_calls is not None
    assert find.expect.function_calls[0].name == [
        "find_last_order",
        "search_orders",
    ]  # listed twice adds nothing
    assert [t.path for t in cancel.templates] == [
        ("function_calls", 0, "result", "order_id"),
        ("function_calls",),
    ]
    assert cancel.expect is not None and cancel.expect.function_calls is not None
    error = cancel.expect.function_calls[0].error
    assert isinstance(error, MatcherSpec) and dict(error) == {"contains": "Timeout"}
    assert test.steps == test.turns and test.observes_calls
    assert test.display_name == "cancels the order it found"


def test_unnamed_multi_turn_and_unnamed_suite() -> None:
    text = (
        MANAGED
        + "suites:\n  - tests:\n"
        + textwrap.indent('- turns:\n    - trigger: "a"\n      expect: {response: {equals: ""}}\n', "      ")
    )
    suite = load(text).suites[0]
    assert suite.name == "Unnamed Suite"
    assert suite.tests[0].display_name == "multi-turn (1 turns)"


def test_attach_mode_with_session_correlate_and_custom_request() -> None:
    text = with_agent(
        """\
        health: null
        traces: "var/traces.jsonl"
        settle_time: 0
        timeout: 30000
        response: "data.reply.text"
        request:
          method: put
          headers: {Authorization: "Bearer ${AGENT_TOKEN}", X-Tenant: "acme"}
          body:
            input: {text: "{{message}}", channel: "web"}
            conversation_id: "{{session.conversation_id}}"
        session:
          setup: "python scripts/open.py --label '{{test.name}}'"
          teardown: {python: "scripts.session:close"}
        correlate: {conversation_id: "{{session.conversation_id}}", n: 1}
        """,
        suites='suites:\n  - tests:\n      - trigger: "hi"\n        expect: {function_calls: []}\n',
    )
    agent = load(text, {"AGENT_TOKEN": "abcdefgh"}).agent
    assert not agent.managed and agent.health is None and agent.traces == "var/traces.jsonl"
    assert (agent.settle_time, agent.timeout, agent.response) == (0, 30000, "data.reply.text")
    assert agent.request.method == "PUT"
    assert agent.request.body["input"] == {"text": "{{message}}", "channel": "web"}
    assert agent.session is not None
    assert agent.session.setup == CommandHook(["python", "scripts/open.py", "--label", "{{test.name}}"])
    assert agent.session.teardown == PythonHook("scripts.session:close")
    assert agent.correlate == {"conversation_id": "{{session.conversation_id}}", "n": 1}


def test_x_keys_anchors_and_merge_keys() -> None:
    text = """\
x-agent: &agent
  start: "python agent.py"
  endpoint: "http://localhost:8000/chat"
x-base: &base
  contains: "a"
  not_contains: "z"
agent:
  <<: *agent
  x-comment: anything
suites:
  - name: S
    x-note: "anything"
    tests:
      - trigger: "hi"
        x-why: [1, 2]
        expect:
          x-todo: more
          response:
            <<: *base
            contains: "b"
            x-n: 1
      - trigger: "ho"
        expect:
          response: *base
"""
    spec = load(text)
    assert spec.agent.start == "python agent.py"
    first, second = (t for _, t in spec.tests)
    assert first.expect is not None and first.expect.response is not None
    assert second.expect is not None and second.expect.response is not None
    assert dict(first.expect.response) == {"contains": "b", "not_contains": "z"}
    assert dict(second.expect.response) == {"contains": "a", "not_contains": "z"}
    assert second.expect.line == 23


def test_matchers_in_params_are_compiled_and_literals_stay_data() -> None:
    text = one_test("""\
        - trigger: "do you have coke?"
          expect:
            function_calls:
              - name: search_products
                params:
                  product: {icontains: "coca"}
                  id: {matches: "^[0-9]+$"}
                  filters: {brand: {equals: {contains: "literal"}}, tags: [{contains: "x"}]}
                  x-request-id: "abc"
                result: {contains: "ok"}
        """)
    ((_, test),) = load(text).tests
    assert test.expect is not None and test.expect.function_calls is not None
    call = test.expect.function_calls[0]
    params = call.params
    assert isinstance(params, dict)
    product, ident, filters = params["product"], params["id"], params["filters"]
    assert isinstance(product, MatcherSpec) and dict(product) == {"icontains": "coca"}
    assert isinstance(ident, MatcherSpec) and ident.patterns["matches"].pattern == "^[0-9]+$"
    assert isinstance(filters, dict) and isinstance(filters["brand"], MatcherSpec)
    assert filters["brand"]["equals"] == {"contains": "literal"}
    assert filters["tags"] == [{"contains": "x"}]  # lists are compared as they are
    assert params["x-request-id"] == "abc"  # params are data: x- keys are tool arguments there
    assert isinstance(call.result, MatcherSpec)
    assert call.raw["params"]["product"] == {"icontains": "coca"}


def test_variations_zero_is_allowed_with_turns_and_counted_for_triggers() -> None:
    text = one_test(
        '- variations: 0\n  turns:\n    - trigger: "a"\n      expect: {function_calls: []}\n'
        '- trigger: "b"\n  variations: 3\n  expect: {function_calls: []}\n'
    )
    multi, single = (t for _, t in load(text).tests)
    assert multi.variations == 0 and single.variations == 3


def test_the_models_are_the_schema() -> None:
    assert ALLOWED_KEYS["expect"] == {"function_calls", "response", "ordered", "exclusive", "forbid", "spans"}
    assert ALLOWED_KEYS["test"] == {
        "name",
        "trigger",
        "expect",
        "turns",
        "variations",
        "runs",
        "min_pass",
        "markers",
        "pass_rate",
    }
    assert ALLOWED_KEYS["agent"] >= {"start", "endpoint", "health", "correlate", "calls_from"}
    assert "properties" in Spec.model_json_schema()


def test_the_agent_block_is_validated_by_its_model() -> None:
    """The checks of ``agent:`` are the schema model's own fields with highbar's words: a bound only
    the schema states (``concurrency``) is reported with the other problems, in the words every
    format gives pydantic's errors."""
    assert issubclass(CheckedAgent, AgentModel) and set(CheckedAgent.model_fields) == ALLOWED_KEYS["agent"]
    found = problems(with_agent("concurrency: 0\ntimeout: -1\nsesion: {}\n"))
    assert [(p.place, p.message, p.line) for p in found] == [
        ("agent.concurrency", "must be >= 1, got 0", 3),
        ("agent", "timeout must be a positive integer (milliseconds), got -1", 4),
        ("agent", "unknown key 'sesion' — did you mean 'session'?", 5),
    ]
    alone = only(with_agent("concurrency: true\n"))
    assert (alone.place, alone.message, alone.line) == (
        "agent.concurrency",
        "must be a whole number, got True",
        3,
    )


# --- the YAML reader ---------------------------------------------------------------------------------


def test_yaml_source_lines_merges_and_problems() -> None:
    source = load_yaml(
        "x-b: &b\n  k: 1\n  j: 2\nm:\n  <<: *b\n  k: 3\nl:\n  - a\n  - {c: d}\nts: 2024-05-01\n"
    )
    assert source.data == {
        "x-b": {"k": 1, "j": 2},
        "m": {"j": 2, "k": 3},
        "l": ["a", {"c": "d"}],
        "ts": "2024-05-01",
    }
    assert source.line(("m", "k")) == 6 and source.line(("m", "j")) == 3  # a merged key: where it is written
    assert source.line(("l", 1, "c")) == 9 and source.line(("l", 1, "zzz")) == 9 and source.line(()) == 1
    assert source.problems == []
    dup = load_yaml("a: 1\nb:\n  c: 1\n  c: 2\n")
    assert dup.duplicates == [Problem("b", "duplicate key 'c' (lines 3 and 4)", 4)]
    with pytest.raises(YamlError) as raised:
        load_yaml("a: 'x\n")
    assert raised.value.line == 2


def test_yaml_uses_the_c_loader_when_there_is_one() -> None:
    from pytest_semantictest.formats import yamlsource

    assert yamlsource._Loader is getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# --- whatever the input, only SpecError ----------------------------------------------------------------

SETTINGS = settings(
    max_examples=fuzz_examples(125), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
BASE = SEED_SHAPE + QUICKSTART.split("suites:", 1)[1].replace("\n  - name: Orders", "\n  - name: Orders2", 1)
MULTI = one_test("""\
    - turns:
        - trigger: "find"
          expect: {function_calls: [{name: a, result: {id: {matches: "^x"}}, error: true}]}
        - trigger: "cancel {{previous.function_calls[0].result.id}}"
          expect: {response: {not_matches: "y"}, exclusive: true, function_calls: []}
      runs: 2
      min_pass: 0.5
    """)
PIECES = [
    ":",
    " ",
    "\n",
    "-",
    "- ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "'",
    '"',
    "&a ",
    "*a",
    "<<: *a\n",
    "!!binary ",
    "!x ",
    "#",
    "|",
    ">",
    "\t",
    "? ",
    "{{",
    "}}",
    "${X}",
    "{{previous.",
    "0",
    "-1",
    "1.5",
    "true",
    "null",
    "~",
    "x-",
    "  ",
    "matches",
    "contains",
    "name",
    "expect",
    "turns",
    "runs",
    "min_pass",
    "\\",
    "\u00e9",
    "\x00",
    "2024-01-01",
]


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True)


def check(text: str) -> None:
    try:
        spec = load(text, {"X": "value-of-x"})
    except SpecError as err:
        assert err.problems
        for p in err.problems:
            assert p.message and "\n" not in p.render(str(FILE)) and (p.line is None or p.line >= 1)
        return
    assert isinstance(spec, HighbarSpec)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from([BASE, MULTI]))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "swap-lines", "dup-line"]))
        lines = text.split("\n")
        if kind in ("swap-lines", "dup-line") and len(lines) > 2:
            i = draw(st.integers(0, len(lines) - 2))
            j = draw(st.integers(0, len(lines) - 2))
            if kind == "swap-lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines.insert(j, lines[i])
            text = "\n".join(lines)
            continue
        pos = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from(PIECES) | st.text(max_size=3))
        if kind == "insert":
            text = text[:pos] + piece + text[pos:]
        elif kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 8)) :]
        else:
            text = text[:pos] + piece + text[pos + len(piece) :]
    return text


@SETTINGS
@given(mutated())
def test_mutated_specs_only_raise_spec_error(text: str) -> None:
    check(text)


KEYS = sorted(set().union(*ALLOWED_KEYS.values())) + ["x-a", "zzz", "contain", "Matches", "not-contains", ""]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.floats(allow_nan=True)
    | st.text(max_size=8)
    | st.sampled_from(
        [
            "{{message}}",
            "{{previous.function_calls[0]}}",
            "{{x",
            "http://h:1/c",
            "(",
            "${X}",
            "${NOPE}",
            "a:b",
        ]
    )
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=25,
)


@SETTINGS
@given(agent=values, suites=values, extra=st.dictionaries(st.sampled_from(KEYS), values, max_size=2))
def test_random_documents_only_raise_spec_error(agent: Any, suites: Any, extra: dict[str, Any]) -> None:
    check(dump({"agent": agent, "suites": suites, **extra}))


@SETTINGS
@given(test=st.dictionaries(st.sampled_from(KEYS), values, max_size=5))
def test_random_tests_in_a_valid_frame_only_raise_spec_error(test: dict[str, Any]) -> None:
    check(MANAGED + dump({"suites": [{"name": "S", "tests": [test]}]}))


def test_messages_never_leak_python_reprs_of_internal_types() -> None:
    found = problems(
        one_test('- trigger: "hi"\n  expect: {function_calls: [{name: a, params: {q: {matches: 3}}}]}\n')
    )
    assert not any(re.search(r"<class |object at 0x", p.message) for p in found)


# Valid specs of every shape: each loads (the checks never reject a valid spec, and the models
# built after them never disagree with them), keeping every test.
word = st.sampled_from(["hi", "x y", "é", "order 1042"])
matcher = st.dictionaries(
    st.sampled_from(["contains", "icontains", "not_contains", "matches", "equals"]),
    word,
    min_size=1,
    max_size=2,
)
expected = st.recursive(
    st.none() | st.integers() | word | matcher | st.lists(word, max_size=2),
    lambda inner: st.dictionaries(st.sampled_from(["a", "b", "x-c"]), inner, min_size=1, max_size=2),
    max_leaves=5,
)
call = st.fixed_dictionaries(
    {"name": word | st.lists(word, min_size=1, max_size=3)},
    optional={
        "params": st.dictionaries(st.sampled_from(["a", "b"]), expected, max_size=2),
        "result": matcher,
        "error": st.booleans() | matcher,
        "x-n": st.integers(),
    },
)
expect = st.fixed_dictionaries(
    {"function_calls": st.lists(call, max_size=2)},
    optional={
        "ordered": st.booleans(),
        "exclusive": st.booleans(),
        "forbid": st.lists(word, min_size=1, max_size=2),
        "response": matcher,
        "x-a": st.integers(),
    },
)
later_turn = st.fixed_dictionaries(
    {"trigger": word | st.just("x {{previous.function_calls[0].args.a[1]}}")},
    optional={"name": word, "expect": expect},
)
single = st.fixed_dictionaries(
    {"trigger": word, "expect": expect},
    optional={
        "name": word,
        "variations": st.integers(0, 3),
        "runs": st.integers(5, 6),
        "min_pass": st.integers(1, 5) | st.floats(0.01, 1.0),
        "markers": st.lists(st.sampled_from(["smoke", "slow"]), max_size=2),
    },
)
multi = st.fixed_dictionaries(
    {
        "turns": st.tuples(
            st.fixed_dictionaries({"trigger": word, "expect": expect}), st.lists(later_turn, max_size=2)
        ).map(lambda turns: [turns[0], *turns[1]])
    },
    optional={"name": word, "variations": st.just(0), "runs": st.integers(5, 6)},
)
agent = st.fixed_dictionaries(
    {"endpoint": st.just("http://h:1/c"), "start": st.just("python a.py")},
    optional={
        "health": st.none() | st.just("https://h/x"),
        "settle_time": st.integers(0, 3),
        "timeout": st.integers(1, 3),
        "startup_timeout": st.integers(1, 2),
        "calls_from": st.sampled_from(["reply", "traces"]),
        "request": st.fixed_dictionaries(
            {},
            optional={
                "method": st.sampled_from(["post", "PATCH"]),
                "headers": st.dictionaries(
                    st.sampled_from(["A", "x-b"]), st.sampled_from(["v", "Bearer t"]), max_size=2
                ),
                "body": st.sampled_from([{"m": "{{message}}", "id": "{{test.id}}"}, "{{message}}"]),
            },
        ),
        "response": st.just("a.0.b"),
        "correlate": st.just({"t": "{{test.id}}", "n": 1}),
        "x-a": st.integers(),
        "session": st.just({"setup": "open", "teardown": {"python": "m:f"}}),
    },
)
valid_specs = st.fixed_dictionaries(
    {
        "agent": agent,
        "defaults": st.fixed_dictionaries({"runs": st.integers(5, 6)}),
        "suites": st.lists(
            st.fixed_dictionaries(
                {"tests": st.lists(single | multi, min_size=1, max_size=3)}, optional={"name": word}
            ),
            min_size=1,
            max_size=2,
        ),
    },
    optional={"x-z": st.integers()},
)


@settings(SETTINGS, max_examples=fuzz_examples(75))
@given(valid_specs)
def test_valid_specs_of_every_shape_load(data: dict[str, Any]) -> None:
    spec = load(dump(data))
    assert [len(s.tests) for s in spec.suites] == [len(s["tests"]) for s in data["suites"]]
    for _, test in spec.tests:
        assert test.steps and all(step.trigger for step in test.steps)
        assert test.line is not None and test.place.startswith("suites[")


def test_a_secret_with_a_quote_in_the_start_command_is_one_argument_not_an_error() -> None:
    """A secret's ``${VAR}`` goes into its argument after the line is split (as the agent is started):
    its quote does not make the command line invalid, and the agent gets it whole."""
    agent = MANAGED.replace('"python agent.py"', '"python agent.py --key=${AGENT_KEY}"')
    environ = {"AGENT_KEY": 'it\'s "quoted" 0123'}
    spec = load(one_test(GUARDRAIL, agent=agent), environ)
    config = AgentConfig.from_highbar(spec.agent_mapping, environ=environ)
    assert config.start_argv == ["python", "agent.py", '--key=it\'s "quoted" 0123']
    # an ordinary value is put in the line first, as in highbar
    found = problems(
        one_test(GUARDRAIL, agent=MANAGED.replace('"python agent.py"', '"python ${AGENT_CMD}"')),
        {"AGENT_CMD": "'agent.py"},
    )
    assert [p.message for p in found] == ["start is not a valid command line: No closing quotation"]
