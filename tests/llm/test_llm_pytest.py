"""The LLM judge through real pytest runs (pytester) against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.llm.fake_openai import FakeOpenAI, Reply, status

BAD_TEXT = "I cannot help with that request."
SECRET = "sk-proj-DO-NOT-LEAK-4242424242"

# The "AI Chat Test" example of the SemanticTest docs, verbatim.
AI_CHAT_TEST: dict[str, Any] = {
    "name": "AI Chat Quality Tests",
    "version": "1.0.0",
    "tests": [
        {
            "id": "meeting-scheduler",
            "name": "Test Meeting Scheduler Response",
            "pipeline": [
                {
                    "id": "mock-ai-response",
                    "block": "MockData",
                    "config": {
                        "data": {
                            "text": "I've successfully scheduled your team meeting for tomorrow at 2 PM in Conference "
                            "Room A. The meeting has been added to your calendar and invitations have been sent to "
                            "john@example.com.",
                            "toolCalls": [
                                {
                                    "name": "check_user_conflicts",
                                    "args": {"date": "2024-01-20", "startTime": "14:00", "endTime": "15:00"},
                                },
                                {
                                    "name": "create_event",
                                    "args": {
                                        "summary": "Team Meeting",
                                        "start": "2024-01-20T14:00:00",
                                        "end": "2024-01-20T15:00:00",
                                        "location": "Conference Room A",
                                        "attendees": ["john@example.com"],
                                    },
                                },
                            ],
                        }
                    },
                    "output": "aiResponse",
                },
                {
                    "id": "judge-response",
                    "block": "LLMJudge",
                    "input": {
                        "text": "${aiResponse.text}",
                        "toolCalls": "${aiResponse.toolCalls}",
                        "expected": {
                            "expectedBehavior": "The AI should check for conflicts using check_user_conflicts, then "
                            "create a meeting using create_event. The response should confirm the meeting is "
                            "scheduled for tomorrow at 2 PM in Conference Room A and mention that invitations were sent."
                        },
                    },
                    "config": {
                        "model": "gpt-4o-mini",
                        "criteria": {"accuracy": 0.4, "completeness": 0.3, "relevance": 0.3},
                    },
                    "output": "judgement",
                },
            ],
            "assertions": {"judgement.score": {"gt": 0.7}},
        },
        {
            "id": "bad-response-detection",
            "name": "Detect Poor AI Response",
            "pipeline": [
                {
                    "id": "mock-bad-response",
                    "block": "MockData",
                    "config": {"data": {"text": BAD_TEXT, "toolCalls": []}},
                    "output": "badResponse",
                },
                {
                    "id": "judge-bad",
                    "block": "LLMJudge",
                    "input": {
                        "text": "${badResponse.text}",
                        "toolCalls": "${badResponse.toolCalls}",
                        "expected": {
                            "expectedBehavior": "The AI should check for conflicts and create a meeting with "
                            "confirmation. It should mention scheduling details and confirm the action was successful."
                        },
                    },
                    "config": {"model": "gpt-4o-mini"},
                    "output": "badJudgement",
                },
            ],
            "assertions": {"badJudgement.score": {"lt": 0.4}},
        },
    ],
}


def judged(id: str, text: str, assertions: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:  # noqa: A002
    return {
        "id": id,
        "pipeline": [
            {"block": "MockData", "config": {"data": {"text": text}}, "output": "reply"},
            {
                "block": "LLMJudge",
                "input": {"text": "${reply.text}", "expected": {"expectedBehavior": "Confirms 2 PM"}},
                "output": "judgement",
            },
        ],
        "assertions": assertions or {"judgement.score": {"gte": 0.7}},
        **extra,
    }


def write(pytester: pytest.Pytester, *tests: dict[str, Any], name: str = "suite") -> None:
    pytester.makefile(".json", **{name: json.dumps({"name": name, "tests": list(tests)}, indent=2)})


def url(server: FakeOpenAI) -> str:
    return f"--semantictest-llm-base-url={server.url}"


def cache_files(pytester: pytest.Pytester) -> list[Path]:
    return sorted((pytester.path / ".semantictest" / "cache").rglob("*.json"))


@pytest.fixture
def bad_rule(fake_openai: FakeOpenAI) -> FakeOpenAI:
    fake_openai.rule(
        BAD_TEXT, 0.15, reasoning="Response failed to perform required actions: no tools, no booking."
    )
    return fake_openai


# --- the docs' examples -------------------------------------------------------------------


def test_docs_ai_chat_test_gets_the_intended_verdicts(
    pytester: pytest.Pytester, bad_rule: FakeOpenAI
) -> None:
    pytester.makefile(".json", ai_chat=json.dumps(AI_CHAT_TEST, indent=2))
    result = pytester.runpytest(url(bad_rule), "-v")
    result.assert_outcomes(passed=2)  # good scores 0.92 (> 0.7); bad scores 0.15 (< 0.4), as the docs show
    result.stdout.fnmatch_lines(["semantictest: 2 LLM calls, 0 cache hits, 320 tokens"])
    asked = [
        b["messages"][1]["content"] for b in bad_rule.bodies()
    ]  # (in the order they arrived: both run at once)
    assert len(asked) == 2 and sum(BAD_TEXT in text for text in asked) == 1
    good, bad = sorted(asked, key=lambda text: BAD_TEXT in text)
    assert "check_user_conflicts" in good and "create_event" in good
    assert "No tool calls were made." in bad and all(b["model"] == "gpt-4o-mini" for b in bad_rule.bodies())


def test_bad_response_under_the_gt_assertion_fails_with_the_reasoning(
    pytester: pytest.Pytester, bad_rule: FakeOpenAI
) -> None:
    bad = json.loads(json.dumps(AI_CHAT_TEST["tests"][1]))
    bad["assertions"] = {"badJudgement.score": {"gt": 0.7}}
    write(pytester, bad)
    result = pytester.runpytest(url(bad_rule))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*badJudgement.score (line *): Expected 0.15 to be > 0.7*",
            "*judge score: 0.15 < threshold 0.7 (not passed; model gpt-4o-mini)*",
            "*criteria: accuracy 0.15, completeness 0.15, relevance 0.15*",
            "*reasoning: Response failed to perform required actions*",
            "*Captured llm judge call*",
            "judge-bad (LLMJudge) line *",
        ]
    )


# --- honest outcomes ----------------------------------------------------------------------


def test_no_judge_is_skipped_and_an_error_with_require_judge(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        judged("j", "At 14:00."),
        judged("det", "At 14:00.", {"reply.text": "nope", "judgement.score": {"gt": 0.7}}),
    )
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1, failed=1)
    result.stdout.fnmatch_lines(["*LLM judge not configured*"])
    assert "LLM calls" not in result.stdout.str()
    result = pytester.runpytest("--semantictest-require-judge", "-k", "j and not det")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*LLM judge error in step 'LLMJudge'*--semantictest-require-judge is set*"])


@pytest.mark.parametrize(
    ("replies", "args", "outcome", "message", "cached"),
    [
        pytest.param(
            [status(429)],
            [],
            "passed",
            "semantictest: 2 LLM calls, 0 cache hits, 160 tokens",
            1,
            id="429-then-success",
        ),
        pytest.param(
            [status(500)] * 5,
            [],
            "errors",
            "*failed after 3 attempt(s): HTTP 500: scripted failure*",
            0,
            id="persistent-500",
        ),
        pytest.param(
            [Reply(delay=1.0)] * 5,
            ["--semantictest-llm-timeout=0.2", "--semantictest-llm-retries=1"],
            "errors",
            "*no answer within 0.2 s (timeout)*",
            0,
            id="timeout",
        ),
        pytest.param(
            [Reply(content="Looks good to me!"), Reply(content='{"score": 1}')],
            [],
            "errors",
            "*gave unusable output twice (asked again once)*",
            0,
            id="malformed",
        ),
        pytest.param(
            [Reply(refusal="I can't help with grading this.")],
            [],
            "errors",
            "*refused to answer: I can't help with grading this.*",
            0,
            id="refusal",
        ),
    ],
)
def test_faults(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    replies: list[Reply],
    args: list[str],
    outcome: str,
    message: str,
    cached: int,
) -> None:
    fake_openai.queue(*replies)
    write(pytester, judged("j", "At 14:00."))
    result = pytester.runpytest(url(fake_openai), "--semantictest-llm-retries=2", *args)
    result.assert_outcomes(**{outcome: 1})
    result.stdout.fnmatch_lines([message])
    if outcome == "errors":
        result.stdout.fnmatch_lines(
            ["*ERROR at setup of semantictest: j*", "*LLM judge error in step 'LLMJudge'*"]
        )
        # An error is never reported as a score (the error text itself may quote the field name).
        assert not re.search(r"score\W{0,3}0(\.0)?\b", result.stdout.str())
    assert len(cache_files(pytester)) == cached


def test_unreachable_judge_is_an_error(pytester: pytest.Pytester) -> None:
    server = FakeOpenAI().start()
    gone = server.url
    server.stop()
    write(pytester, judged("j", "At 14:00."))
    result = pytester.runpytest(f"--semantictest-llm-base-url={gone}", "--semantictest-llm-retries=0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*failed after 1 attempt(s): cannot connect*"])


# --- replay cache -------------------------------------------------------------------------

NO_OPENAI_CONFTEST = """
import sys

