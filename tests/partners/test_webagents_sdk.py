"""The WebAgents SDK itself as a test partner: the published compliance corpus, unedited, and our own
A2A (v1.0) and realtime files, run against the real ``webagents`` server (``webagents_server.py``:
the SDK's own transports and OpenAI skill over a streaming fake LLM, offline), every verdict asserted.

Where the SDK differs from what the files expect, the case is an expected failure, each named with
the difference and the line that shows it. The SDK cannot share our environment (it pins mcp<2 and
its web stack), so it runs in the partner venv named by ``SEMANTICTEST_PARTNER_PYTHON`` (.ci/run makes
it); without it these tests skip, saying so.

How a user points the corpus at their own WebAgents server is this file's recipe: ``COMPLIANCE_AGENT_URL``
(``<server>/agents/{agent}``: each case goes to its agent's own endpoints), ``COMPLIANCE_BASE_URL`` (the
server's root, for the paths the corpus writes out), an API key, and the token variables the auth file
names (docs/compliance.md, "Your own WebAgents server").
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import run_pytest
from tests.shared import COMPLIANCE_CORPUS, needs_corpus

pytest_plugins = ["pytester"]
PARTNER = "SEMANTICTEST_PARTNER_PYTHON"
SERVER = Path(__file__).with_name("webagents_server.py")

pytestmark = pytest.mark.skipif(
    not os.environ.get(PARTNER),
    reason=f"the WebAgents SDK runs in the partner SDKs' venv: set {PARTNER} to its python (.ci/run does)",
)

# Every case of the published corpus against the SDK, strict checks only (no judge): the outcome and,
# for a failure, the SDK's difference and the text of the failure that shows it.
NO_HANDOFFS = (
    "the SDK has no agent-to-agent handoff on /chat/completions (its Handoff is the turn's LLM "
    "handler), so no handoff event is ever sent"
)
CORPUS: dict[str, dict[str, tuple[str, str | None, str | None]]] = {
    "auth/aoauth-basic.md": {
        "1. Unauthenticated Request Rejected": (
            "failed",
            "its 401 body is {error: {code: unauthorized}}, without error.type",
            "body error.type (line 55): the path names nothing",
        ),
        "2. Valid Token Accepted": ("passed", None, None),
        "3. Invalid Token Rejected": (
            "failed",
            "its credential floor accepts any bearer token without an auth skill",
            "status (line 101): expected 401, got 200",
        ),
        "4. Expired Token Rejected": (
            "failed",
            "its credential floor accepts any bearer token without an auth skill",
            "status (line 125): expected 401, got 200",
        ),
        "5. Insufficient Scope Rejected": (
            "failed",
            "no scopes on a plain agent: the path the case names is not served",
            "status (line 152): expected 403, got 404",
        ),
        "6. JWKS Endpoint": ("passed", None, None),
        "7. OpenID Configuration": (
            "failed",
            "no OpenID configuration under an agent without its auth skill",
            "status (line 191): expected 200, got 404",
        ),
        "8. Token Generation": (
            "failed",
            "no token endpoint under an agent without its auth skill",
            "status (line 217): expected 200, got 404",
        ),
        "9. Agent-to-Agent Auth Flow": (
            "failed",
            "no auth.token_generated events",
            'no event matches {type: "auth.token_generated", agent: "client-agent"}',
        ),
    },
    "multiagent/handoff-basic.md": {
        "1. Successful Weather Handoff": ("failed", NO_HANDOFFS, 'no event matches {type: "handoff"'),
        "2. Successful Calculator Handoff": ("failed", NO_HANDOFFS, 'no event matches {type: "handoff"'),
        "3. Direct Response (No Handoff)": (
            "failed",
            "its reply's model is the LLM's (gpt-4o-mini), not the agent's",
            'response.agent (line 108): expected "router", got "gpt-4o-mini"',
        ),
        "4. Handoff with Context Preservation": ("failed", NO_HANDOFFS, 'no event matches {type: "handoff"'),
        "5. Failed Handoff Recovery": ("failed", NO_HANDOFFS, 'no event matches {type: "handoff"'),
        "6. Chained Handoffs": ("failed", NO_HANDOFFS, 'no event matches {type: "handoff"'),
        "7. Handoff Metadata": ("failed", NO_HANDOFFS, 'no event matches {type: "handoff"'),
    },
    "transport/completions-basic.md": {
        "1. Simple Message": ("passed", None, None),
        "2. System Message": ("passed", None, None),
        "3. Multi-turn Conversation": ("passed", None, None),
        "4. Empty Messages Array": (
            "failed",
            "it answers an empty messages array with 200",
            "the request was accepted (status 200) but the case expects it to be rejected",
        ),
        "5. Missing Model": (
            "failed",
            "it answers a request without model with 200 (the path names the agent)",
            "the request was accepted (status 200) but the case expects it to be rejected",
        ),
        "6. Invalid JSON": (
            "failed",
            "it answers invalid JSON with 422",
            "status (line 171): expected 400, got 422",
        ),
    },
    "transport/completions-streaming.md": {
        "1. Basic Streaming": ("passed", None, None),
        "2. Chunk Format": ("passed", None, None),
        "3. Streaming with Tool Calls": ("passed", None, None),
        "4. Concatenated Content": ("passed", None, None),
        "5. Stream Cancellation": ("skipped", None, None),  # natural-language assertions only
        "6. Empty Response Streaming": ("passed", None, None),
    },
    "transport/completions-tools.md": {
        "1. Tool Call Response": ("passed", None, None),
        "2. Tool Result Handling": ("passed", None, None),
        "3. Multiple Tool Calls": ("passed", None, None),
        "4. Parallel Tool Calls": ("skipped", None, None),
        "5. Tool Choice: None": (
            "failed",
            "it drops tool_choice (the fake model honours it and never sees it)",
            "body choices[0].message.tool_calls (line 193): expected nothing here",
        ),
        "6. Tool Choice: Specific Function": (
            "failed",
            "it drops tool_choice (the fake model honours it and never sees it)",
            "body choices[0].message.tool_calls (line 219): expected it to exist",
        ),
        "7. Invalid Tool Name in Result": ("skipped", None, None),
        "8. Tool Call Arguments Parsing": ("passed", None, None),
    },
}

A2A = """---
name: webagents-a2a
version: 1.0
transport: a2a
timeout: 10
---

