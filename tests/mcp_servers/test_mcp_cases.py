"""How an mcp compliance case and an McpCall step are read: every mistake is found at collection, named,
before any server starts."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_semantictest.blocks.mcp_call import config_problems
from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.compliance.compile import Settings, compile_document
from pytest_semantictest.formats.compliance.parse import parse_text
from pytest_semantictest.model import Suite
from tests.compliance.conftest import doc

CALL = '### 1. Add\n\n**Request:**\nMCP `tools/call`\n```json\n{"name": "add", "arguments": {"a": 1}}\n```\n'


def compiled(text: str, **settings: Any) -> Suite:
    return compile_document(parse_text(text, "t.md"), Settings(**settings))


def mcp_doc(case: str, **front: str) -> str:
    return doc(case, transport="mcp", **front)


def test_a_case_compiles_to_one_mcpcall_step() -> None:
    suite = compiled(mcp_doc(CALL, server="python server.py --stdio"))
    case = suite.cases[0]
    assert case.error is None
    (step,) = case.steps
    assert step.block == "McpRequest"
    assert step.config["command"] == ["python", "server.py", "--stdio"]
    assert step.config["params"] == {"name": "add", "arguments": {"a": 1}}
    assert step.config["protocol"] == "auto"


def test_the_environment_names_another_server() -> None:
    suite = compiled(
        mcp_doc(CALL, server="python server.py"), env={"COMPLIANCE_MCP_URL": "http://127.0.0.1:9/mcp"}
    )
    assert suite.cases[0].steps[0].config["url"] == "http://127.0.0.1:9/mcp"


def test_a_file_without_a_server_errors_naming_where_to_give_one() -> None:
    error = compiled(mcp_doc(CALL)).cases[0].error or ""
    assert "an mcp file needs its server" in error and "COMPLIANCE_MCP_URL" in error


def test_an_unset_variable_in_the_server_command_is_named() -> None:
    error = compiled(mcp_doc(CALL, server="${NO_SUCH_PY} server.py"), env={}).cases[0].error or ""
    assert "${NO_SUCH_PY}" in error and "not set" in error


@pytest.mark.parametrize(
    "case, problem",
    [
        (
            "### 1. X\n\n**Request:**\nMCP `tools/cal`\n",
            "unknown MCP method 'tools/cal' — did you mean 'tools/call'",
        ),
        ("### 1. X\n\n**Request:**\nPOST `tools/call`\n", "an mcp request line is MCP `<method>`"),
        ('### 1. X\n\n**Input:** User sends "hi" to `agent`\n', "an mcp case is written as a **Request:**"),
        ("### 1. X\n\n**Request:**\nMCP `tools/call`\n```json\n{}\n```\n", 'tools/call needs "name"'),
        ("### 1. X\n\n**Request:**\nMCP `tools/list`\n```json\n[1]\n```\n", "body is a JSON object"),
    ],
)
def test_mistakes_in_a_case_are_its_error(case: str, problem: str) -> None:
    error = compiled(mcp_doc(case, server="python s.py")).cases[0].error or ""
    assert problem in error and "t.md:" in error


def test_mcp_keys_belong_to_mcp_files() -> None:
    with pytest.raises(SpecError, match="server is for transport: mcp"):
        compiled(doc(CALL, transport="completions", server="python s.py"))
    with pytest.raises(SpecError, match="protocol"):
        compiled(mcp_doc(CALL, server="python s.py", protocol="2099-01-01"))
    error = compiled(doc(CALL, transport="a2a")).cases[0].error or ""
    assert "an MCP request line is for transport: mcp files" in error


@pytest.mark.parametrize(
    "config, problem",
    [
        ({}, "give the server as 'command'"),
        ({"command": "x", "url": "http://h"}, "one of them"),
        ({"url": "http://h", "method": "tool/call"}, "did you mean 'tools/call'"),
        ({"url": "http://h", "method": "tools/call"}, "needs the name"),
        ({"url": "http://h", "protocol": "v2"}, "protocol is one of"),
        ({"url": "http://h", "timeout": -1}, "milliseconds"),
        ({"url": "http://h", "arguments": [1]}, "'arguments' is a mapping"),
    ],
)
def test_mcpcall_config_problems(config: dict[str, object], problem: str) -> None:
    assert any(problem in why for _, why in config_problems(config)), config_problems(config)


def test_an_invalid_result_fails_even_where_an_error_is_expected() -> None:
    from pytest_semantictest.databus import DataBus
    from pytest_semantictest.formats.compliance.mcp import McpReplyCheck

    reply = {
        "transport": "mcp",
        "protocol_version": "2026-07-28",
        "method": "tools/call",
        "state": "failed",
        "error": {
            "kind": "invalid result",
            "message": "RuntimeError: Invalid structured content returned by tool add",
        },
        "timeline": [],
    }
    bus = DataBus()
    bus.set("observed", {"ok": True, "status": 0, "reply": reply})
    for expected in (None, "failure"):
        (failure,) = McpReplyCheck(expected).evaluate_sync(bus).failures
        assert (
            "the server's answer is invalid (the MCP client rejected it): RuntimeError: Invalid structured"
            in (failure.message)
        )