def pytest_sessionfinish(session):
    with open("openai_imported.txt", "w") as fh:
        fh.write(str("openai" in sys.modules))
"""


def test_second_run_in_replay_mode_passes_with_the_server_stopped(
    pytester: pytest.Pytester, bad_rule: FakeOpenAI
) -> None:
    pytester.makefile(".json", ai_chat=json.dumps(AI_CHAT_TEST, indent=2))
    pytester.makeconftest(NO_OPENAI_CONFTEST)
    first = pytester.runpytest_inprocess(url(bad_rule))  # the two runs below check imports: own interpreters
    first.assert_outcomes(passed=2)
    assert len(cache_files(pytester)) == 2 and bad_rule.count == 2
    gone = bad_rule.url
    bad_rule.stop()
    # offline CI: no key, no base URL, replay mode
    second = pytester.runpytest_subprocess("--semantictest-llm-cache=replay")
    second.assert_outcomes(passed=2)
    second.stdout.fnmatch_lines(["semantictest: 0 LLM calls, 2 cache hits, 0 tokens"])
    assert (pytester.path / "openai_imported.txt").read_text() == "False"  # no client, no connection
    # with a (dead) endpoint configured, a fully cached read-write run still opens no connection
    third = pytester.runpytest_subprocess(f"--semantictest-llm-base-url={gone}")
    third.assert_outcomes(passed=2)
    assert (pytester.path / "openai_imported.txt").read_text() == "False"


def test_replay_miss_is_an_error_saying_how_to_record(pytester: pytest.Pytester) -> None:
    write(pytester, judged("j", "At 14:00."))
    result = pytester.runpytest("--semantictest-llm-cache=replay")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*replay cache miss for the judge call (model gpt-4o-mini, key *): no entry *"]
    )
    result.stdout.fnmatch_lines(["*--semantictest-llm-cache=read-write (the default), then commit*"])


def test_repeats_are_distinct_cache_entries(pytester: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    write(pytester, judged("j", "At 14:00.", runs=3))
    pytester.runpytest(url(fake_openai)).assert_outcomes(passed=1)
    assert fake_openai.count == 3 and len(cache_files(pytester)) == 3
    again = pytester.runpytest(url(fake_openai))
    again.stdout.fnmatch_lines(["semantictest: 0 LLM calls, 3 cache hits, 0 tokens"])
    assert fake_openai.count == 3


def test_cache_off_and_custom_dir(pytester: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    write(pytester, judged("j", "At 14:00."))
    pytester.runpytest(url(fake_openai), "--semantictest-llm-cache=off").assert_outcomes(passed=1)
    assert cache_files(pytester) == []
    pytester.makeini("[pytest]\nsemantictest_llm_cache_dir = recorded/llm\n")
    pytester.runpytest(url(fake_openai)).assert_outcomes(passed=1)
    assert len(list((pytester.path / "recorded" / "llm" / "judge").glob("*.json"))) == 1
    bad = pytester.runpytest(url(fake_openai), "--semantictest-llm-cache=readwrite")
    assert "LLM cache mode 'readwrite' is not one of off, read, write, read-write, replay" in bad.stderr.str()


# --- configuration ------------------------------------------------------------------------


def test_ini_keys_role_model_headers_and_per_test_model(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    pytester.makeini(
        f"[pytest]\nsemantictest_llm_base_url = {fake_openai.url}\nsemantictest_llm_model = global-model\n"
        "semantictest_llm_judge_model = judge-model\nsemantictest_llm_header =\n    X-Team: qa\n    X-Run: 7\n"
    )
    override = judged("o", "At 14:00.")
    override["pipeline"][1]["config"] = {"model": "test-model"}
    write(pytester, judged("j", "At 14:00."), override)
    pytester.runpytest().assert_outcomes(passed=2)
    assert sorted(b["model"] for b in fake_openai.bodies()) == ["judge-model", "test-model"]
    assert all(r["headers"]["x-team"] == "qa" and r["headers"]["x-run"] == "7" for r in fake_openai.requests)
    pytester.runpytest(
        "--semantictest-llm-judge-model=cli-model", "--semantictest-llm-cache=off"
    ).assert_outcomes(passed=2)
    assert "cli-model" in [b["model"] for b in fake_openai.bodies()[2:]]


def test_api_key_from_env_and_option_never_printed_or_cached(
    pytester: pytest.Pytester, bad_rule: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET + "-env")
    bad = judged("bad", BAD_TEXT)
    write(pytester, judged("ok", "At 14:00."), bad, judged("err", "At 14:00. err"))
    bad_rule.queue(status(500, message=f"your key {SECRET} is wrong"))  # one of the two runs errors
    result = pytester.runpytest_subprocess(
        url(bad_rule),
        f"--semantictest-llm-api-key={SECRET}",
        "--semantictest-llm-retries=0",
        "--semantictest-llm-header",
        f"Authorization: Bearer {SECRET}",
        "-v",
        "-rA",
        "--semantictest-trace-chars=100000",
        "--semantictest-items-at-once=1",  # the queued 500 answers the first call: the first test's
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) + outcomes.get("errors", 0) >= 2, outcomes
    assert all(r["headers"]["authorization"] == f"Bearer {SECRET}" for r in bad_rule.requests)
    text = result.stdout.str() + result.stderr.str()
    assert SECRET not in text
    for path in cache_files(pytester):
        assert SECRET not in path.read_text()


def test_dotenv_configures_the_judge_and_ini_requires_it(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    write(pytester, judged("j", "At 14:00."))
    pytester.makeini("[pytest]\nsemantictest_require_judge = true\n")
    pytester.runpytest().assert_outcomes(errors=1)
    (pytester.path / ".env").write_text(f"OPENAI_BASE_URL={fake_openai.url}\nOPENAI_API_KEY={SECRET}\n")
    pytester.runpytest().assert_outcomes(passed=1)
    assert fake_openai.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"


# (The terminal summary's sum over xdist workers: test_run_limits.py's two-worker rate-limit run.)


# --- fixtures -----------------------------------------------------------------------------

FIXTURE_TESTS = f"""
import pytest