## Setup

- Name: `echo-agent`

## Test Cases

### 1. The echo over A2A 1.0

**Input:** User sends "Hello A2A" to `echo-agent`

**Strict:**
```yaml
reply:
  state: completed
  final: true
  text: "Echo: Hello A2A"
  version: "1.0"
  card.name: echo-agent
events:
  - kind: task
  - kind: status-update
    data.statusUpdate.status.state: TASK_STATE_WORKING
  - kind: artifact-update
  - kind: status-update
    data.statusUpdate.status.state: TASK_STATE_COMPLETED
```

### 2. A run that fails is a failed task

**Input:** User sends "fail" to `echo-agent`

**Expected:** failure

**Strict:**
```yaml
reply:
  state: failed
```

### 3. A conversation keeps its context

**Input:**
Conversation:
1. User to echo-agent: "first"
2. User to echo-agent: "second"

**Strict:**
```yaml
reply:
  turns[1].text: "Echo: second (context kept)"
```
"""

REALTIME = """---
name: webagents-realtime
version: 1.0
transport: realtime
timeout: 5
---

## Setup

- Name: `echo-agent`

## Test Cases

### 1. A user message as the protocol writes it (input_text)

**Input:** User sends "Hello realtime" to `echo-agent`

**Strict:**
```yaml
reply:
  state: completed
  text: "Echo: Hello realtime"
```

### 2. A text part

**Request:**
GET `/realtime`
```json
[
  {"type": "conversation.item.create", "item": {"type": "message", "role": "user",
    "content": [{"type": "text", "text": "Hello"}]}},
  {"type": "response.create"}
]
```

**Strict:**
```yaml
reply:
  state: completed
  text: "Echo: Hello"
```

### 3. A session update after the response is acknowledged

**Request:**
GET `/realtime`
```json
[
  {"type": "conversation.item.create", "item": {"type": "message", "role": "user",
    "content": [{"type": "text", "text": "Hi"}]}},
  {"type": "response.create"},
  {"type": "session.update", "session": {"instructions": "Be brief"}}
]
```

