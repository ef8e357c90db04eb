"""A failure that does not depend on the LLM judge decides the verdict, whether the judge is
unreachable or not configured (highbar's rule: failed > error > passed)."""

from __future__ import annotations

import json

import pytest

from tests.llm.fake_openai import FakeOpenAI

pytest_plugins = ["pytester"]


def _suite(status_expected: int, judged_check: bool = False) -> str:
    assertions: dict[str, object] = {"d.status": status_expected}
    if judged_check:
        assertions = {"judgement.score": {"gte": 0.7}}
    return json.dumps(
        {
            "tests": [
                {
                    "id": "t",
                    "pipeline": [
                        {
                            "block": "MockData",
                            "config": {"data": {"status": 500, "text": "At 14:00."}},
                            "output": "d",
                        },
                        {
                            "block": "LLMJudge",
                            "input": {"text": "${d.text}", "expected": {"expectedBehavior": "Confirms 2 PM"}},
                            "output": "judgement",
                        },
                        {"block": "MockData", "config": {"data": 1}, "output": "after"},
                    ],
                    "assertions": {**assertions, "after": 1} if not judged_check else assertions,
                }
            ]
        }
    )


@pytest.fixture
def gone() -> str:
    """The base URL of an OpenAI server that has stopped: nothing answers there."""
    server = FakeOpenAI().start()
    url = server.url
    server.stop()
    return url


def _run(pytester: pytest.Pytester, text: str, *args: str) -> pytest.RunResult:
    pytester.makefile(".cfg", setup="[tool:pytest]\n")
    pytester.makefile(".json", suite=text)
    return pytester.runpytest("-p", "no:cacheprovider", "--semantictest-llm-retries=0", *args)


def test_unreachable_judge_deterministic_failure_is_failed(pytester: pytest.Pytester, gone: str) -> None:
    result = _run(pytester, _suite(200), f"--semantictest-llm-base-url={gone}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Expected 500 to equal 200*"])


def test_no_judge_deterministic_failure_is_failed(pytester: pytest.Pytester) -> None:
    _run(pytester, _suite(200)).assert_outcomes(failed=1)


def test_unreachable_judge_with_passing_checks_is_an_error(pytester: pytest.Pytester, gone: str) -> None:
    result = _run(pytester, _suite(500), f"--semantictest-llm-base-url={gone}")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*cannot connect*"])


def test_a_check_on_the_judges_output_is_not_a_failure(pytester: pytest.Pytester, gone: str) -> None:
    _run(pytester, _suite(500, judged_check=True), f"--semantictest-llm-base-url={gone}").assert_outcomes(
        errors=1
    )
