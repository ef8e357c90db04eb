"""The recording MCP proxy: relays every byte untouched, records only tools/call (tagged by ``_meta``),
needs nothing from its environment; through it highbar and Yao check the MCP tools an agent calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pytest_semantictest.agents import mcp_proxy
from pytest_semantictest.agents.traces import TraceReader
from tests.agents.recorded_run import SharedRun, recorded_pytest
from tests.helpers import run_pytest
from tests.mcp_servers.conftest import REPO, alive
from tests.ports import free_port

pytest_plugins = ["pytester"]
AGENT = REPO / "examples" / "mcp" / "mcp_agent.py"

FAKE_SERVER = r"""
import json, sys
log = open(sys.argv[1], "ab")
name = sys.argv[2] if len(sys.argv) > 2 else "add"
for line in sys.stdin.buffer:
    log.write(line); log.flush()
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "tools/list":
        answer = {"tools": [{"name": name, "inputSchema": {"type": "object"}}]}
    elif message.get("params", {}).get("name") == "boom":
        out = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": "Unknown tool: boom"}}
        sys.stdout.write(json.dumps(out) + "\n"); sys.stdout.flush(); continue
    elif message["method"] == "tools/call":
        answer = {"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}}
    else:
        answer = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}) + "\n")
    sys.stdout.flush()
"""


def test_the_proxy_relays_untouched_and_records_only_tools_call(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(FAKE_SERVER)
    traces, received = tmp_path / "traces.jsonl", tmp_path / "received.log"
    meta = {"test": "exec-1", "io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    sent = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1}, "_meta": meta},
        },
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
        {"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": "boom", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    ]
    stdin = "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in sent).encode()
    prefix = mcp_proxy.proxy_prefix(str(traces)).split()
    # the environment an MCP client gives a stdio server: almost nothing (no PYTHONPATH)
    done = subprocess.run(
        [*prefix, sys.executable, str(server), str(received)],
        input=stdin,
        capture_output=True,
        timeout=60,
        env={"PATH": os.environ.get("PATH", "")},
    )
    assert done.returncode == 0, done.stderr
    assert received.read_bytes() == stdin  # byte for byte, _meta and all
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, "x", 4]
    batch = TraceReader(traces).read_new()
    assert batch.problems == []
    assert [h.sdk for h in batch.hellos] == ["semantictest-mcp-proxy"]
    assert batch.declarations == [("add",)]
    assert [(t.fn, t.args, t.result, t.error, t.context) for t in batch.tools] == [
        ("add", {"a": 1}, {"result": 42}, None, {"test": "exec-1"}),
        ("boom", {}, None, "JSON-RPC error -32602: Unknown tool: boom", {}),
    ]


def test_two_servers_of_one_agent_keep_both_declarations(tmp_path: Path) -> None:
    """One hello in the trace file: a second proxy's hello would reset the tools the first declared."""
    server = tmp_path / "server.py"
    server.write_text(FAKE_SERVER)
    traces = tmp_path / "traces.jsonl"
    listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + "\n"
    prefix = mcp_proxy.proxy_prefix(str(traces)).split()
    for n, tool in enumerate(("add", "search")):
        command = [*prefix, sys.executable, str(server), str(tmp_path / f"r{n}.log"), tool]
        subprocess.run(command, input=listing.encode(), capture_output=True, timeout=60, check=True)
    batch = TraceReader(traces).read_new()
    assert len(batch.hellos) == 1 and batch.declarations == [("add",), ("search",)]
    assert TraceReader(traces).inventory() == frozenset({"add", "search"})


def test_a_server_that_cannot_start_is_named(tmp_path: Path) -> None:
    prefix = mcp_proxy.proxy_prefix(str(tmp_path / "t.jsonl")).split()
    done = subprocess.run([*prefix, "/nonexistent/server"], capture_output=True, timeout=60, input=b"")
    assert done.returncode == 127
    assert b"cannot start the MCP server '/nonexistent/server'" in done.stderr


def highbar_spec(port: int, *agent_args: str, runs: int = 1) -> str:
    start = " ".join([sys.executable, str(AGENT), "--port", str(port), *agent_args])
    return f"""
agent:
  start: "{start}"
  endpoint: "http://127.0.0.1:{port}/chat"
  health: "http://127.0.0.1:{port}/health"
  startup_timeout: 60000
  settle_time: 200
suites:
  - name: MCP
    tests:
      - name: adds
        trigger: "add 2 and 40"
        runs: {runs}
        expect:
          exclusive: true
          function_calls:
            - name: add
              params: {{a: 2, b: 40}}
              result: {{result: 42}}
      - name: weather
        trigger: "weather in Paris"
        runs: {runs}
        expect:
          exclusive: true
          function_calls:
            - name: forecast
              params: {{city: "Paris"}}
"""


