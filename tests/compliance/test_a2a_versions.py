"""A2A v1.0 beside v0.3, against real servers: a2a-sdk's server serving only v1.0 (its card lists one
``supportedInterfaces`` entry, no ``url``), the same SDK's v0.3-compatible server, and pydantic-ai's
A2A server (fasta2a, which answers ``message/send`` with ``submitted`` and expects polling). One file,
written once, passes against each; each server's faults fail naming their cause; the version spoken
is in the report."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import a2a_sdk_agent  # noqa: E402  (examples/agents is on sys.path: tests/compliance/conftest.py)
import pytest

from tests.helpers import run_pytest

pytest_plugins = ["pytester"]

FILE = """---
name: a2a-any-version
version: 1.0
transport: a2a
{extra}timeout: 10
---

# A2A, whichever version the agent speaks

## Setup

- Name: `echo-agent`

## Test Cases

### 1. The echo

**Input:** User sends "Hello A2A" to `echo-agent`

**Strict:**
```yaml
reply:
  state: completed
  final: true
  text: {text}
  version: "{version}"
```

### 2. A task that fails is the agent's rejection

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
  turns[*].state: completed
```
"""


def v1_app(url: str, mode: str) -> Any:
    """a2a-sdk's server with only the v1.0 JSON-RPC binding (no v0.3 compatibility)."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentInterface
    from starlette.applications import Starlette

    card = a2a_sdk_agent.agent_card(url)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(url=url + "/", protocol_binding="JSONRPC", protocol_version="1.0")
    )
    handler = DefaultRequestHandler(
        agent_executor=a2a_sdk_agent.EchoExecutor(mode), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])


def _write(pytester: pytest.Pytester, version: str, extra: str = "", text: str = '"Echo: Hello A2A"') -> None:
    pytester.makefile(".md", a2a=FILE.format(extra=extra, version=version, text=text))


def _run(pytester: pytest.Pytester, url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    monkeypatch.setenv("COMPLIANCE_A2A_URL", url)
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-compliance-strict-only",
        "--semantictest-results=r.jsonl",
    )
    records = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
    return result, records


@pytest.fixture
def v1_server() -> Any:
    server = a2a_sdk_agent.Server(v1_app).start()
    yield server
    server.shutdown()


def test_a_v1_server_is_spoken_to_in_v1_from_its_card(
    pytester: pytest.Pytester, v1_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, "1.0")
    result, records = _run(pytester, v1_server.url, monkeypatch)
    result.assert_outcomes(passed=3)
    note = records[0]["notes"][0]
    assert "1.0 (from the agent card)" in json.dumps(note)


def test_the_same_file_speaks_v03_to_a_v03_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, url = a2a_sdk_agent.start_server()
    try:
        _write(pytester, "0.3")
        result, _ = _run(pytester, url, monkeypatch)
    finally:
        server.shutdown()
    result.assert_outcomes(passed=3)


def test_a_version_the_card_does_not_offer_is_named(
    pytester: pytest.Pytester, v1_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, "0.3", extra="a2a_version: 0.3\n")
    result, _ = _run(pytester, v1_server.url, monkeypatch)
    result.assert_outcomes(failed=3)
    assert "the agent card offers A2A 1.0 at" in result.stdout.str()
    assert "not 0.3 as the case asks (front matter)" in result.stdout.str()


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("wrong_text", "Echo: A2A olleH"),
        ("drop_final", "the stream ended before the task completed; last state: working"),
        ("rpc_error", "JSON-RPC error"),
    ],
)
def test_faults_of_a_v1_server_fail_naming_the_cause(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str, cause: str
) -> None:
    server = a2a_sdk_agent.Server(v1_app, mode=mode).start()
    try:
        _write(pytester, "1.0")
        monkeypatch.setenv("COMPLIANCE_A2A_URL", server.url)
        result = run_pytest(
            pytester, "-p", "no:cacheprovider", "--semantictest-compliance-strict-only", "-k", "echo"
        )
    finally:
        server.shutdown()
    result.assert_outcomes(failed=1)
    assert cause in result.stdout.str()


# -- pydantic-ai's A2A server (fasta2a) ---------------------------------------------------------------


class _Uvicorn:
    """uvicorn with its lifespan on (fasta2a runs its task manager and worker there)."""

    def __init__(self, app_of: Any) -> None:
        import uvicorn

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app_of(self.url), log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)

    def shutdown(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)
        self.socket.close()


def _pydantic_ai_app(url: str) -> Any:
    """A pydantic-ai agent on a local function model (no LLM): echoes, and fails on "fail"."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts = [
            p.content for m in messages for p in getattr(m, "parts", []) if isinstance(p, UserPromptPart)
        ]
        text = str(prompts[-1]).strip()
        if text == "fail":
            raise RuntimeError("the agent was asked to fail")
        again = " (context kept)" if len(prompts) > 1 else ""
        return ModelResponse(parts=[TextPart(f"Echo: {text}{again}")])

    from fasta2a.pydantic_ai import agent_to_a2a

    return agent_to_a2a(Agent(FunctionModel(model)), name="echo-agent", url=url + "/")


FASTA2A_DEVIATION = (
    "does not validate as A2A 1.0: Failed to parse status field: Failed to parse timestamp field"
)
"""fasta2a 2.1 writes a task status's ``timestamp`` without a UTC offset (``2026-12-05T06:21:41.33``),
which A2A 1.0's ``google.protobuf.Timestamp`` (RFC 3339, offset required) and a2a-sdk's own client
refuse: its answers that carry one are named as not A2A 1.0, not read around."""


def test_pydantic_ai_a2a_server_streamed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    server = _Uvicorn(_pydantic_ai_app)
    try:
        _write(pytester, "1.0")
        result, records = _run(pytester, server.url, monkeypatch)
    finally:
        server.shutdown()
    # fasta2a's tasks carry timestamps without a UTC offset, which A2A 1.0 rejects: the two that complete
    # fail on it, and so does the failing task (an expected failure keeps every other problem of its case)
    result.assert_outcomes(failed=3)
    assert result.stdout.str().count(FASTA2A_DEVIATION) >= 3
    assert all("1.0 (from the agent card)" in json.dumps(r["notes"]) for r in records)


POLLED = """---
name: a2a-polled
version: 1.0
transport: a2a
timeout: 10
---

# A send answered with a submitted task, polled to its end

## Test Cases

### 1. SendMessage, then GetTask until completed

**Request:**
POST `/`
```json
{"jsonrpc": "2.0", "id": "1", "method": "SendMessage",
 "params": {"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "polled"}]}}}
```

**Strict:**
```yaml
reply:
  state: completed
  text: "Echo: polled"
  version: "1.0"
  events[0].data.task.status.state: TASK_STATE_SUBMITTED
```
"""


def test_pydantic_ai_submitted_task_is_polled_with_get_task(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _Uvicorn(_pydantic_ai_app)
    try:
        pytester.makefile(".md", polled=POLLED)
        result, _ = _run(pytester, server.url, monkeypatch)
    finally:
        server.shutdown()
    result.assert_outcomes(failed=1)
    assert FASTA2A_DEVIATION in result.stdout.str()


def test_a_task_answered_at_once_is_polled_with_get_task(
    pytester: pytest.Pytester, v1_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """a2a-sdk answers ``returnImmediately`` with the task still working; GetTask reads it to its end."""
    written = POLLED.replace(
        '"parts": [{"text": "polled"}]}',
        '"parts": [{"text": "polled"}]}, "configuration": {"returnImmediately": true}',
    )
    # the first answer is not final, so a second event is GetTask's answer
    written = written.replace(
        "  events[0].data.task.status.state: TASK_STATE_SUBMITTED\n", "  events[1].kind: task\n"
    )
    pytester.makefile(".md", polled=written)
    result, records = _run(pytester, v1_server.url, monkeypatch)
    result.assert_outcomes(passed=1)


def test_a_reply_that_is_only_a_message_is_completed_in_both_versions() -> None:
    from pytest_semantictest.blocks.transports.a2a_fold import fold_payload
    from pytest_semantictest.blocks.transports.reply import Reply
    from pytest_semantictest.blocks.transports.tool_calls import DEFAULT

    v03 = {"kind": "message", "role": "agent", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}
    v1 = {"message": {"role": "ROLE_AGENT", "messageId": "m", "parts": [{"text": "hi"}]}}
    for version, result in (("0.3", v03), ("1.0", v1)):
        reply = Reply("a2a", "jsonrpc")
        fold_payload(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}), reply, version, DEFAULT)
        assert (reply.state, reply.final, reply.task_id, reply.text, reply.problems) == (
            "completed",
            True,
            None,
            "hi",
            [],
        )


def test_a_v1_answer_to_a_v03_request_is_read_and_named() -> None:
    from pytest_semantictest.blocks.transports.a2a_fold import fold_payload
    from pytest_semantictest.blocks.transports.reply import Reply
    from pytest_semantictest.blocks.transports.tool_calls import DEFAULT

    reply = Reply("a2a", "jsonrpc")
    task = {"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}
    fold_payload(json.dumps({"jsonrpc": "2.0", "id": 1, "result": task}), reply, "0.3", DEFAULT)
    assert reply.state == "completed" and reply.final
    assert reply.problems == [
        "the agent answered an A2A 0.3 request with an A2A 1.0 task: "
        "name a2a_version: 1.0 in the front matter if that is the version it speaks"
    ]


@pytest.mark.parametrize(
    ("data", "shape", "call"),
    [
        ({"name": "get_weather", "arguments": '{"city": "Oslo"}'}, None, ("get_weather", {"city": "Oslo"})),
        ({"id": "c1", "function": {"name": "f", "arguments": "{}"}}, None, ("f", {})),
        ({"tool_call": {"name": "f", "arguments": {"a": 1}}}, None, ("f", {"a": 1})),
        ({"tool": "get_weather", "city": "Oslo"}, None, ("get_weather", {"city": "Oslo"})),
        ({"tool_name": "search", "input": {"q": "x"}}, None, ("search", {"q": "x"})),
        ({"answer": 42}, None, None),
        ({"op": "lookup", "params": {"k": 1}}, {"name": "op", "arguments": "params"}, ("lookup", {"k": 1})),
        ({"name": "f", "arguments": {}}, {"name": "op"}, None),  # a file's own shape replaces the defaults
    ],
)
def test_tool_calls_across_shapes(data: Any, shape: Any, call: Any) -> None:
    from pytest_semantictest.blocks.transports.tool_calls import calls_in, shapes_of

    found = calls_in(data, shapes_of(shape))
    assert [(c["name"], c["arguments"]) for c in found] == ([call] if call else [])


TOOLS = """---
name: a2a-tools
version: 1.0
transport: a2a
{shape}timeout: 10
---

## Test Cases

### 1. The tool calls the agent reported

**Input:** User sends "weather in Oslo" to `echo-agent`

**Strict:**
```yaml
reply:
  tool_calls: length(1)
  tool_calls[0].name: {name}
  tool_calls[0].arguments: {arguments}
```
"""


def _tools_app(url: str, mode: str) -> Any:
    """An a2a-sdk v1.0 agent that reports two steps as data parts: one in a default shape, one in its own."""
    from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentInterface
    from starlette.applications import Starlette

    class Executor(AgentExecutor):
        async def execute(self, context: Any, queue: Any) -> None:
            await queue.enqueue_event(new_task_from_user_message(context.message))
            updater = a2a_sdk_agent.updater_of(queue, context)
            await updater.start_work()
            parts = [
                new_data_part({"tool": "get_weather", "city": "Oslo"}),
                new_data_part({"op": "lookup", "params": {"k": "Oslo"}}),
            ]
            await updater.add_artifact(parts, name="steps")
            await updater.complete()

        async def cancel(self, context: Any, queue: Any) -> None:
            return None

    card = a2a_sdk_agent.agent_card(url)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(url=url + "/", protocol_binding="JSONRPC", protocol_version="1.0")
    )
    handler = DefaultRequestHandler(
        agent_executor=Executor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])


@pytest.mark.parametrize(
    ("shape", "name", "arguments"),
    [
        ("", "get_weather", "{city: Oslo}"),  # the defaults read {"tool": ...}, not the agent's own shape
        ("tool_calls: {name: op, arguments: params}\n", "lookup", "{k: Oslo}"),  # the file's own shape only
    ],
)
def test_tool_calls_in_data_parts_default_and_a_files_own_shape(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, shape: str, name: str, arguments: str
) -> None:
    server = a2a_sdk_agent.Server(_tools_app).start()
    try:
        pytester.makefile(".md", tools=TOOLS.format(shape=shape, name=name, arguments=arguments))
        result, _ = _run(pytester, server.url, monkeypatch)
    finally:
        server.shutdown()
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("front", "said"),
    [
        ("transport: realtime\na2a_version: 1.0", "a2a_version is for transport: a2a"),
        ("transport: completions\ntool_calls: {name: op}", "tool_calls is for transport: a2a"),
        ("transport: a2a\na2a_version: 2.0", "a2a_version"),
        ("transport: a2a\ntool_calls: {nmae: op}", "nmae"),
        ("transport: a2a\ndialect: webagents\na2a_version: 1.0", "a2a_version is for dialect: jsonrpc"),
    ],
)
def test_a2a_front_matter_keys_are_checked(front: str, said: str) -> None:
    from pytest_semantictest.errors import SpecError
    from pytest_semantictest.formats.compliance import parse_text

    with pytest.raises(SpecError) as raised:
        parse_text(f"---\nname: x\nversion: 1.0\n{front}\n---\n\n## Test Cases\n", "x.md")
    assert said in str(raised.value)


def test_the_version_from_the_option_and_the_environment(
    pytester: pytest.Pytester, v1_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked for 0.3 by the option, a v1.0-only agent fails naming where the version came from; the
    environment's 1.0 is spoken and said; a version we do not speak is an error before anything runs."""
    _write(pytester, "1.0")
    monkeypatch.setenv("COMPLIANCE_A2A_URL", v1_server.url)
    args = ("-p", "no:cacheprovider", "--semantictest-compliance-strict-only", "-k", "echo")
    forced = run_pytest(pytester, *args, "--semantictest-compliance-a2a-version=0.3")
    forced.assert_outcomes(failed=1)
    assert "not 0.3 as the case asks (option)" in forced.stdout.str()
    monkeypatch.setenv("COMPLIANCE_A2A_VERSION", "1.0")
    said = run_pytest(pytester, *args, "--semantictest-results=r.jsonl")
    said.assert_outcomes(passed=1)
    assert "1.0 (from the environment (COMPLIANCE_A2A_VERSION))" in (pytester.path / "r.jsonl").read_text()
    monkeypatch.setenv("COMPLIANCE_A2A_VERSION", "2")
    wrong = run_pytest(pytester, *args)
    assert (
        "COMPLIANCE_A2A_VERSION: '2' is no A2A version this plugin speaks: write 0.3 or 1.0"
        in wrong.stdout.str()
    )
    assert wrong.ret != 0


def test_agent_url_moves_each_case_to_its_agent() -> None:
    from pytest_semantictest.formats.compliance import parse_text
    from pytest_semantictest.formats.compliance.compile import Settings, compile_document

    text = """---
name: routed
version: 1.0
transport: completions
---

## Setup

- Name: `echo-agent`

## Test Cases

### 1. By model

**Request:**
POST `/chat/completions`
```json
{"model": "tool-agent", "messages": [{"role": "user", "content": "hi"}]}
```

### 2. By input

**Input:** User sends "hi" to `echo-agent`

### 3. Written for the agent's own path

**Request:**
GET `/agents/echo-agent/.well-known/jwks.json`
"""
    template = "http://h:1/agents/{agent}"
    suite = compile_document(parse_text(text, "r.md"), Settings(base_url="http://h:1", agent_url=template))
    urls = [case.steps[0].config["url"] for case in suite.cases]
    assert urls == [
        "http://h:1/agents/tool-agent/chat/completions",
        "http://h:1/agents/echo-agent/chat/completions",
        "http://h:1/agents/echo-agent/.well-known/jwks.json",
    ]


def _rest_app(url: str, mode: str) -> Any:
    """a2a-sdk's server with only the v1.0 HTTP+JSON binding, at /a2a."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_rest_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentInterface
    from starlette.applications import Starlette

    card = a2a_sdk_agent.agent_card(url)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(url=url + "/a2a", protocol_binding="HTTP+JSON", protocol_version="1.0")
    )
    handler = DefaultRequestHandler(
        agent_executor=a2a_sdk_agent.EchoExecutor(mode), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(
        routes=[*create_agent_card_routes(card), *create_rest_routes(handler, path_prefix="/a2a")]
    )


@pytest.mark.parametrize("mode", ["ok", "drop_final"])
def test_the_http_json_binding(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    server = a2a_sdk_agent.Server(_rest_app, mode=mode).start()
    try:
        _write(pytester, "1.0", extra="dialect: rest\n")
        if mode == "ok":  # the same cases over JSON-RPC, which this card does not offer
            pytester.makefile(".md", jsonrpc=FILE.format(extra="dialect: jsonrpc\n", version="1.0", text="x"))
        result, records = _run(pytester, server.url, monkeypatch)
    finally:
        server.shutdown()
    if mode == "ok":
        result.assert_outcomes(passed=3, failed=3)
        assert {r["file"] for r in records if r["outcome"] == "failed"} == {"jsonrpc.md"}
        assert f"{server.url}/a2a/message:stream" in json.dumps(records[0]["notes"])
        said = f"offers no JSONRPC interface, only A2A 1.0 at {server.url}/a2a over HTTP+JSON: write dialect: rest"
        assert said in result.stdout.str()
        assert "does not validate" not in result.stdout.str()  # read as the 1.0 card it is
    else:  # no final status: each completing case fails naming it
        result.assert_outcomes(passed=1, failed=2)
        assert "the stream ended before the task completed; last state: working" in result.stdout.str()


def test_the_card_names_version_and_endpoint() -> None:
    from pytest_semantictest.blocks.transports.a2a_card import choose, on_host

    both = {
        "url": "http://public.example/v03",
        "protocolVersion": "0.3.0",
        "supportedInterfaces": [
            {
                "url": "http://public.example/agents/a/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            },
            {
                "url": "http://public.example/agents/a/rest",
                "protocolBinding": "HTTP+JSON",
                "protocolVersion": "1.0",
            },
        ],
    }
    base = "http://127.0.0.1:5/agents/a"
    newest, problem = choose(both, base, None, "front matter")
    assert (newest.version, newest.url, newest.source, problem) == (
        "1.0",
        "http://127.0.0.1:5/agents/a/a2a",
        "agent card",
        None,
    )
    older, _ = choose(both, base, "0.3", "option")
    assert (older.version, older.url, older.source) == ("0.3", "http://127.0.0.1:5/v03", "option")
    rest, _ = choose(both, base, "1.0", "rest dialect", "HTTP+JSON")
    assert rest.url == "http://127.0.0.1:5/agents/a/rest"
    none, _ = choose(None, base, None, "front matter")  # no card: 0.3 at the base
    assert (none.version, none.url, none.source) == ("0.3", base + "/", "default")
    assert on_host("/rpc", base) == base + "/rpc"


def test_a_v03_card_offers_its_url_and_interfaces_on_their_own_bindings() -> None:
    from pytest_semantictest.blocks.transports.a2a_card import choose, offers

    card = {
        "url": "http://public.example/rpc",
        "protocolVersion": "0.3.0",
        "additionalInterfaces": [{"url": "http://public.example/rest", "transport": "HTTP+JSON"}, "junk"],
    }
    assert offers(card) == [("0.3", "http://public.example/rpc")]
    assert offers(card, "HTTP+JSON") == [("0.3", "http://public.example/rest")]
    base = "http://127.0.0.1:5"
    _, problem = choose(card, base, "1.0", "rest dialect", "HTTP+JSON")  # REST is A2A 1.0's: a problem
    assert problem == (
        "the agent card offers A2A 0.3 at http://public.example/rest over HTTP+JSON, not 1.0 as the case asks "
        "(rest dialect)"
    )
    rest_only = {"url": "http://public.example/rest", "preferredTransport": "HTTP+JSON"}
    endpoint, problem = choose(rest_only, base, None, "front matter")
    assert (endpoint.url, endpoint.version, endpoint.source) == (base + "/", "0.3", "agent card")
    assert problem == (
        "the agent card offers no JSONRPC interface, only A2A 0.3 at http://public.example/rest over "
        "HTTP+JSON: write dialect: rest in the front matter"
    )
    assert choose({"name": "no endpoints"}, base, "1.0", "option")[1] is None  # the card's problem says so
