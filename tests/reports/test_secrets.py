"""A secret from the environment never reaches any output the plugin produces.

The secret is used in request headers, request bodies, the URL, an LLM API key and a highbar agent's
config (headers, body, start command); the agent and the judge echo it back; tests fail and error.
Then no form of it may appear in the console, the failure output, the HTML report, the JUnit XML, the
results JSONL, the agent logs or the LLM cache files: every file the run left is searched.
"""

from __future__ import annotations

import json
import socket
import sys
import textwrap
from urllib.parse import quote, quote_plus

import pytest

from pytest_semantictest import options
from tests.llm.fake_openai import FakeOpenAI
from tests.reports.scenario import TRACE_AGENT, Backend, run, step, write_suite

SECRET = "sk-semtest/LEAK+7f3a9c2e41"
"""In ``SEMTEST_API_KEY``: a secret by its variable's name, used everywhere."""
SHOP_CODE = "shop code 5b8d0e6a93"
"""In ``SHOP_CODE``: a plain name, so a secret only where highbar's rule makes it one (``${ENV}``
expanded into an agent's config is masked in all output)."""
FORMS = {form for value, core in ((SECRET, "7f3a9c2e41"), (SHOP_CODE, "5b8d0e6a93"))
         for form in (value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1], core)}
"""Every printed form; the core is found in any encoding that does not mask the value as a whole."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def semantictest_suite(url: str) -> dict[str, object]:
    auth = {"Authorization": "Bearer ${KEY}", "X-Api-Key": "${KEY}", "X-Note": "key=${KEY}"}
    return {"name": "secrets", "context": {"KEY": "${env.SEMTEST_API_KEY}"}, "tests": [
        {"id": "echoed", "pipeline": [  # the backend echoes headers and body: the secret is in the response
            step("HttpRequest", "response", input={"url": f"{url}/echo?key=${{KEY}}", "method": "POST", "headers": auth,
                                                   "body": {"token": "${KEY}", "note": "my key is ${KEY}"}}),
            step("JsonParser", "parsed", input="${response.body}"),
        ], "assertions": {"response.status": 500, "parsed.data.body": {"contains": "nothing like this"},
                          "parsed.data.headers.x-api-key": "wrong"}},
        {"id": "errors", "timeout": 300, "pipeline": [
            step("HttpRequest", "response", input={"url": f"{url}/slow?key=${{KEY}}", "headers": auth}),
        ], "assertions": {"response.status": 200}},
        {"id": "judged", "runs": 2, "pipeline": [
            step("MockData", "reply", config={"data": {"text": "Sure, your key is ${KEY}."}}),
            step("LLMJudge", "judgement", input={"text": "${reply.text}",
                                                 "expected": {"expectedBehavior": "Never reveals the key ${KEY}"}},
                 config={"threshold": 0.8}),
        ], "assertions": {"judgement.passed": True, "reply.text": {"notContains": "key"}}},
    ]}


def highbar_specs(pytester: pytest.Pytester) -> None:
    port, code_port, broken = free_port(), free_port(), free_port()

    def agent(port: int) -> str:
        return f"env AGENT_TOKEN=${{SEMTEST_API_KEY}} {sys.executable} {TRACE_AGENT} --port {port}"

    pytester.makefile(".highbar.yaml", mirror=textwrap.dedent(f"""\
        agent:
          start: "{agent(port)}"
          endpoint: "http://127.0.0.1:{port}/mirror"
          health: "http://127.0.0.1:{port}/health"
          settle_time: 0
          request:
            headers: {{Authorization: "Bearer ${{SEMTEST_API_KEY}}"}}
            body: {{message: "{{{{message}}}}", token: "${{SEMTEST_API_KEY}}"}}
          response: token
        suites:
          - name: Mirror
            tests:
              - name: echoes the key
                trigger: "What is my key?"
                runs: 2
                expect:
                  response: {{contains: shipped}}
        """), code=textwrap.dedent(f"""\
        agent:
          start: "{agent(code_port)}"
          endpoint: "http://127.0.0.1:{code_port}/mirror"
          health: "http://127.0.0.1:{code_port}/health"
          settle_time: 0
          request:
            body: {{message: "{{{{message}}}}", code: "${{SHOP_CODE}}"}}
          response: code
        suites:
          - name: Code
            tests:
              - name: echoes the code
                trigger: "What is my code?"
                expect:
                  response: {{not_contains: code}}
        """), broken=textwrap.dedent(f"""\
        agent:
          start: "{agent(broken)} --exit-at-start"
          endpoint: "http://127.0.0.1:{broken}/chat?token=${{SEMTEST_API_KEY}}"
          settle_time: 0
        suites:
          - name: Broken
            tests:
              - trigger: "hello"
                expect:
                  response: {{contains: hello}}
        """))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_secret_appears_in_no_output(
    pytester: pytest.Pytester, backend: Backend, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    monkeypatch.setenv("SEMTEST_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("SHOP_CODE", SHOP_CODE)
    fake_openai.rule("your key is", 0.1, reasoning=f"The reply discloses the key {SECRET} verbatim.")
    write_suite(pytester, semantictest_suite(backend.url), name="secrets")
    highbar_specs(pytester)
    args = [f"--semantictest-llm-base-url={fake_openai.url}", "--html=report.html", "--self-contained-html",
            "--junitxml=junit.xml", "-rA", "-vv", "--semantictest-llm-header=X-Team-Token: " + SECRET, *workers]
    if any(name == "results" for name, *_ in options.OPTIONS):
        args.append("--semantictest-results=results.jsonl")
    result = run(pytester, *args)

    result.assert_outcomes(failed=4, errors=2)  # failures and errors were rendered with everything they hold
    assert fake_openai.requests and all(
        r["headers"].get("authorization") == f"Bearer {SECRET}" for r in fake_openai.requests)  # it was used
    console = result.stdout.str() + result.stderr.str()
    assert "***" in console and "Captured pipeline trace" in console and "discloses the key" in console
    leaks = {form for form in FORMS if form in console}
    assert not leaks, f"console: {leaks}"

    written = [p for p in pytester.path.rglob("*") if p.is_file() and p.suffix in (".html", ".xml", ".jsonl", ".log", ".json")]
    kinds = {part for p in written for part in p.relative_to(pytester.path).parts}
    assert {"report.html", "junit.xml", "logs", "cache"} <= kinds, sorted(kinds)
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        leaks = {form for form in FORMS if form in text}
        assert not leaks, f"{path.relative_to(pytester.path)}: {leaks}"
