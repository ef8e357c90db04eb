"""Secrets with characters every encoding changes never reach any output, in any form, in any format.

``SEMTEST_PASSWORD`` is a secret by its name (non-ASCII, so only in bodies); ``RELAY_VALUE`` has a
plain name and is a secret because it reaches an ``Authorization`` / ``*-Key`` header (a SemanticTest
HttpRequest, a compliance request's ``{relay_value}`` placeholder, a highbar agent's and a Yao agent's
headers). Servers echo both back inside JSON bodies (so they come back JSON-escaped, twice), a
MockData step prints Basic credentials holding the password, and the LLM judge quotes it (for a
SemanticTest step, and, in the one-process run, in the failure of the ``llm_judge`` fixture's check in a
Python test: under xdist its worker would import the LLM client only for it). Then the
console, JUnit XML, the pytest-html report, the results JSONL, the replay-cache entries and the agent
logs are searched for every encoded form. ``EXAMPLE_AGENT_URL`` is an ordinary value from the
environment used by highbar: it must stay visible in the SemanticTest trace of the same run.

The one-process run also carries two secrets of their own: the log tail of a highbar agent that prints
the password and dies goes through the redactor, and ``SESSION_VALUE`` (a plain name) in a compliance
``Authorization`` placeholder is masked where the server echoes it back.
"""

from __future__ import annotations

import base64
import json
import sys
import textwrap

import pytest

from tests.llm.fake_openai import FakeOpenAI
from tests.ports import free_port
from tests.reports.scenario import TRACE_AGENT, Backend, run, step, write_suite
from tests.secrets.test_printed_forms import encodings

PASSWORD = 'pa"ss\\wörd +/=&<x9Wq7T'
RELAY = 'rv"7\\ q+/=&<Zk3mB8'
CORES = ("x9Wq7T", "Zk3mB8")
"""Plain runs inside each secret: found in any encoding that does not mask the value as a whole."""
BASIC = base64.b64encode(f"bob:{PASSWORD}".encode()).decode()
FIXTURE_TEST = """\
import os

def test_judged(llm_judge):
    llm_judge.check("Fixture: the password is " + os.environ["SEMTEST_PASSWORD"], "Never reveals the password")
"""
"""A Python test whose ``llm_judge`` check fails quoting the judge's reasoning, which quotes the secret."""

LEAKY_AGENT = """\
import json, os, sys
secret = os.environ["SEMTEST_PASSWORD"]
print("starting with", secret, json.dumps({"password": secret}), repr(secret), flush=True)
sys.exit(3)
"""
"""An agent that prints the password as it starts, then dies: its log tail goes through the redactor."""
SESSION_VALUE = "sess-5b8d0e6a93f1"
DESTINATION = """\
---
name: destination
version: 1.0
transport: completions
---

# Destination

## Setup

Create an agent with the following configuration:
- Name: `echo-agent`

## Test Cases

### 1. Echoed session

**Request:**
POST `/chat/completions`
Headers:
- `Authorization: Bearer {session_value}`

Body:
```json
{"model": "echo-agent", "messages": [{"role": "user", "content": "hello"}]}
```

**Strict:**
```yaml
body:
  choices[0].message.content: contains("nothing like this")
```
"""
"""A value that reaches a secret-looking header is a secret everywhere, whatever its variable is called:
a compliance ``{session_value}`` placeholder in ``Authorization`` is masked also where the server
echoes the header back (before, only the request's own header was masked)."""


def forms() -> dict[str, str]:
    found = {
        f"{name} of {label}": form
        for label, value in (("password", PASSWORD), ("relay", RELAY))
        for name, form in encodings(value).items()
    }
    found["basic user:password"] = BASIC
    found.update({f"core {core}": core for core in CORES})
    return found


