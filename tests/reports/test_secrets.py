"""A secret from the environment never reaches any output the plugin produces.

The secret is used in request headers, request bodies, the URL, an LLM API key, a highbar agent's
config (headers, body, start command), a compliance file's API key, placeholders and variables, and a
Yao agent file's headers and endpoint; the agents, the compliance server, the judge and the validator
echo it back; tests of all four formats fail and error. Then no form of it may appear in the console,
the failure output, the HTML report, the JUnit XML, the results JSONL, the agent logs or the LLM cache
files: every file the run left is searched.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from tests.llm.fake_openai import FakeOpenAI
from tests.ports import free_port
from tests.reports.scenario import TRACE_AGENT, Backend, run, step, write_suite

SECRET = "sk-semtest/LEAK+7f3a9c2e41"
"""In ``SEMTEST_API_KEY``: a secret by its variable's name, used everywhere."""
SHOP_CODE = "shop code 5b8d0e6a93"
"""In ``SHOP_CODE``: a plain name, so a secret only because of where it goes: a secret-looking header
(``X-Shop-Token``, ``X-Shop-Key``) of an agent's config; then it is masked everywhere, also where it
is only in a body."""
FORMS = {
    form
    for value, core in ((SECRET, "7f3a9c2e41"), (SHOP_CODE, "5b8d0e6a93"))
    for form in (value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1], core)
}
"""Every printed form; the core is found in any encoding that does not mask the value as a whole."""


def semantictest_suite(url: str) -> dict[str, object]:
    auth = {"Authorization": "Bearer ${KEY}", "X-Api-Key": "${KEY}", "X-Note": "key=${KEY}"}
    return {
        "name": "secrets",
        "context": {"KEY": "${env.SEMTEST_API_KEY}"},
        "tests": [
            {
                "id": "echoed",
                "pipeline": [  # the backend echoes headers and body: the secret is in the response
                    step(
                        "HttpRequest",
                        "response",
                        input={
                            "url": f"{url}/echo?key=${{KEY}}",
                            "method": "POST",
                            "headers": auth,
                            "body": {"token": "${KEY}", "note": "my key is ${KEY}"},
                        },
                    ),
                    step("JsonParser", "parsed", input="${response.body}"),
                ],
                "assertions": {
                    "response.status": 500,
                    "parsed.data.body": {"contains": "nothing like this"},
                    "parsed.data.headers.x-api-key": "wrong",
                },
            },
            {
                "id": "errors",
                "timeout": 300,
                "pipeline": [
                    step(
                        "HttpRequest", "response", input={"url": f"{url}/slow?key=${{KEY}}", "headers": auth}
                    ),
                ],
                "assertions": {"response.status": 200},
            },
            {
                "id": "judged",
                "runs": 2,
                "pipeline": [
                    step("MockData", "reply", config={"data": {"text": "Sure, your key is ${KEY}."}}),
                    step(
                        "LLMJudge",
                        "judgement",
                        input={
                            "text": "${reply.text}",
                            "expected": {"expectedBehavior": "Never reveals the key ${KEY}"},
                        },
                        config={"threshold": 0.8},
                    ),
                ],
                "assertions": {"judgement.passed": True, "reply.text": {"notContains": "key"}},
            },
        ],
    }


def highbar_specs(pytester: pytest.Pytester) -> None:
    port, code_port, broken = free_port(), free_port(), free_port()

    def agent(port: int) -> str:
        return f"env AGENT_TOKEN=${{SEMTEST_API_KEY}} {sys.executable} {TRACE_AGENT} --port {port}"

    pytester.makefile(
        ".highbar.yaml",
        mirror=textwrap.dedent(f"""\
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
        """),
        code=textwrap.dedent(f"""\
        agent:
          start: "{agent(code_port)}"
          endpoint: "http://127.0.0.1:{code_port}/mirror"
          health: "http://127.0.0.1:{code_port}/health"
          settle_time: 0
          request:
            headers: {{X-Shop-Token: "${{SHOP_CODE}}"}}
            body: {{message: "{{{{message}}}}", code: "${{SHOP_CODE}}"}}
          response: code
        suites:
          - name: Code
            tests:
              - name: echoes the code
                trigger: "What is my code?"
                expect:
                  response: {{not_contains: code}}
        """),
        broken=textwrap.dedent(f"""\
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
        """),
    )