def test_highbar_passes_for_the_right_call(pytester: pytest.Pytester, tag: str) -> None:
    pytester.makefile(".highbar.yaml", spec=highbar_spec(free_port(), "--tag", tag))
    run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert alive(tag) == []  # the agent, the proxy and the MCP server were stopped


@pytest.fixture(scope="module")
def wrong_mode_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[SharedRun, str]:
    """One run of a highbar file and Yao cases whose agent (``--mode wrong``) both name with the same
    command and port: the plugin starts one agent, proxy and MCP server for both (~1.9 s of CPU
    each start) where each test's run of its own started them again. Each test checks its own
    file's outcomes and messages (``tests/agents/recorded_run.py``); neither depends on what the
    other's tests did: each test's calls carry its own test id, and the tools keep no state."""
    folder = tmp_path_factory.mktemp("wrong-mode")
    tag = f"mcp-test-{uuid.uuid4().hex[:12]}"
    port = free_port()
    (folder / "spec.highbar.yaml").write_text(highbar_spec(port, "--mode", "wrong", "--tag", tag))
    write_yao_cases(folder, port, tag)
    run = recorded_pytest(folder, "", ("-p", "no:xdist", "-p", "no:cacheprovider"), {})
    return run, tag


def test_highbar_fails_naming_the_wrong_argument(wrong_mode_run: tuple[SharedRun, str]) -> None:
    run, tag = wrong_mode_run
    assert run.outcomes("spec.highbar.yaml") == {"passed": 1, "failed": 1}
    assert (
        "'forecast' was called but did not match: params: expected {'city': 'Paris'}, got {'city': 'paris'}"
        in run.text("spec.highbar.yaml")
    )
    assert alive(tag) == []  # the agent, the proxy and the MCP server were stopped


def test_untagged_calls_of_repeated_tests_are_not_mixed(pytester: pytest.Pytester, tag: str) -> None:
    """Without a test id in _meta the proxy's records are untagged: highbar's rule runs such tests one at
    a time, so each test still sees its own calls: both tests are ``exclusive``, so a call of the other
    test counted for one would fail it; the wrong argument fails only its own test."""
    spec = highbar_spec(free_port(), "--untagged", "--mode", "wrong", "--tag", tag, runs=3)
    pytester.makefile(".highbar.yaml", spec=spec)
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider", "--semantictest-concurrency=10")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*got {'city': 'paris'}*"])
    assert alive(tag) == []


def write_yao_cases(folder: Path, port: int, tag: str) -> None:
    (folder / "calls_test.agent.yaml").write_text(
        f'protocol: highbar\nstart: "{sys.executable} {AGENT} --port {port} --mode wrong --tag {tag}"\n'
        f"endpoint: http://127.0.0.1:{port}/chat\nhealth: http://127.0.0.1:{port}/health\nstartup_timeout: 60000\n"
    )
    cases = [
        {
            "id": "adds",
            "input": "add 20 and 22",
            "assertions": [{"type": "tool_called", "name": {"name": "add", "arguments": {"a": 20, "b": 22}}}],
        },
        {
            "id": "weather",
            "input": "weather in Oslo",
            "assertions": [
                {"type": "tool_called", "name": {"name": "forecast", "arguments": {"city": "Oslo"}}}
            ],
        },
    ]
    (folder / "calls_test.jsonl").write_text("\n".join(json.dumps(c) for c in cases))


def test_yao_tool_assertions_read_the_mcp_calls(wrong_mode_run: tuple[SharedRun, str]) -> None:
    run, tag = wrong_mode_run
    assert run.outcomes("calls_test.jsonl") == {"passed": 1, "failed": 1}
    assert run.category("calls_test.jsonl::weather") == ["failed"]
    assert "oslo" in run.text("calls_test.jsonl")
    assert alive(tag) == []


def test_a_1x_server_through_the_proxy_under_the_handshake(
    pytester: pytest.Pytester, partner_python: str, tag: str
) -> None:
    spec = highbar_spec(
        free_port(), "--protocol", "handshake", "--server-python", partner_python, "--tag", tag
    )
    pytester.makefile(".highbar.yaml", spec=spec)
    run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert alive(tag) == []