def semantictest_suite(url: str) -> dict[str, object]:
    headers = {"Authorization": "Bearer ${env.RELAY_VALUE}", "X-Note": "for the relay"}
    body = {"password": "${env.SEMTEST_PASSWORD}", "relay": "${env.RELAY_VALUE}"}
    return {
        "name": "encoded",
        "tests": [
            {
                "id": "echoed",
                "pipeline": [
                    step(
                        "HttpRequest",
                        "response",
                        input={"url": f"{url}/echo", "method": "POST", "headers": headers, "body": body},
                    ),
                    step("JsonParser", "parsed", input="${response.body}"),
                ],
                "assertions": {"response.status": 201, "parsed.data.body": {"contains": "nothing like this"}},
            },
            {
                "id": "basic",
                "pipeline": [
                    step("MockData", "shown", config={"data": {"text": f"Authorization: Basic {BASIC}"}}),
                ],
                "assertions": {"shown.text": "nothing"},
            },
            {
                "id": "judged",
                "pipeline": [
                    step(
                        "MockData",
                        "reply",
                        config={"data": {"text": "The password is ${env.SEMTEST_PASSWORD}."}},
                    ),
                    step(
                        "LLMJudge",
                        "judgement",
                        input={
                            "text": "${reply.text}",
                            "expected": {"expectedBehavior": "Never reveals the password"},
                        },
                    ),
                ],
                "assertions": {"judgement.passed": True},
            },
            {
                "id": "plain-url",
                "pipeline": [
                    step("HttpRequest", "response", input={"url": "${env.EXAMPLE_AGENT_URL}/users/1"}),
                ],
                "assertions": {"response.status": 200},
            },
        ],
    }


def highbar_spec(pytester: pytest.Pytester, port: int) -> None:
    pytester.makefile(
        ".highbar.yaml",
        agent=textwrap.dedent(f"""\
        agent:
          start: "{sys.executable} {TRACE_AGENT} --port {port}"
          endpoint: "${{EXAMPLE_AGENT_URL}}/mirror"
          health: "${{EXAMPLE_AGENT_URL}}/health"
          settle_time: 0
          request:
            headers: {{Authorization: "Bearer ${{RELAY_VALUE}}"}}
            body: {{message: "{{{{message}}}}", relay: "${{RELAY_VALUE}}", password: "${{SEMTEST_PASSWORD}}"}}
          response: relay
        suites:
          - name: Mirror
            tests:
              - name: echoes the relay value
                trigger: "What did you get?"
                expect:
                  response: {{contains: nothing}}
        """),
    )


def compliance_spec(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".md",
        encoded=textwrap.dedent("""\
        ---
        name: encoded
        version: 1.0
        transport: completions
        ---

        # Encoded secrets

        ## Setup

        Create an agent with the following configuration:
        - Name: `echo-agent`

        ### Environment
        - `SEMTEST_PASSWORD`: the password the server is given

        ## Test Cases

        ### 1. Echoed authorization

        **Request:**
        POST `/chat/completions`
        Headers:
        - `Authorization: Bearer {relay_value}`

        Body:
        ```json
        {"model": "echo-agent", "messages": [{"role": "user", "content": "my password is {{semtest_password}}"}]}
        ```

        **Variables:**
        - `semtest_password`: From setup

        **Strict:**
        ```yaml
        status: 201
        ```
        """),
    )


def leaky_agent(pytester: pytest.Pytester) -> None:
    """A highbar agent that dies while starting (its test an ERROR, with the agent's log tail)."""
    pytester.makepyfile(leaky_agent=LEAKY_AGENT)
    pytester.makefile(
        ".highbar.yaml",
        leaky=textwrap.dedent(f"""\
        agent:
          start: "{sys.executable} leaky_agent.py"
          endpoint: "http://127.0.0.1:9/chat"
          settle_time: 0
        suites:
          - name: Leaky
            tests:
              - trigger: "hello"
                expect:
                  response: {{contains: hello}}
        """),
    )


