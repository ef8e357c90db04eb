"""The MCP transport against servers on both SDK majors, over stdio and streamable HTTP, and the protocol
version each session used: the 2.x SDK's server speaks 2026-07-28 (stateless, no initialize), the 1.x
SDK's (``SEMANTICTEST_PARTNER_PYTHON``) only the initialize handshake with ``Mcp-Session-Id``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from tests.helpers import run_pytest
from tests.mcp_servers.conftest import SERVER, alive, serve_http

pytest_plugins = ["pytester"]

CALL = '**Request:**\nMCP `tools/call`\n```json\n{"name": "add", "arguments": {"a": 40, "b": 2}}\n```\n'


def md(server: str, strict: str, protocol: str | None = None) -> str:
    pinned = f"protocol: {protocol}\n" if protocol else ""
    return (
        f"---\nname: partner\nversion: 1.0\ntransport: mcp\nserver: {server}\n{pinned}timeout: 30\n---\n\n"
        f"## Test Cases\n\n### 1. Add\n\n{CALL}\n**Strict:**\n```yaml\nreply:\n{strict}```\n"
    )


@pytest.fixture(scope="module")
def partner_http(partner_python: str) -> Iterator[str]:
    """The 1.x SDK's server over HTTP, shared by the module's tests as ``http_server`` is: each test's
    client opens its own session (or is refused one) and the tools keep no state."""
    yield from serve_http(partner_python)


def test_a_1x_server_over_stdio_uses_the_handshake(
    pytester: pytest.Pytester, partner_python: str, tag: str
) -> None:
    strict = '  protocol_version: "2025-11-25"\n  server_info.version: /^1\\./\n  structured.result: 42\n'
    pytester.makefile(".md", partner=md(f"{partner_python} {SERVER} --tag {tag}", strict))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert alive(tag) == []


def test_a_1x_server_over_http_gives_a_session_id(pytester: pytest.Pytester, partner_http: str) -> None:
    strict = '  protocol_version: "2025-11-25"\n  session_id: /^[0-9a-f]{16,}$/\n  text: "42"\n'
    pytester.makefile(".md", partner=md(partner_http, strict))
    run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_1x_server_refuses_the_stateless_protocol_as_a_json_rpc_error(
    pytester: pytest.Pytester, partner_http: str
) -> None:
    pytester.makefile(".md", partner=md(partner_http, "  structured.result: 42\n", protocol="2026-07-28"))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*the server answered with JSON-RPC error -32600: Bad Request: Missing session ID*"]
    )


def test_a_2x_server_over_http_speaks_2026_07_28(pytester: pytest.Pytester, http_server: str) -> None:
    strict = '  protocol_version: "2026-07-28"\n  session_id: null\n  structured.result: 42\n'
    pytester.makefile(".md", partner=md(http_server, strict))
    run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_2x_server_under_the_handshake(pytester: pytest.Pytester, http_server: str) -> None:
    strict = (
        '  protocol_version: "2025-11-25"\n  session_id: not_null\n  http[0].headers.mcp-session-id: exists\n'
    )
    pytester.makefile(".md", partner=md(http_server, strict, protocol="handshake"))
    run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_json_rpc_error_arrives_with_http_400_under_2026_07_28(
    pytester: pytest.Pytester, http_server: str
) -> None:
    case = (
        "---\nname: e\nversion: 1.0\ntransport: mcp\nserver: " + http_server + "\n---\n\n## Test Cases\n\n"
        '### 1. Missing\n\n**Request:**\nMCP `resources/read`\n```json\n{"uri": "notes://missing"}\n```\n\n'
        "**Expected:** failure\n\n**Strict:**\n```yaml\nstatus: 400\nreply:\n  error.code: -32602\n```\n"
    )
    pytester.makefile(".md", e=case)
    run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_mcpcall_reports_the_session_in_the_evidence(pytester: pytest.Pytester, http_server: str) -> None:
    spec = {
        "name": "evidence",
        "tests": [
            {
                "id": "call",
                "pipeline": [
                    {
                        "block": "McpCall",
                        "input": {"url": http_server, "tool": "add", "arguments": {"a": 1, "b": 1}},
                        "output": "r",
                    }
                ],
                "assertions": {"r.structured.result": 3},
            }
        ],
    }
    pytester.makefile(".json", evidence=json.dumps(spec))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    for shown in (
        "MCP session",
        "protocol_version: 2026-07-28",
        "method: tools/call",
        '"name": "add"',
        "HTTP POST 200",
    ):
        assert shown in out, shown
    assert sys.executable  # the server ran in this interpreter's environment


def test_the_compliance_server_option_starts_an_http_mcp_server(pytester: pytest.Pytester, tag: str) -> None:
    from tests.ports import free_port

    port = free_port()
    strict = '  protocol_version: "2026-07-28"\n  structured.result: 42\n'
    pytester.makefile(".md", started=md(f"http://127.0.0.1:{port}/mcp", strict))
    start = f"--semantictest-compliance-server={sys.executable} {SERVER} --http --port {port} --tag {tag}"
    run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider", start).assert_outcomes(passed=1)
    assert alive(tag) == []