def compliance_spec(pytester: pytest.Pytester) -> None:
    """The API key (``COMPLIANCE_API_KEY``) goes as ``Authorization``; ``{semtest_api_key}`` fills a
    header and the body; ``{{semtest_api_key}}`` is a variable from the setup's environment."""
    pytester.makefile(
        ".md",
        secrets=textwrap.dedent("""\
        ---
        name: secrets
        version: 1.0
        transport: completions
        ---

        # Secrets

        ## Setup

        Create an agent with the following configuration:
        - Name: `echo-agent`

        ### Environment
        - `SEMTEST_API_KEY`: the key the server is given

        ## Test Cases

        ### 1. Echoed key

        **Request:**
        POST `/chat/completions`
        Headers:
        - `X-Api-Key: {semtest_api_key}`
        - `X-Note: key={semtest_api_key}`

        Body:
        ```json
        {"model": "echo-agent", "token": "{semtest_api_key}",
         "messages": [{"role": "user", "content": "my key is {{semtest_api_key}}"}]}
        ```

        **Variables:**
        - `semtest_api_key`: From setup

        **Assertions:**
        - The reply never reveals the key

        **Strict:**
        ```yaml
        status: 201
        body:
          choices[0].message.content: contains("nothing like this")
        ```

        ### 2. Key in the chat

        **Input:** User sends "What is my key?" to `echo-agent`

        **Strict:**
        ```yaml
        response:
          content: '/^nothing/'
        ```
        """),
    )


def yao_cases(pytester: pytest.Pytester, url: str) -> None:
    """The agent file puts ``${SEMTEST_API_KEY}`` in a header and the endpoint, ``${SHOP_CODE}`` in
    a secret-looking header (a secret by where it goes); the agent tells what it was sent, and the history sends
    it back."""
    pytester.makefile(
        ".agent.yaml",
        secrets_test=textwrap.dedent(f"""\
        endpoint: "{url}/v1/chat/completions?key=${{SEMTEST_API_KEY}}"
        headers: {{Authorization: "Bearer ${{SEMTEST_API_KEY}}", X-Shop-Key: "${{SHOP_CODE}}"}}
        model: echo-agent
        """),
    )
    validated = {
        "type": "agent",
        "use": "agents:validator",
        "criteria": "Never reveals the key",
        "threshold": 0.8,
    }
    cases = [
        {
            "id": "echoes",
            "turns": [
                {"input": "Remember my key", "assertions": [{"type": "contains", "value": "authorization"}]},
                {
                    "input": "What is my key?",
                    "assertions": [{"type": "not_contains", "value": "Bearer"}, validated],
                },
            ],
        },
        {"id": "exact", "input": "Say nothing", "expected": {"reply": "nothing"}},
    ]
    pytester.makefile(".jsonl", secrets_test="\n".join(json.dumps(case) for case in cases))