**Strict:**
```yaml
reply:
  events[-1].kind: session.updated
  events[-1].data.session.instructions: Be brief
```
"""

OWN_FILES = {
    "a2a.md": {
        "1. The echo over A2A 1.0": ("passed", None, None),
        "2. A run that fails is a failed task": ("passed", None, None),
        "3. A conversation keeps its context": (
            "failed",
            "its A2A transport gives the model only the new message of a context (no history)",
            'reply turns[1].text (line 57): expected "Echo: second (context kept)", got "Echo: second"',
        ),
    },
    "a2a-rest.md": {
        "1. The echo over A2A 1.0": ("passed", None, None),
        "2. A run that fails is a failed task": ("passed", None, None),
        "3. A conversation keeps its context": (
            "failed",
            "its A2A transport gives the model only the new message of a context (no history)",
            'reply turns[1].text (line 58): expected "Echo: second (context kept)", got "Echo: second"',
        ),
    },
    "realtime.md": {
        "1. A user message as the protocol writes it (input_text)": (
            "failed",
            "its realtime transport reads only text parts, not the protocol's input_text",
            'reply text (line 22): expected "Echo: Hello realtime", got "Echo: "',
        ),
        "2. A text part": ("passed", None, None),
        "3. A session update after the response is acknowledged": ("passed", None, None),
    },
}


@pytest.fixture(scope="module")
def webagents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The SDK's server in the partner venv; its URL. Stopped (and waited for) at the end."""
    keys = tmp_path_factory.mktemp("webagents-keys")
    process = subprocess.Popen(
        [os.environ[PARTNER], str(SERVER), str(keys)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "HOME": str(keys), "OPENAI_API_KEY": "unused"},
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("LISTENING "):
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not ready.wait(90):
            pytest.fail("the WebAgents server did not start within 90 s:\n" + "".join(lines[-30:]))
        yield next(line.split()[1] for line in lines if line.startswith("LISTENING "))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, url: str, *paths: str) -> list[dict]:
    for name, value in {
        "COMPLIANCE_AGENT_URL": url + "/agents/{agent}",
        "COMPLIANCE_BASE_URL": url,
        "COMPLIANCE_A2A_URL": url,
        "COMPLIANCE_REALTIME_URL": url,
        "COMPLIANCE_API_KEY": "partner-test-key",
        "VALID_JWT_TOKEN": "valid-token",
        "EXPIRED_JWT_TOKEN": "expired-token",
        "TOKEN_WITH_READ_SCOPE": "read-scope-token",
    }.items():
        monkeypatch.setenv(name, value)
    run_pytest(
        pytester,
        *paths,
        "-p",
        "no:cacheprovider",
        f"--rootdir={pytester.path}",
        "--semantictest-compliance-strict-only",
        "--semantictest-results=results.jsonl",
    )
    return [json.loads(line) for line in (pytester.path / "results.jsonl").read_text().splitlines()]


def _check(records: list[dict], expected: dict[str, dict[str, tuple[str, str | None, str | None]]]) -> None:
    seen = {r["id"].split("compliance/")[-1]: r for r in records}
    wanted = {
        f"{file}::{case}": verdict for file, cases in expected.items() for case, verdict in cases.items()
    }
    assert sorted(seen) == sorted(wanted), "the cases run are not the cases expected"
    wrong = []
    for key, (outcome, deviation, shown) in wanted.items():
        record = seen[key]
        if record["outcome"] != outcome or (shown is not None and shown not in (record.get("message") or "")):
            wrong.append(
                f"{key}: expected {outcome} ({deviation}), got {record['outcome']}: {record.get('message')}"
            )
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_the_published_corpus_against_the_webagents_sdk(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, webagents: str
) -> None:
    records = _run(pytester, monkeypatch, webagents, str(COMPLIANCE_CORPUS))
    _check(records, CORPUS)


def test_a2a_v1_both_bindings_and_realtime_against_the_webagents_sdk(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, webagents: str
) -> None:
    rest = A2A.replace("transport: a2a\n", "transport: a2a\ndialect: rest\n")  # its HTTP+JSON binding
    pytester.makefile(".md", a2a=A2A, realtime=REALTIME, **{"a2a-rest": rest})
    records = _run(pytester, monkeypatch, webagents)
    _check(records, OWN_FILES)
    echo = {r["id"].split("::")[0]: json.dumps(r["notes"]) for r in records if r["id"].endswith("A2A 1.0")}
    assert "1.0 (from the agent card)" in echo["a2a.md"]  # negotiated from the SDK's v1.0 card
    assert "/agents/echo-agent/a2a/message:stream" in echo["a2a-rest.md"]