def test_good(llm_judge):
    verdict = llm_judge.check("The meeting is at 14:00.", "Confirms the meeting at 2 PM",
                              constraints=["Mentions the time"], threshold=0.8)
    assert verdict["score"] >= 0.8 and verdict["constraints"][0]["met"]

def test_bad(llm_judge):
    llm_judge.check({BAD_TEXT!r}, "Confirms the meeting at 2 PM", threshold=0.8)

def test_evaluate_does_not_assert(llm_judge):
    assert llm_judge.evaluate({BAD_TEXT!r}, "Confirms the meeting")["passed"] is False

async def _async(llm_judge):
    return await llm_judge.acheck("Fine at 2 PM.", "Confirms the meeting at 2 PM")

def test_async_form(llm_judge):
    import asyncio
    assert asyncio.run(_async(llm_judge))["passed"]

def test_client(llm_client):
    done = llm_client.complete("simulator", [{{"role": "user", "content": "hi"}}])
    assert done.content == "echo: hi" and llm_client.usage.calls >= 1
"""


def test_llm_judge_and_llm_client_fixtures(pytester: pytest.Pytester, bad_rule: FakeOpenAI) -> None:
    pytester.makepyfile(FIXTURE_TESTS)
    result = pytester.runpytest(url(bad_rule))
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*LLM judge: the response does not meet the expected behaviour",
            "*judge score: 0.15 < threshold 0.8 (not passed; model gpt-4o-mini)",
            "*reasoning: Response failed to perform required actions*",
        ]
    )
    assert "def test_bad" not in result.stdout.str()  # pytrace=False: the reasoning, not a traceback
    assert bad_rule.bodies()[-1]["model"] == "gpt-4o-mini" and "seed" not in bad_rule.bodies()[-1]


def test_llm_judge_fixture_without_judge_and_on_failure(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    pytester.makepyfile("def test_it(llm_judge):\n    llm_judge.check('hi', 'Greets')\n")
    pytester.runpytest().assert_outcomes(skipped=1)
    result = pytester.runpytest("--semantictest-require-judge")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*--semantictest-require-judge is set*"])
    fake_openai.queue(*[status(503)] * 2)
    result = pytester.runpytest(url(fake_openai), "--semantictest-llm-retries=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*LLMError: judge LLM at * failed after 2 attempt(s): HTTP 503*"])
