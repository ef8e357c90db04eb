"""What a case sends: placeholders, variables, headers, bodies, Input and Flow requests, conditions."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_semantictest.formats.compliance.compile import REPORT_S, Settings, compile_document
from pytest_semantictest.formats.compliance.data import ComplianceCase
from pytest_semantictest.formats.compliance.models import DEFAULT_BASE_URL
from pytest_semantictest.formats.compliance.parse import parse_text
from pytest_semantictest.model import Case, Suite
from tests.compliance.conftest import CORPUS, chat_case, doc
from tests.shared import needs_corpus

TOOLS_SETUP = """Create an agent with:
- Name: `tool-agent`
- Tools: [get_weather, calculate]

### Tool Definitions

```json
[
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
  {"type": "function", "function": {"name": "calculate", "parameters": {"type": "object"}}}
]
```

### Environment
- `BASE_URL`: the server (default: http://127.0.0.1:9999)
- `REGION`: where (default: eu-west)
"""


def compiled(text: str, **settings: Any) -> Suite:
    return compile_document(parse_text(text, "t.md"), Settings(**settings))


def request_of(case: Case) -> dict[str, Any]:
    return next(step.config for step in case.steps if step.block == "ChatRequest")


def test_tool_placeholders_resolve_from_the_tool_definitions() -> None:
    cases = "".join(
        f'### {n}. T\n\n**Request:**\nPOST `/chat/completions`\n```json\n{{"tools": [/* {words} */]}}\n```\n\n'
        for n, words in enumerate(
            ["get_weather tool", "get_weather, calculate tools", "tools", "calculate"], 1
        )
    )
    suite = compiled(doc(cases, setup=TOOLS_SETUP))
    names = [[t["function"]["name"] for t in request_of(c)["body"]["tools"]] for c in suite.cases]
    assert names == [
        ["get_weather"],
        ["get_weather", "calculate"],
        ["get_weather", "calculate"],
        ["calculate"],
    ]


def test_placeholders_from_values_environment_and_setup_defaults() -> None:
    case = """### 1. P

**Request:**
POST `/agents/{agent_id}/chat/completions`
Authorization: Bearer {valid_jwt_token}
X-Region: {region}

```json
{"token": "{valid_jwt_token}", "text": "keep {braces} here"}
```
"""
    suite = compiled(
        doc(case, setup=TOOLS_SETUP),
        values={"agent_id": "protected-agent"},
        env={"VALID_JWT_TOKEN": "eyJ.token"},
    )
    request = request_of(suite.cases[0])
    assert request["url"] == "http://127.0.0.1:9999/agents/protected-agent/chat/completions"
    assert request["headers"] == {"Authorization": "Bearer eyJ.token", "X-Region": "eu-west"}
    assert request["body"] == {"token": "eyJ.token", "text": "keep {braces} here"}


def test_headers_bullets_and_body_label() -> None:
    case = """### 1. H

**Request:**
POST `/chat/completions`
Headers:
- `Authorization: Bearer test-token`
- `X-Custom-Header: value`

Body:
```json
{"model": "echo-agent", "messages": [{"role": "user", "content": "Hi"}]}
```
"""
    request = request_of(compiled(doc(case)).cases[0])
    assert request["headers"] == {"Authorization": "Bearer test-token", "X-Custom-Header": "value"}
    assert request["method"] == "POST" and request["body"]["model"] == "echo-agent"


def test_api_key_is_a_bearer_token_unless_the_request_has_its_own_or_says_no_authorization() -> None:
    cases = (
        chat_case("1. Keyed")
        + """### 2. Own

**Request:**
GET `/me`
Authorization: Bearer mine

### 3. Without

**Request:**
GET `/me`

No Authorization header.
"""
    )
    suite = compiled(doc(cases), api_key="sk-compliance-123")
    headers = [request_of(c)["headers"] for c in suite.cases]
    assert headers == [{"Authorization": "Bearer sk-compliance-123"}, {"Authorization": "Bearer mine"}, {}]


def test_streaming_invalid_json_and_raw_bodies() -> None:
    cases = """### 1. Stream

**Request:**
POST `/chat/completions` (streaming)
```json
{"model": "m", "messages": []}
```

### 2. Invalid

**Request:**
POST `/chat/completions` with invalid JSON

### 3. Raw

**Request:**
POST `/chat/completions`
Content-Type: application/json

```
{invalid json}
```

### 4. Form

**Request:**
POST `/token`
Content-Type: application/x-www-form-urlencoded

```
grant_type=client_credentials&scope=read
```
"""
    requests = [request_of(c) for c in compiled(doc(cases)).cases]
    assert requests[0]["body"] == {"model": "m", "messages": [], "stream": True}
    assert requests[1]["body"] == "{invalid json" and requests[1]["headers"] == {
        "Content-Type": "application/json"
    }
    assert requests[2]["body"] == "{invalid json}"
    assert requests[3]["body"] == "grant_type=client_credentials&scope=read"


def chosen_variables(suite: Suite) -> list[dict[str, Any]]:
    """The variables each compiled compliance case chose."""
    data = [c.format_data for c in suite.cases]
    assert all(isinstance(d, ComplianceCase) for d in data)
    return [d.variables for d in data if isinstance(d, ComplianceCase)]


def test_variables_are_chosen_by_the_test_id_reproducibly_and_reported() -> None:
    cases = "".join(
        chat_case(
            f"{n}. Greeting",
            content="{{greeting}} from {{agent_name}}",
            model="{{agent_name}}",
            extra='**Variables:**\n- `agent_name`: From setup\n- `greeting`: One of ["Hello", "Hi", "Hey"]\n'
            '- `farewell`: "Bye"\n',
        )
        for n in range(1, 13)
    )
    first, again = compiled(doc(cases)), compiled(doc(cases))
    chosen, chosen_again = chosen_variables(first), chosen_variables(again)
    assert chosen == chosen_again  # seeded by the test id: the same every run
    assert {v["greeting"] for v in chosen} == {"Hello", "Hi", "Hey"}  # but not the same for every test
    for case, variables in zip(first.cases, chosen, strict=True):
        body = request_of(case)["body"]
        assert body["model"] == "echo-agent" and variables["agent_name"] == "echo-agent"
        assert body["messages"][0]["content"] == f"{variables['greeting']} from echo-agent"
        assert variables["farewell"] == "Bye"
        assert case.steps[0].block == "MockData" and case.steps[0].config == {
            "data": variables
        }  # in the trace


def test_variables_inside_and_outside_json_strings() -> None:
    case = """### 1. V

**Request:**
POST `/x`
```json
{"n": {{count}}, "text": "say \\"{{word}}\\" now", "list": {{items}}}
```

**Variables:**
- `count`: One of [3]
- `word`: One of ["a \\"quoted\\" word"]
- `items`: One of [[1, 2]]
"""
    body = request_of(compiled(doc(case)).cases[0])["body"]
    assert body == {"n": 3, "text": 'say "a "quoted" word" now', "list": [1, 2]}


def test_input_and_conversation_become_chat_requests() -> None:
    cases = """### 1. Sends

**Input:**
User sends "What's the weather in Paris?" to `router`

### 2. Conversation

**Input:**
Conversation:
1. User to router: "My favorite city is Tokyo"
2. Router: "That's a great city!"
3. User to router: "What's the weather there?"

**Strict:**
```yaml
format: sse
```

### 3. Flow only

**Flow:**
1. User sends "Hi" to `router`
2. Router answers

### 4. Flow naming an agent

**Flow:**
1. router checks its mail
"""
    setup = "### Agent: router\n- Name: `router`\n- Handoffs: [weather-agent]\n"
    suite = compiled(doc(cases, setup=setup), base_url="http://server:1/")
    bodies = [request_of(c)["body"] for c in suite.cases]
    assert all(request_of(c)["url"] == "http://server:1/chat/completions" for c in suite.cases)
    assert bodies[0] == {
        "model": "router",
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
    }
    assert [m["role"] for m in bodies[1]["messages"]] == ["user", "assistant", "user"] and bodies[1][
        "stream"
    ] is True
    assert bodies[2]["messages"] == [{"role": "user", "content": "Hi"}]
    assert bodies[3] == {"model": "router", "messages": [{"role": "user", "content": "Flow naming an agent"}]}


def test_a_case_with_nothing_to_send_is_skipped() -> None:
    suite = compiled(doc("### 1. Prose\n\n**Assertions:**\n- Something holds\n"))
    assert suite.cases[0].skip == "the case has no **Request:** or **Input:** (nothing to send)"


@pytest.mark.parametrize(
    ("condition", "skip"),
    [
        ("Agent has tools configured", None),
        ("`tool-agent` has tools", None),
        (
            "Agent has no tools",
            "condition not met: Agent has no tools (agents of the setup with tools: tool-agent)",
        ),
        (
            "Agent has handoffs configured",
            "condition not met: Agent has handoffs configured (agents of the setup with handoffs: none)",
        ),
        ("tool-agent has the calculate tool", None),
        (
            "tool-agent has the search tool",
            "condition not met: tool-agent has the search tool (no agent of the setup "
            "lists search under tools)",
        ),
        ("The server runs on Tuesdays", "condition not evaluated: The server runs on Tuesdays (line 37)"),
    ],
)
def test_conditions_are_evaluated_against_the_setup(condition: str, skip: str | None) -> None:
    case = chat_case("1. C", extra=f"**Condition:** {condition}\n")
    assert compiled(doc(case, setup=TOOLS_SETUP)).cases[0].skip == skip


@pytest.mark.parametrize("transport", ["a2a", "realtime"])
def test_other_transports_are_read_like_completions_never_skipped(transport: str) -> None:
    """No case is skipped for its transport: its request is read as written (an unreadable one is its ERROR)."""
    bad = "### 1. Over the wire\n\n**Request:**\nSEND task to `agent` over the wire\n"
    good = '### 2. Input\n\n**Input:** User sends "Hi" to `agent`\n'
    suite = compiled(doc(bad + good, transport=transport))
    assert [c.skip for c in suite.cases] == [None, None]
    assert "cannot read the request line" in (suite.cases[0].error or "")
    step = suite.cases[1].steps[-1]
    assert step.block == "TransportRequest" and step.config["transport"] == transport
    assert step.config["messages"] == [{"role": "user", "content": "Hi"}]


def test_skip_reason_tags_and_timeout() -> None:
    suite = compiled(
        doc(chat_case(), skip_reason="server lacks auth", tags="[core, multi agent]", timeout=2.5)
    )
    case = suite.cases[0]
    assert case.skip == "skip_reason: server lacks auth"
    assert (
        case.markers == ["core", "multi_agent"] and case.timeout_s == 2.5 + REPORT_S
    )  # the exchange owns 2.5 s, then time to report
    assert request_of(case)["timeout"] == 2500


def test_base_url_precedence() -> None:
    with_default = doc(chat_case(), setup=TOOLS_SETUP)
    assert request_of(compiled(doc(chat_case())).cases[0])["url"] == DEFAULT_BASE_URL + "/chat/completions"
    assert request_of(compiled(with_default).cases[0])["url"].startswith("http://127.0.0.1:9999/")
    assert request_of(compiled(with_default, base_url="http://given").cases[0])["url"].startswith(
        "http://given/"
    )


@needs_corpus
def test_the_setup_is_structured() -> None:
    document = parse_text((CORPUS / "auth" / "aoauth-basic.md").read_text(), "aoauth-basic.md")
    protected, client = document.setup.agents
    assert protected.name == "protected-agent" and protected.skills == ["AuthSkill"]
    assert protected.extra == {"auth_config": {"mode": "validate", "required_scopes": ["read"]}}
    assert client.extra["auth_config"] == {"mode": "self-issued", "scopes": ["read", "write"]}
    handoff = parse_text((CORPUS / "multiagent" / "handoff-basic.md").read_text(), "h.md")
    assert [(a.name, a.handoffs, a.tools) for a in handoff.setup.agents] == [
        ("router", ["weather-agent", "calculator-agent"], []),
        ("weather-agent", [], ["get_weather"]),
        ("calculator-agent", [], ["calculate"]),
    ]
    chained = handoff.cases[5].setup
    assert chained is not None and [(a.name, a.handoffs) for a in chained.agents] == [
        ("report-agent", []),
        ("Router", ["weather-agent", "calculator-agent", "report-agent"]),
        ("Weather-agent", ["report-agent"]),
    ]
    assert handoff.cases[4].setup is not None and handoff.cases[4].setup.unavailable == ["weather-agent"]


def test_a_skipped_case_needs_no_placeholder_values() -> None:
    case = "### 1. Later\n\n**Request:**\nGET `/me`\nAuthorization: Bearer {session_token}\n"
    suite = compiled(doc(case, skip_reason="auth comes later"))
    assert suite.cases[0].skip == "skip_reason: auth comes later"
    assert request_of(suite.cases[0])["headers"] == {"Authorization": "Bearer {session_token}"}