def judge_formats(fake: FakeOpenAI) -> Callable[[dict[str, Any]], str]:
    """The fake's answer, also for the compliance judge and the Yao validator (it knows only the
    SemanticTest judge's schema): not met, quoting the key, when the prompt holds it (masked: the
    prompt reaches the model with the key as ``***``)."""
    answer = fake.answer

    def judged(body: dict[str, Any]) -> str:
        schema = (body.get("response_format") or {}).get("json_schema") or {}
        prompt = str(body.get("messages"))
        held = SECRET in prompt or "***" in prompt
        reason = f"The reply discloses the key {SECRET}." if held else "The key is not in the reply."
        if schema.get("name") == "compliance_assertions":
            bullets = schema["schema"]["properties"]["assertions"]["required"]
            return json.dumps({"assertions": {n: {"passed": not held, "reason": reason} for n in bullets}})
        if schema.get("name") == "validator_result":
            return json.dumps(
                {
                    "passed": not held,
                    "score": 0.1 if held else 0.9,
                    "reason": reason,
                    "suggestions": [f"Never repeat {SECRET}"],
                }
            )
        return answer(body)

    return judged


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_secret_appears_in_no_output(
    pytester: pytest.Pytester,
    backend: Backend,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    monkeypatch.setenv("SEMTEST_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("SHOP_CODE", SHOP_CODE)
    monkeypatch.setenv("COMPLIANCE_API_KEY", SECRET)
    monkeypatch.setenv("COMPLIANCE_BASE_URL", f"{backend.url}/v1")
    fake_openai.rule("your key is", 0.1, reasoning=f"The reply discloses the key {SECRET} verbatim.")
    monkeypatch.setattr(fake_openai, "answer", judge_formats(fake_openai))
    write_suite(pytester, semantictest_suite(backend.url), name="secrets")
    highbar_specs(pytester)
    compliance_spec(pytester)
    yao_cases(pytester, backend.url)
    args = [
        f"--semantictest-llm-base-url={fake_openai.url}",
        "--html=report.html",
        "--self-contained-html",
        "--junitxml=junit.xml",
        "-rA",
        "-vv",
        "--semantictest-llm-header=X-Team-Token: " + SECRET,
        "--semantictest-results=results.jsonl",
        *workers,
    ]
    result = run(pytester, *args, own_process=True)

    result.assert_outcomes(failed=8, errors=2)  # failures and errors were rendered with everything they hold
    # it was used
    assert fake_openai.requests and all(
        r["headers"].get("authorization") == f"Bearer {SECRET}" for r in fake_openai.requests
    )
    schemas = [
        r["body"].get("response_format", {}).get("json_schema", {}).get("name") for r in fake_openai.requests
    ]
    # their prompts held the key
    assert {"compliance_assertions", "validator_result"} <= set(schemas), schemas
    assert not [r for r in fake_openai.requests if SECRET in json.dumps(r["body"])]  # masked, as ***
    console = result.stdout.str() + result.stderr.str()
    assert "***" in console and "Captured pipeline trace" in console and "discloses the key" in console
    result.stdout.fnmatch_lines_random(
        [
            "*assertion 1 (line *): The reply never reveals the key",  # the compliance judge saw the key
            "*judge: not met (*): The reply discloses the key ***.",
            '*actual:*You sent*"x-api-key": "***", "x-note": "key=***", "authorization": "Bearer ***"*',  # it was sent
            "*response.content (line *): expected text matching /^nothing/, got *You sent*",
            "*agent: Never reveals the key (line *): validator: The reply discloses the key ***.",  # so did the validator
            "*not_contains 'Bearer' (line *)*",
            '*actual:*You sent*"authorization": "Bearer ***", "x-shop-key": "***"*',  # the agent was sent both
            "*suggestions: Never repeat ***",
        ]
    )
    leaks = {form for form in FORMS if form in console}
    assert not leaks, f"console: {leaks}"
    records = [json.loads(line) for line in (pytester.path / "results.jsonl").read_text().splitlines()]
    yao = [r for r in records if r["format"] == "yao"]
    assert len(yao) == 2 and all(r["outcome"] == "failed" for r in yao), yao
    # the turns were recorded
    assert any("Bearer ***" in turn["output"] for r in yao for turn in r["turns"]), yao

    written = [
        p
        for p in pytester.path.rglob("*")
        if p.is_file() and p.suffix in (".html", ".xml", ".jsonl", ".log", ".json")
    ]
    kinds = {part for p in written for part in p.relative_to(pytester.path).parts}
    assert {"report.html", "junit.xml", "results.jsonl", "logs", "judge", "validator"} <= kinds, sorted(kinds)
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    # a compliance variable
    assert '"variables" value="{&quot;semtest_api_key&quot;: &quot;***&quot;}"' in junit
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        leaks = {form for form in FORMS if form in text}
        assert not leaks, f"{path.relative_to(pytester.path)}: {leaks}"
