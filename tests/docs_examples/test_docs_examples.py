"""Every runnable example of the SemanticTest docs, with the verdict the docs intend.

Each suite is one docs page's examples (named after the page; its ``description`` gives the page URL and
every adaptation), read from the documentation at test time: ``pages/<name>.json`` says where in the docs
each part is and what we adapted (docs_text.py; this repository keeps no copy of the docs). Public URLs became ``${BASE_URL}`` (``"${env.BASE_URL}"`` in the file), which this
module points at the loopback example agent (examples/agents/chat_agent.py) by overriding the suite's context,
then runs the suite with ``run_suite``. Where the example server cannot serve what an example needs, a MockData
step carries a realistic response instead. LLMJudge examples must come out SKIPPED ("LLM judge not
configured") until a judge is configured, never PASSED.

Examples deliberately left out are listed in ``LEFT_OUT``; examples whose intended verdict the engine does not
give yet are strict xfails in ``XFAIL`` (the reason says what the engine should do).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.api import SuiteResult, run_suite
from pytest_semantictest.model import Outcome, Verdict

HERE = Path(__file__).resolve().parent
AGENTS_DIR = HERE.parents[1] / "examples" / "agents"
sys.path.insert(0, str(AGENTS_DIR))

import chat_agent  # noqa: E402
import docs_text  # noqa: E402

from tests.shared import needs_docs  # noqa: E402

pytestmark = needs_docs

P, F, S = "passed", "failed", "skipped"
JUDGE_SKIP = "LLM judge not configured"

# suite file -> {test id: intended verdict}, in the docs' section order
EXPECTED: dict[str, dict[str, str]] = {
    "installation.json": {"verify": P},
    "introduction.json": {"get-user": S},
    "quickstart.json": {"simple-test": P, "semantic-test": S},
    "basic_api_test.json": {
        "get-user": P,
        "create-post": P,
        "get-posts": P,
        "with-error-handling": P,
        "with-authentication": P,
    },
    "basic_api_test_setup_teardown.json": {"get-test-user": P},
    "error_handling.json": {
        "validation-failure": P,
        "missing-data": P,
        "retry-on-failure": P,
        "missing-optional-field": P,
        "retry-logic": P,
        "reject-invalid-email": P,
        "helpful-error": P,
        "timeout-handling": P,
        "api-with-error-handling": P,
    },
    "calendar_agent.json": {
        "schedule-meeting": S,
        "conflict-handling": S,
        "multi-attendee": P,
        "real-calendar-api": P,
        "retry-logic": P,
        "timezone-handling": P,
    },
    "ai_chat_test.json": {"meeting-scheduler": S, "bad-response-detection": S, "openai-chat-api": S},
    "pipelines.json": {"my-test": P},
    "pipelines_setup_teardown.json": {"test1": P},
    "data_flow.json": {
        "variable-resolution": P,
        "resolution-order": P,
        "data-transformation": P,
        "context-variables": P,
    },
    "input_formats.json": {
        "from-as-example": P,
        "object-format": P,
        "api-requests-with-auth": P,
        "validation-with-specific-field": P,
        "tool-validation": P,
    },
    "output_formats.json": {
        "string-format": P,
        "object-format": P,
        "default-format": P,
        "full-pipeline-example": P,
        "stream-split-output": P,
        "http-request-and-parse": P,
        "llm-judge-validation-results": S,
    },
    # assertion-failures: the page's "Assertion Failures" output (user.age and judgement.score fail)
    "assertions.json": {
        "overview": P,
        "simple-equality": P,
        "equality-operators": P,
        "numeric-comparisons": P,
        "string-array-operations": P,
        "pattern-matching": P,
        "type-checks": P,
        "boolean-checks": P,
        "empty-checks": P,
        "test-user": S,
        "multiple-operators": P,
        "success-status-range": P,
        "judge-score-range": S,
        "user-field-validation": P,
        "tool-validation-pattern": P,
        "assertion-failures": F,
        "success-case": P,
        "error-case": P,
        "allows-for-variance": P,
        "structure-and-content-checks": P,
        "test-what-matters": P,
    },
    "http_request.json": {
        "simple-get": P,
        "post-with-json-body": P,
        "get-with-query-parameters": P,
        "put-with-string-body": P,
        "custom-timeout": P,
        "rest-operations": P,
        "error-handling": P,
        "http-status-is-not-an-error": P,
        "create-user": P,
    },
    "json_parser.json": {
        "basic-usage": P,
        "string-input-format": P,
        "parsing-arrays": P,
        "error-handling": P,
        "http-request-and-parse": P,
        "nested-data-extraction": P,
        "multiple-parse-operations": P,
        "test-parse": P,
    },
    "stream_parser.json": {
        "parse-openai-stream": P,
        "parse-vercel-stream": P,
        "extract-tool-calls": P,
        "generic-sse-stream": P,
        "test-function-calling": P,
        "vercel-ai-sdk-stream": P,
        "multi-turn-conversation": P,
        "stream-metadata": P,
        "test-streaming-agent": P,
    },
    "validate_content.json": {
        "overview": P,
        "required-keywords-success": P,
        "required-keywords-failure": P,
        "forbid-inappropriate-content": P,
        "validate-text-length": P,
        "regex-pattern-matching": P,
        "combined-validations": P,
        "validate-ai-response-quality": P,
        "multi-field-validation": P,
        "content-safety-check": P,
        "validation-score": P,
        "validate-ai-response": P,
        "case-insensitive-contains": P,
        "regex-tip": P,
        "structure-and-semantic-checks": S,
    },
    "validate_tools.json": {
        "overview": P,
        "expected-tools-success": P,
        "expected-tools-failure": P,
        "forbid-dangerous-tools": P,
        "validate-tool-count": P,
        "validate-tool-order": P,
        "validate-tool-arguments": P,
        "combined-validations": P,
        "test-calendar-agent": P,
        "ensure-safe-tool-usage": P,
        "validate-multi-step-agent": P,
        "test-customer-query": P,
    },
    "loop.json": {
        "basic-loop": P,
        "conditional-loop-polling": P,
        "retry-until-success": P,
        "threshold-checking": P,
        "multi-step-loop": P,
        "poll-until-complete": P,
        "retry-failed-requests": P,
        "agent-iteration-testing": P,
        "test-job-completion": P,
    },
    "mock_data.json": {
        "overview": P,
        "basic-mock-data": P,
        "mock-user-object": P,
        "mock-api-response": P,
        "mock-array-data": P,
        "test-validation": P,
        "testing-llm-judge": S,
        "mock-multiple-blocks": P,
        "test-with-mock": P,
        "test-with-real-api": P,
        "test-user-validation": P,
        "validation-without-external-dependencies": P,
        "realistic-response-structure": P,
        "test-empty-data": P,
        "test-null-fields": P,
        "mix-mock-and-real-blocks": P,
    },
    # traditional-exact-matching: "Problem: Fails if AI says ... any variation" (exact text vs a JSON body)
    "testing_ai_systems.json": {"traditional-exact-matching": F, "semantic-testing": S, "test-greeting": S},
    "llm_judge.json": {
        "basic-semantic-validation": S,
        "validating-tool-calls": S,
        "multi-turn-conversation": S,
        "custom-scoring-criteria": S,
        "simple-validation": S,
        "test-helpful-response": S,
        "test-article-summary": S,
        "test-code-explanation": S,
    },
    "testing_tool_calls.json": {
        "check-expected-tools": P,
        "combined-validation": P,
        "test-schedule-meeting": P,
        "test-safe-customer-service": P,
        "test-database-query-order": P,
        "test-order-fulfillment-agent": P,
        "combining-with-llm-judge": S,
    },
    "testing_streaming_responses.json": {
        "sse-format": P,
        "parse-openai-stream": P,
        "parse-vercel-stream": P,
        "test-streaming-response": S,
        "test-streaming-with-tools": P,
        "test-vercel-ai-stream": S,
        "test-partial-response": P,
        "testing-performance": P,
        "incomplete-streams": P,
        "stream-validate-judge": S,
        "tool-calls-not-extracted": P,
        "format-details-openai": P,
        "format-details-vercel": P,
        "format-details-generic": P,
    },
    "multi_turn_conversations.json": {
        "turn-1": P,
        "turn-2": P,
        "full-conversation": P,
        "turn-1-greeting": S,
        "turn-2-state-problem": S,
        "turn-3-provide-order": S,
        "laptop-shopping-flow": S,
        "math-tutoring-session": S,
        "test-pronoun-resolution": S,
        "test-state-accumulation": S,
        "test-correction-handling": S,
        "test-ambiguous-reference": S,
        "test-topic-switch": S,
    },
}

XFAIL: dict[tuple[str, str], str] = {}

# docs examples not turned into suites, and why
LEFT_OUT: dict[str, str] = {
    "error-handling: Pattern 1 (Validate Then Assert), Pattern 5 (Multiple Validation Layers)": (
        "skeletons (HttpRequest without input, a JsonParser reading a response nobody made) whose paths "
        "contradict the docs' own output formats (JsonParser 'output': 'parsed' stores {parsed: ...}, so "
        "'parsed.data.*' names nothing); Pattern 1's ValidateContent config 'isNotEmpty' is not an option"
    ),
    "pipelines: Composability, Reusability, Maintainability, Multiple Tests; blocks overview; ai-testing "
    "overview best practices": "block-name skeletons ('{\"block\": \"HttpRequest\"}', '/* ... */') with no data",
    "data-flow: Writing/Reading fragments, Environment Variables, Best Practices (AUTH_HEADER)": (
        "single-line fragments or context-only snippets; their behaviour is covered by data_flow.json and "
        "output_formats.json"
    ),
    "input-formats: Comparison and Best Practices fragments": "fragments ('${payload}', 'from/as mixed with url')",
    "http-request: API Authentication header fragments, Tips": (
        "input fragments without a block (X-API-Key from env, 'Basic ${base64Credentials}'); covered by "
        "http_request.json and basic_api_test.json::with-authentication"
    ),
    "stream-parser: Custom Parsers": "JavaScript registration API (StreamParser.register), not a suite",
    "loop: Tips / Best Practices / nested loops": "'...' skeletons and a counter-example of nesting",
    "llm-judge: continueConversation follow-up request": "reads judgement.nextPrompt, which needs a configured judge",
    "streaming-responses: Debugging Streams '\"response.body\": true'": (
        "a 'print the raw body' trick of the reference CLI that, as an equality assertion, fails by design"
    ),
    "streaming-responses: Timeout Handling, Best Practices": "fragments (${STREAMING_API} with no pipeline)",
    "multi-turn-conversations: test-long-conversation": "'// 50+ messages here' placeholder, no messages",
    "tool-calls: Integration with AI Providers": "request-body fragments and JavaScript (AI SDK generateText)",
    "installation / quickstart / debugging: CLI and JavaScript snippets; custom-blocks": "not suites",
}

# DataBus values some examples must produce ("{BASE_URL}" is replaced; a callable is a predicate)
MISSING = object()
BUS_CHECKS: dict[tuple[str, str], dict[str, Any]] = {
    ("quickstart.json", "simple-test"): {
        "response.status": 200,
        "user.parsed.name": "Leanne Graham",
        "user.parsed.email": "Sincere@april.biz",
    },
    ("basic_api_test.json", "get-user"): {"user.parsed.username": "Bret", "validation.passed": True},
    ("basic_api_test.json", "create-post"): {
        "post.parsed.id": 101,
        "post.parsed.body": "This is a test post",
    },
    ("basic_api_test.json", "with-error-handling"): {"response.status": 200, "_loopCount:request": 2},
    ("basic_api_test.json", "with-authentication"): {
        "HttpRequest.status": 200,
        "HttpRequest.url": "{BASE_URL}/me",
    },
    ("error_handling.json", "helpful-error"): {
        "errorResponse.status": 404,
        "error.parsed.message": "Endpoint not found: /invalid-endpoint",
    },
    ("error_handling.json", "retry-logic"): {"_loopCount:api-call": 2},
    ("calendar_agent.json", "schedule-meeting"): {
        "toolValidation.passed": True,
        "toolValidation.score": 1.0,
        "judgement": MISSING,
    },
    ("calendar_agent.json", "real-calendar-api"): {
        "ValidateTools.passed": True,
        "ValidateTools.actualTools": ["check_user_conflicts", "create_event"],
    },
    ("calendar_agent.json", "retry-logic"): {"result.status": 200},
    ("data_flow.json", "variable-resolution"): {"parsed.parsed[2].name": "Clementine Bauch"},
    ("data_flow.json", "resolution-order"): {"data.parsed.authorization": "hardcoded-key"},
    ("data_flow.json", "context-variables"): {"HttpRequest.url": "{BASE_URL}/v1/users"},
    ("input_formats.json", "api-requests-with-auth"): {
        "authToken": "test-token-123",
        "HttpRequest.status": 200,
    },
    ("input_formats.json", "tool-validation"): {
        "ValidateTools.passed": True,
        "ValidateTools.actualTools": ["search_database", "send_email"],
    },
    ("output_formats.json", "object-format"): {"userData.name": "Leanne Graham", "parseError": MISSING},
    ("output_formats.json", "default-format"): {"fetchUser.status": 200},
    ("output_formats.json", "stream-split-output"): {
        "aiText": "",
        "aiToolCalls[0].name": "get_weather",
        "aiToolCalls[0].args": {"city": "Paris"},
        "streamInfo.format": "sse-openai",
        "streamInfo.totalTools": 1,
    },
    ("http_request.json", "simple-get"): {
        "response.status": 200,
        "response.url": "{BASE_URL}/users/1",
        "response.headers.content-type": "application/json; charset=utf-8",
        "response.duration": lambda v: isinstance(v, (int, float)) and v >= 0,
        "response.body": lambda v: json.loads(v)["name"] == "Leanne Graham",
    },
    ("http_request.json", "get-with-query-parameters"): {
        "response.url": "{BASE_URL}/users?page=2&limit=10&sort=name"
    },
    ("http_request.json", "post-with-json-body"): {
        "createResponse.status": 201,
        "createResponse.body": lambda v: json.loads(v)["email"] == "john@example.com",
    },
    ("json_parser.json", "string-input-format"): {"parsed.parsed.name": "Leanne Graham"},
    ("stream_parser.json", "parse-openai-stream"): {
        "aiMessage": "Hello! How can I help you today?",
        "aiTools": [],
        "streamMeta.format": "sse-openai",
    },
    ("stream_parser.json", "parse-vercel-stream"): {"aiText": "Hello world", "tools[0].name": "search"},
    ("stream_parser.json", "vercel-ai-sdk-stream"): {
        "aiMessage": "The weather in Paris is 22°C and sunny.",
        "tools[0].name": "get_weather",
        "tools[0].args": {"city": "Paris"},
        "streamInfo.format": "sse-vercel",
        "streamInfo.totalTools": 1,
    },
    ("stream_parser.json", "multi-turn-conversation"): {
        "message1": "Hello! How can I help you today?",
        "message2": "You said: Tell me a joke",
    },
    ("stream_parser.json", "test-streaming-agent"): {
        "aiMessage": "I found Alice (alice@example.com) and sent her an email with the details.",
        "tools[0].name": "search_users",
        "tools[0].args": {"query": "Alice"},
        "tools[1].name": "send_email",
        "tools[1].args": {"to": "alice@example.com", "subject": "Hello Alice"},
    },
    ("validate_tools.json", "test-calendar-agent"): {
        "toolCalls[0].name": "check_calendar",
        "toolCalls[1].name": "create_event",
        "toolCalls[1].args.time": "14:00",
        "toolValidation.actualTools": ["check_calendar", "create_event"],
    },
    ("validate_tools.json", "ensure-safe-tool-usage"): {
        "tools[0].name": "delete_records",
        "safety.passed": True,
    },
    ("loop.json", "basic-loop"): {"_loopCount:attempt": 4},
    ("loop.json", "conditional-loop-polling"): {"status.progress": 100, "_loopCount:checkStatus": 1},
    ("loop.json", "retry-until-success"): {"response.status": 200, "_loopCount:attempt": 2},
    ("loop.json", "poll-until-complete"): {"_loopCount:checkJobStatus": 19},
    ("mock_data.json", "mock-api-response"): {"response.body": '{"id": 1, "name": "John"}'},
    ("mock_data.json", "mix-mock-and-real-blocks"): {
        "response.body": lambda v: json.loads(v)["authorization"] == "Bearer test-key",
    },
    ("multi_turn_conversations.json", "full-conversation"): {
        "data1.choices[0].message.content": "You said: I need a laptop",
        "response2.status": 200,
    },
    ("testing_tool_calls.json", "test-safe-customer-service"): {"tools[0].name": "delete_records"},
    ("testing_streaming_responses.json", "test-streaming-response"): {
        "aiMessage": "You said: Explain the benefits of TypeScript in 2-3 sentences",
        "contentCheck.passed": True,
        "qualityCheck": MISSING,
    },
    ("testing_streaming_responses.json", "format-details-openai"): {
        "aiMessage": "Hello",
        "tools[0].name": "search",
    },
    ("testing_streaming_responses.json", "format-details-vercel"): {
        "aiMessage": "Hello world",
        "tools[0].name": "search",
    },
}

# the docs' failing examples: test id -> {assertion path: failure message}
DOCUMENTED_FAILURES: dict[tuple[str, str], dict[str, str | None]] = {
    ("assertions.json", "assertion-failures"): {
        "user.age": "Expected 25 to be > 30",
        "judgement.score": "Expected 0.6 to be > 0.7",
    },
    ("testing_ai_systems.json", "traditional-exact-matching"): {"response.body": None},
}


def at(value: Any, path: str) -> Any:
    """The value at a dotted path with [n] indexes (MISSING when it names nothing)."""
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(value, list) or not -len(value) <= index < len(value):
                return MISSING
            value = value[index]
        elif isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return MISSING
    return value


def load_suite(name: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The suite with each ``"${env.X}"`` context value replaced by ``env[X]`` (no process environment)."""
    suite = docs_text.page_suite(name)
    context = suite.setdefault("context", {})
    for key, value in context.items():
        if isinstance(value, str) and value.startswith("${env.") and value.endswith("}"):
            var = value[len("${env.") : -1]
            if var in env:
                context[key] = env[var]
    return suite


