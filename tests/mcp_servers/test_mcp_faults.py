"""An MCP server under test that misbehaves: each fault fails or ERRORs with its cause named, within the
case's timeout, and no server process is left (checked in /proc)."""

from __future__ import annotations

import json
import sys
from collections.abc import Generator

import pytest

from tests.helpers import patience, run_pytest
from tests.mcp_servers.conftest import SERVER, alive

pytest_plugins = ["pytester"]


def mcp_file(server: str, case: str, timeout: float | None = None) -> str:
    """A compliance file over MCP; ``timeout`` for a test of a timeout, else one that a server answering
    on a loaded machine keeps (starting a Python MCP server there took over 15 s)."""
    timeout = timeout if timeout is not None else round(patience(60))
    return (
        f"---\nname: faults\nversion: 1.0\ntransport: mcp\nserver: {server}\ntimeout: {timeout}\n---\n\n"
        f"## Test Cases\n\n{case}"
    )


ADD = '### 1. Add\n\n**Request:**\nMCP `tools/call`\n```json\n{"name": "add", "arguments": {"a": 20, "b": 22}}\n```\n'
STRICT_42 = "\n**Strict:**\n```yaml\nreply:\n  structured.result: 42\n```\n"


def command(tag: str, mode: str = "ok") -> str:
    return f"{sys.executable} {SERVER} --mode {mode} --tag {tag}"


def test_a_tool_that_raises_fails_naming_the_tool_error(pytester: pytest.Pytester, tag: str) -> None:
    case = '### 1. Divide\n\n**Request:**\nMCP `tools/call`\n```json\n{"name": "divide", "arguments": {"a": 1, "b": 0}}\n```\n'
    pytester.makefile(".md", faults=mcp_file(command(tag), case))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    # under 2026-07-28 the SDK's server hides the exception's text; its stderr (in the evidence) has it
    result.stdout.fnmatch_lines(
        [
            "*the server answered with a tool error (isError: true): Error executing tool divide*",
            "*server stderr (last lines):*",
            "*ValueError: division by zero*",
        ]
    )
    assert alive(tag) == []


def test_a_server_that_exits_fails_naming_the_transport_failure(pytester: pytest.Pytester, tag: str) -> None:
    pytester.makefile(".md", faults=mcp_file(command(tag, "exit"), ADD))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*transport failure: the session with * ended: Connection closed; its stderr ends: 'example-mcp: exiting*"
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert alive(tag) == []


def test_a_server_that_hangs_errors_within_the_timeout(pytester: pytest.Pytester, tag: str) -> None:
    pytester.makefile(".md", faults=mcp_file(command(tag, "hang"), ADD, timeout=15))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*timeout: tools/call had no answer within 10 s (the session's deadline, 5 s before the timeout of 15 s)*server was stopped*"
        ]
    )
    assert alive(tag) == []


def test_a_server_that_cannot_start_errors_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makefile(".md", faults=mcp_file("/nonexistent/mcp-server --stdio", ADD))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*transport failure*FileNotFoundError*/nonexistent/mcp-server*"])


def test_a_wrong_answer_fails_naming_the_difference(pytester: pytest.Pytester, tag: str) -> None:
    pytester.makefile(".md", faults=mcp_file(command(tag, "wrong"), ADD + STRICT_42))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*reply structured.result (line *): expected 42, got 43*"])
    assert alive(tag) == []


def test_the_right_answer_passes_and_stops_the_server(pytester: pytest.Pytester, tag: str) -> None:
    pytester.makefile(".md", faults=mcp_file(command(tag), ADD + STRICT_42))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert alive(tag) == []


def test_over_http_a_hanging_server_errors_and_one_that_exits_fails(
    pytester: pytest.Pytester, tag: str
) -> None:
    from tests.mcp_servers.conftest import serve_http

    hanging = serve_http(sys.executable, "--mode", "hang", "--tag", tag)
    exiting = serve_http(sys.executable, "--mode", "exit", "--tag", tag)
    assert isinstance(hanging, Generator) and isinstance(exiting, Generator)  # closing one stops its server
    try:
        pytester.makefile(".md", hangs=mcp_file(next(hanging), ADD, timeout=12))
        pytester.makefile(".md", exits=mcp_file(next(exiting), ADD))
        result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    finally:
        hanging.close()
        exiting.close()
    result.assert_outcomes(errors=1, failed=1)
    out = result.stdout.str()
    assert (
        "timeout: tools/call had no answer within 7 s (the session's deadline, 5 s before the timeout of 12 s); "
        "the request was cancelled" in out
    )
    assert "transport failure: the session with http://127.0.0.1:" in out
    assert "ended: RemoteProtocolError: Server disconnected without sending a response" in out
    assert alive(tag) == []


def test_mcpcall_a_transport_failure_is_the_steps_error_named_in_the_headline(
    pytester: pytest.Pytester, tag: str
) -> None:
    step = {
        "block": "McpCall",
        "input": {
            "command": [sys.executable, str(SERVER), "--mode", "exit", "--tag", tag],
            "tool": "add",
            "arguments": {"a": 1, "b": 2},
        },
        "output": "r",
    }
    spec = {
        "name": "f",
        "tests": [{"id": "exits", "pipeline": [step], "assertions": {"r.structured.result": 3}}],
    }
    pytester.makefile(".json", fails=json.dumps(spec))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*because the McpCall step * that writes 'r' failed: transport failure: the session with * ended: Connection closed*"
        ]
    )
    assert "MCP session" in result.stdout.str()  # the messages exchanged are still evidence
    assert alive(tag) == []


RAW_SERVER = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message["method"]
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "0"}}
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
        result = {"tools": [{"name": "add", "inputSchema": {"type": "object"}, "outputSchema": schema}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "forty-two"}], "structuredContent": {"result": "forty-two"}}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def test_a_result_against_the_tools_own_output_schema_is_an_invalid_result(pytester: pytest.Pytester) -> None:
    """A server written by hand (the SDK's servers check their own output) breaks its output schema."""
    pytester.makefile(".py", raw_server=RAW_SERVER)
    server = f"{sys.executable} {pytester.path / 'raw_server.py'}"
    for protocol in ("handshake", "auto"):
        text = mcp_file(server, ADD).replace("transport: mcp\n", f"transport: mcp\nprotocol: {protocol}\n")
        pytester.makefile(".md", **{f"raw_{protocol}": text})
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    assert (
        result.stdout.str().count("the server's answer is invalid (the MCP client rejected it): RuntimeError")
        >= 2
    )
