"""Natural-language assertions judged through a fake OpenAI-compatible server (real HTTP, no key)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from pytest_semantictest.checks.judged import SCHEMA_NAME, parse_verdicts, verdict_schema
from tests.compliance.conftest import chat_case, compliance_server, doc
from tests.llm.fake_openai import FakeOpenAI, Reply, status

pytest_plugins = ["pytester"]

ASSERTIONS = "**Assertions:**\n- The reply echoes the user\n- The reply is in French\n- The reply is short\n"


def verdicts(*passed: bool) -> Reply:
    return Reply(
        content=json.dumps(
            {
                "assertions": {
                    str(n): {"passed": ok, "reason": "it does" if ok else "the reply is in English"}
                    for n, ok in enumerate(passed, 1)
                }
            }
        )
    )


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def run(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, *args: str
) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-rs", f"--semantictest-compliance-base-url={server.url}", *args
    )


def test_one_call_per_case_a_verdict_per_bullet_and_the_cache(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, fake: FakeOpenAI
) -> None:
    pytester.makefile(".md", judged=doc(chat_case("1. Judged", extra=ASSERTIONS)))
    fake.queue(verdicts(True, False, True))
    result = run(pytester, server, f"--semantictest-llm-base-url={fake.url}")
    result.assert_outcomes(failed=1)
    assert fake.count == 1
    result.stdout.fnmatch_lines(
        [
            "assertion 2 (line 26): The reply is in French",
            "  judge: not met (*): the reply is in English",
            "  held: 1. The reply echoes the user; 3. The reply is short",
            "semantictest: 1 LLM calls, 0 cache hits, * tokens",
        ]
    )
    body = fake.bodies()[0]
    prompt = body["messages"][1]["content"]
    assert body["response_format"]["json_schema"]["name"] == SCHEMA_NAME and body["temperature"] == 0
    assert "1. The reply echoes the user\n2. The reply is in French\n3. The reply is short" in prompt
    assert (
        "Echo: Hello" in prompt
        and "POST /chat/completions\n" in prompt
        and "127.0.0.1" not in prompt
        and "status: 200" in prompt
    )
    again = run(pytester, server, f"--semantictest-llm-base-url={fake.url}")  # the cached verdict
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["semantictest: 0 LLM calls, 1 cache hits, 0 tokens"])
    assert fake.count == 1


def test_all_bullets_hold(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, fake: FakeOpenAI
) -> None:
    pytester.makefile(".md", judged=doc(chat_case("1. Judged", extra=ASSERTIONS)))
    fake.queue(verdicts(True, True, True))
    run(pytester, server, f"--semantictest-llm-base-url={fake.url}").assert_outcomes(passed=1)


def test_without_a_judge_the_bullets_are_not_evaluated_but_strict_checks_decide(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer
) -> None:
    cases = chat_case("1. Passes", extra=ASSERTIONS) + chat_case(
        "2. Fails", strict="status: 201", extra=ASSERTIONS
    )
    pytester.makefile(".md", judged=doc(cases))
    result = run(pytester, server)
    result.assert_outcomes(skipped=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*1 strict check(s) passed; 3 natural-language assertion(s) not evaluated: LLM judge not configured"]
    )
    required = run(pytester, server, "--semantictest-require-judge", "-k", "Passes")
    required.assert_outcomes(errors=1)
    required.stdout.fnmatch_lines(["*LLM judge not configured and --semantictest-require-judge is set*"])


@pytest.mark.parametrize(
    ("replies", "message"),
    [
        pytest.param(
            [status(500)] * 3,
            "*LLM judge error (assertions, line 25): judge LLM at * failed after 2 attempt(s): HTTP 500*",
            id="server-error",
        ),
        pytest.param(
            [Reply(content='{"assertions": {"1": {"passed": true, "reason": "x"}}}')] * 2,
            "*gave unusable output twice*assertions must answer exactly ?'1', '2', '3'?, got ?'1'?",
            id="wrong-keys",
        ),
        pytest.param(
            [Reply(refusal="I won't grade this.")], "*refused to answer: I won't grade this.*", id="refusal"
        ),
    ],
)
def test_a_judge_that_cannot_answer_is_an_error(
    pytester: pytest.Pytester,
    server: compliance_server.ComplianceServer,
    fake: FakeOpenAI,
    replies: list[Reply],
    message: str,
) -> None:
    pytester.makefile(".md", judged=doc(chat_case("1. Judged", extra=ASSERTIONS)))
    fake.queue(*replies)
    result = run(pytester, server, f"--semantictest-llm-base-url={fake.url}", "--semantictest-llm-retries=1")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])
    assert not list((pytester.path / ".semantictest" / "cache").rglob("*.json"))  # errors are never cached


def test_secrets_do_not_reach_the_judge(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, fake: FakeOpenAI
) -> None:
    case = (
        "### 1. Me\n\n**Request:**\nGET `/echo-headers`\nAuthorization: Bearer sk-do-not-send-4242\n\n"
        "**Assertions:**\n- The headers are echoed\n"
    )
    pytester.makefile(".md", judged=doc(case))
    fake.queue(verdicts(True))
    run(pytester, server, f"--semantictest-llm-base-url={fake.url}").assert_outcomes(passed=1)
    prompt = fake.bodies()[0]["messages"][1]["content"]
    assert "authorization: ***" in prompt.lower() and "sk-do-not-send-4242" not in prompt.replace(
        '"authorization": "Bearer sk-do-not-send-4242"', ""
    )


def test_the_verdict_schema_and_its_validation() -> None:
    schema = verdict_schema(2)["schema"]
    assert schema["properties"]["assertions"]["required"] == ["1", "2"]
    assert (
        parse_verdicts(
            '{"assertions": {"1": {"passed": true, "reason": ""}, "2": {"passed": false, "reason": "no"}}}', 2
        )
        .assertions["2"]
        .passed
        is False
    )
    with pytest.raises(ValueError, match="not a valid answer"):
        parse_verdicts('{"assertions": {"1": {"passed": "maybe"}}}', 1)


def test_an_assertion_edited_to_hold_in_the_cache_is_an_error(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, fake: FakeOpenAI
) -> None:
    """A committed verdict edited from ``false`` to ``true`` is never replayed: the entry's digest covers
    the answer, so the test is an ERROR naming the file, not a pass."""
    pytester.makefile(".md", judged=doc(chat_case("1. Judged", extra=ASSERTIONS)))
    fake.queue(verdicts(True, False, True))
    run(pytester, server, f"--semantictest-llm-base-url={fake.url}").assert_outcomes(failed=1)
    (path,) = (pytester.path / ".semantictest" / "cache").rglob("*.json")
    entry = json.loads(path.read_text(encoding="utf-8"))
    entry["response"]["content"] = entry["response"]["content"].replace('"passed": false', '"passed": true')
    assert '"passed": false' not in entry["response"]["content"]
    path.write_text(json.dumps(entry, indent=2), encoding="utf-8")
    result = run(pytester, server, "--semantictest-llm-cache=replay")
    result.assert_outcomes(errors=1)
    shown = path.relative_to(pytester.path)  # a path under the rootdir is shown as node ids are
    result.stdout.fnmatch_lines(
        [f"*replay cache entry {shown} cannot be trusted: its digest does not match*"]
    )


def test_sampled_assertions_take_the_majority_and_a_split_is_unstable(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, fake: FakeOpenAI
) -> None:
    """Three samples: the second assertion holds in two of them (held, by the majority), the third in
    one (not held); the samples split, so the check is listed as unstable; each sample is a call."""
    pytester.makefile(".md", judged=doc(chat_case("1. Judged", extra=ASSERTIONS)))
    fake.queue(verdicts(True, True, False), verdicts(True, False, True), verdicts(True, True, False))
    result = run(
        pytester, server, f"--semantictest-llm-base-url={fake.url}", "--semantictest-judge-samples=3"
    )
    result.assert_outcomes(failed=1)
    assert fake.count == 3
    out = result.stdout.str()
    assert "assertion 3" in out and "assertion 2" not in out, out
    assert "unstable judgement: judged.md::1. Judged: natural-language assertions (line " in out, out
    assert "0/3 passed, UNSTABLE; 3 live, 0 replayed" in out, out