def describe(verdict: Verdict) -> str:
    lines = [f"outcome={verdict.outcome.value}"]
    lines += [f"  {f.check}: {f.message}" for f in verdict.failures]
    if verdict.error:
        lines.append(f"  error: {verdict.error}")
    if verdict.skip_reason:
        lines.append(f"  skipped: {verdict.skip_reason}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def agent_env() -> Iterator[dict[str, str]]:
    """The example agent on loopback; the values the docs examples read from the environment."""
    server, url = chat_agent.start_server(0)
    yield {"BASE_URL": url, "API_KEY": chat_agent.TOKEN}
    server.shutdown()


@pytest.fixture(scope="module")
def results(agent_env: dict[str, str]) -> Callable[[str], SuiteResult]:
    """Run each suite file once (the example server's flaky/job counters are per key) and cache it."""
    cache: dict[str, SuiteResult] = {}

    def get(name: str) -> SuiteResult:
        if name not in cache:
            cache[name] = run_suite(load_suite(name, agent_env))
        return cache[name]

    return get


def test_every_suite_file_is_listed() -> None:
    assert docs_text.page_names() == sorted(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_suite_has_the_listed_tests(name: str, results: Callable[[str], SuiteResult]) -> None:
    assert list(results(name)) == list(EXPECTED[name])


def _cases() -> Iterator[Any]:
    for name, tests in EXPECTED.items():
        for test_id, outcome in tests.items():
            reason = XFAIL.get((name, test_id))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, test_id, outcome, id=f"{name}::{test_id}", marks=marks)


@pytest.mark.parametrize(("name", "test_id", "outcome"), list(_cases()))
def test_docs_example(name: str, test_id: str, outcome: str, results: Callable[[str], SuiteResult]) -> None:
    verdict = results(name)[test_id]
    assert verdict.outcome is Outcome(outcome), describe(verdict)
    if outcome == S:
        assert verdict.skip_reason is not None and JUDGE_SKIP in verdict.skip_reason, describe(verdict)
    if outcome == F:
        assert verdict.failures, describe(verdict)


@pytest.mark.parametrize(("name", "test_id"), list(BUS_CHECKS), ids=[f"{n}::{t}" for n, t in BUS_CHECKS])
def test_databus_values(
    name: str, test_id: str, results: Callable[[str], SuiteResult], agent_env: dict[str, str]
) -> None:
    bus = results(name)[test_id].bus
    for path, expected in BUS_CHECKS[(name, test_id)].items():
        actual = at(bus, path)
        if callable(expected):
            assert actual is not MISSING and expected(actual), f"{path}: {actual!r}"
        elif expected is MISSING:
            assert actual is MISSING, f"{path} should not be written, got {actual!r}"
        else:
            if isinstance(expected, str):
                expected = expected.replace("{BASE_URL}", agent_env["BASE_URL"])
            assert actual == expected, f"{path}: {actual!r} != {expected!r}"


@pytest.mark.parametrize(
    ("name", "test_id"), list(DOCUMENTED_FAILURES), ids=[f"{n}::{t}" for n, t in DOCUMENTED_FAILURES]
)
def test_documented_failures(name: str, test_id: str, results: Callable[[str], SuiteResult]) -> None:
    verdict = results(name)[test_id]
    expected = DOCUMENTED_FAILURES[(name, test_id)]
    assert {f.check for f in verdict.failures} == set(expected), describe(verdict)
    for failure in verdict.failures:
        if expected[failure.check] is not None:
            assert failure.message == expected[failure.check]


def test_docs_suites_through_pytest(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three docs suites collected by the plugin itself, BASE_URL/API_KEY from the environment."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)  # the LLMJudge examples must stay unjudged (skipped)
    server, url = chat_agent.start_server(0)  # its own server: fresh flaky/job counters
    try:
        monkeypatch.setenv("BASE_URL", url)
        monkeypatch.setenv("API_KEY", chat_agent.TOKEN)
        names = ("basic_api_test.json", "quickstart.json", "testing_ai_systems.json")
        pytester.makefile(
            ".json", **{Path(n).stem: json.dumps(docs_text.page_suite(n), indent=2) for n in names}
        )
        pytester.makeini("[pytest]\n")
        result = pytester.runpytest("-p", "no:cacheprovider", "-rfs")
    finally:
        server.shutdown()
    counts = {o: sum(1 for n in names for v in EXPECTED[n].values() if v == o) for o in (P, F, S)}
    assert counts == {P: 6, F: 1, S: 3}
    result.assert_outcomes(passed=counts[P], failed=counts[F], skipped=counts[S])
    result.stdout.fnmatch_lines(["FAILED testing_ai_systems.json::traditional-exact-matching*"])
    result.stdout.fnmatch_lines([f"SKIPPED*quickstart.json*{JUDGE_SKIP}*"])