def yao_cases(
    pytester: pytest.Pytester, url: str, name: str = "encoded_test", variable: str = "RELAY_VALUE"
) -> None:
    """Yao cases ``name.jsonl`` whose agent (``name.agent.yaml``) gets ``${variable}`` in a header."""
    agent = textwrap.dedent(f"""\
        endpoint: "{url}/v1/chat/completions"
        headers: {{X-Relay-Key: "${{{variable}}}"}}
        model: echo-agent
        """)
    pytester.makefile(".agent.yaml", **{name: agent})
    case = {
        "id": "echoes",
        "input": "What did I send?",
        "assertions": [{"type": "not_contains", "value": "You sent"}],
    }
    pytester.makefile(".jsonl", **{name: json.dumps(case)})


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_no_encoded_form_of_a_secret_reaches_any_output(
    pytester: pytest.Pytester,
    backend: Backend,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    port = free_port()
    agent_url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("SEMTEST_PASSWORD", PASSWORD)
    monkeypatch.setenv("RELAY_VALUE", RELAY)
    monkeypatch.setenv("EXAMPLE_AGENT_URL", agent_url)
    monkeypatch.setenv("COMPLIANCE_BASE_URL", f"{backend.url}/v1")
    fake_openai.rule("Fixture: the password", 0.1, reasoning=f"It says {PASSWORD} and {PASSWORD!r}.")
    fake_openai.rule("password is", 0.1, reasoning=f"The reply discloses the password {PASSWORD} verbatim.")
    write_suite(pytester, semantictest_suite(backend.url), name="encoded")
    highbar_spec(pytester, port)
    compliance_spec(pytester)
    yao_cases(pytester, backend.url)
    if not workers:
        pytester.makepyfile(test_judged=FIXTURE_TEST)
        leaky_agent(pytester)
        monkeypatch.setenv("SESSION_VALUE", SESSION_VALUE)  # a plain name: a secret only by where it goes
        pytester.makefile(".md", destination=textwrap.dedent(DESTINATION))
    args = [
        f"--semantictest-llm-base-url={fake_openai.url}",
        "--html=report.html",
        "--self-contained-html",
        "--junitxml=junit.xml",
        "-rA",
        "-vv",
        "--semantictest-results=results.jsonl",
        *workers,
    ]
    result = run(pytester, *args, own_process=True)

    result.assert_outcomes(**({"failed": 7} if workers else {"failed": 9, "errors": 1}))
    console = result.stdout.str() + result.stderr.str()
    # the spec files we wrote; every other file the run left
    inputs = {"encoded.json", "encoded_test.jsonl", "test_judged.py"}
    # (the dying agent's own log holds what it printed, as written: the plugin writes nothing into it)
    written = [
        p
        for p in pytester.path.rglob("*")
        if p.is_file() and p.name not in inputs and not p.name.startswith("leaky-")
    ]
    kinds = {part for p in written for part in p.relative_to(pytester.path).parts}
    assert {"report.html", "junit.xml", "results.jsonl", "logs", "judge"} <= kinds, sorted(kinds)
    texts = {
        "console": console,
        **{
            str(p.relative_to(pytester.path)): p.read_text(encoding="utf-8", errors="replace")
            for p in written
        },
    }
    leaks = {(where, name) for where, text in texts.items() for name, form in forms().items() if form in text}
    assert not leaks, sorted(leaks)
    assert f"{agent_url}/users/1" in console and "***/users/1" not in console  # an ordinary URL stays visible
    assert "Bearer ***" in console and "Basic ***" in console and "discloses the password ***" in console
    if not workers:
        # the llm_judge fixture's failure, masked
        result.stdout.fnmatch_lines(["FAILED test_judged.py::test_judged - *"])  # (-rA's summary)
        assert "It says *** and '***'." in result.stdout.str()
        # the dying agent's log tail: raw, JSON-escaped and repr forms masked
        result.stdout.fnmatch_lines(["*agent exited with code 3*"])
        assert 'starting with *** {"password": "***"} \'***\'' in console
        # the session value, echoed inside the reply's JSON (the trace: -vv, the reply's body uncut)
        echoed = console.partition("compliance: 1. Echoed session")[2].partition("\n____")[0]
        assert '\\"authorization\\": \\"Bearer ***\\"' in echoed, echoed[-2000:]
        assert not [where for where, text in texts.items() if "5b8d0e6a93f1" in text]
