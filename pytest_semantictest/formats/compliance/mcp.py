"""What a ``transport: mcp`` case runs and checks first: one ``McpRequest`` step writing the ``observed``
slot (the reply, :mod:`pytest_semantictest.blocks.mcp_call`), then :class:`McpReplyCheck`.

A case's request is ``MCP `tools/call` `` (any method of ``METHODS``) with its params as the JSON
body. The server is the front matter's ``server`` (a ``http(s)://`` URL: streamable HTTP; anything
else: a command started over stdio in the directory pytest was invoked from), unless ``COMPLIANCE_MCP_URL`` or
``COMPLIANCE_MCP_COMMAND`` names another; ``protocol`` pins the protocol version.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ...blocks.transports.mcp import METHODS
from ...databus import DataBus
from ...errors import Problem, did_you_mean
from ...json_types import JSONObject, JSONValue
from ...model import CheckResult, Failure, Step
from ...resolve import ENV_VAR
from .models import Request, TestCase
from .transport import SLOT, SlotCheck


def server_of(front_server: str | list[str] | None, env: Mapping[str, str]) -> str | list[str] | None:
    """The server a file's cases reach: the environment beats the front matter."""
    return env.get("COMPLIANCE_MCP_URL") or env.get("COMPLIANCE_MCP_COMMAND") or front_server


def mcp_step(
    tc: TestCase,
    config: JSONObject | None,
    server: str | list[str] | None,
    protocol: str | None,
    env: Mapping[str, str],
    cwd: Path,
    where: str,
) -> tuple[Step | None, list[Problem], list[Problem]]:
    """The case's McpCall step, with the problems of its text and the configuration it misses."""
    if tc.request is None:
        line = tc.input.line if tc.input else tc.line
        problem = Problem(
            where,
            "an mcp case is written as a **Request:** like MCP `tools/call` with its params as a ```json "
            'body ({"name": "add", "arguments": {...}})',
            line,
        )
        return None, [problem], []
    request = tc.request
    body = (config or {}).get("body")
    params: JSONObject = dict(body) if isinstance(body, dict) else {}
    problems = _request_problems(request, body, params, where)
    missing: list[Problem] = []
    if server is None:
        missing.append(
            Problem(
                where,
                "an mcp file needs its server: write 'server:' in the front matter (a command, or an http:// URL), "
                "or set COMPLIANCE_MCP_URL or COMPLIANCE_MCP_COMMAND",
                request.line,
            )
        )
    if problems or missing or config is None or server is None:
        return None, problems, missing
    target, found = _server(server, env, where, request.line)
    missing.extend(found)
    step_config = _step_config(target, request.path, params, protocol, config, cwd)
    return Step("McpRequest", "request", None, step_config, SLOT, request.line, where), problems, missing


def _step_config(
    target: JSONObject, method: str, params: JSONObject, protocol: str | None, config: JSONObject, cwd: Path
) -> JSONObject:
    """The McpRequest step's config: the server, the call, and the request's timeout and headers (a
    command runs in ``cwd``)."""
    step_config: JSONObject = {
        **target,
        "method": method,
        "params": params,
        "protocol": protocol or "auto",
        "timeout": config.get("timeout"),
        "headers": config.get("headers") or {},
    }
    if "command" in target:
        step_config["cwd"] = str(cwd)
    return step_config


def _request_problems(request: Request, body: JSONValue, params: JSONObject, where: str) -> list[Problem]:
    """What is wrong with an mcp request as written: its request line, its body, a missing ``name``."""
    problems: list[Problem] = []
    method = request.path
    if request.method != "MCP":
        problems.append(
            Problem(
                where,
                f"an mcp request line is MCP `<method>`, like MCP `tools/call`, not {request.method}",
                request.line,
            )
        )
    elif method not in METHODS:
        problems.append(
            Problem(
                where,
                f"unknown MCP method {method!r}{did_you_mean(method, METHODS)} (methods: {', '.join(METHODS)})",
                request.line,
            )
        )
    if body is not None and not isinstance(body, dict):
        problems.append(
            Problem(where, "an mcp request's body is a JSON object: the method's params", request.body_line)
        )
    if method in ("tools/call", "prompts/get") and not params.get("name"):
        problems.append(
            Problem(where, f'{method} needs "name" in its params', request.body_line or request.line)
        )
    return problems


def _server(
    server: str | list[str], env: Mapping[str, str], where: str, line: int | None
) -> tuple[JSONObject, list[Problem]]:
    """``{"url": ...}`` or ``{"command": [...]}`` with ``${NAME}`` filled from the environment."""
    missing: list[Problem] = []

    def fill(text: str) -> str:
        def value(match: object) -> str:
            name = match.group(1)  # type: ignore[attr-defined]
            if env.get(name) is None:
                missing.append(
                    Problem(
                        where,
                        f"the server names ${{{name}}}, which is not set: set the environment variable {name}",
                        line,
                    )
                )
                return ""
            return env[name]

        return ENV_VAR.sub(value, text)

    if isinstance(server, str) and server.startswith(("http://", "https://")):
        return {"url": fill(server)}, missing
    words = shlex.split(server) if isinstance(server, str) else list(server)
    return {"command": [fill(w) for w in words]}, missing


@dataclass
class McpReplyCheck(SlotCheck):
    """The session ran, and ``**Expected:**`` holds.

    A server that could not be started or reached, or a deadline that passed, is an ERROR; a session
    that broke after it was established (the server exited or closed the connection) a FAILURE. Under
    ``**Expected:** failure`` the server must answer with a JSON-RPC error or a tool error
    (``isError``); otherwise either one fails the case, named.
    """

    def describe(self) -> str:
        return f"expected: {self.expected or 'an answer without error'}"

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        observed, reply = self.observed(bus)
        error = reply.get("error") if isinstance(reply.get("error"), dict) else None
        kind = error.get("kind") if error else None
        not_run = _not_run(observed, reply, kind)
        if not_run is not None:
            return CheckResult(error=not_run)
        if kind == "transport failure":
            failure = observed.get("failure") or observed.get("error")
            return self._fail("a session that ran to its end", str(failure), reply)
        if kind == "invalid result":  # never what "Expected: failure" means: the server broke its own schema
            return self._fail("a valid result", describe_error(error or {}), reply)
        if self.expected == "failure":
            return self._expected_error(kind, reply)
        if error is not None:
            return self._fail("an answer without error", describe_error(error), reply)
        return CheckResult()

    def _expected_error(self, kind: JSONValue, reply: JSONObject) -> CheckResult:
        """Under ``**Expected:** failure``: a JSON-RPC error or a tool error passes, an answer fails."""
        if kind in ("tool error", "JSON-RPC error"):
            return CheckResult()
        return self._fail(
            "an error (a JSON-RPC error or a result with isError)",
            f"the server answered {reply.get('method')} without an error but the case expects one",
            reply,
        )

    def _fail(self, expected: str, message: str, reply: JSONObject) -> CheckResult:
        lines = reply.get("timeline") or []
        events = "".join(f"\n    {line}" for line in lines) if isinstance(lines, list) and lines else "none"
        return CheckResult(
            [
                Failure(
                    f"expected: {self.expected or 'an answer without error'}",
                    message,
                    expected,
                    reply.get("error") or reply.get("state"),
                    None,
                    self.line,
                    {"protocol version": str(reply.get("protocol_version")), "messages": events},
                )
            ]
        )


def _not_run(observed: JSONObject, reply: JSONObject, kind: JSONValue) -> str | None:
    """Why the session never ran (the case's ERROR): a deadline passed, the server could not be started
    or reached, or the step gave no reply; None when it ran."""
    failure = observed.get("failure") or observed.get("error")
    if observed.get("timed_out") or (kind == "transport failure" and not reply.get("protocol_version")):
        return str(failure or "no session")
    if not reply:
        return str(failure or "the MCP request step gave no reply")
    return None


def describe_error(error: Mapping[str, JSONValue]) -> str:
    """``JSON-RPC error -32602: Unknown resource``, ``tool error (isError): division by zero``."""
    kind = error.get("kind")
    if kind == "JSON-RPC error":
        data = (
            f" (data: {json.dumps(error['data'], ensure_ascii=False)})"
            if error.get("data") is not None
            else ""
        )
        return f"the server answered with JSON-RPC error {error.get('code')}: {error.get('message')}{data}"
    if kind == "invalid result":
        return f"the server's answer is invalid (the MCP client rejected it): {error.get('message')}"
    if kind == "tool error":
        return f"the server answered with a tool error (isError: true): {error.get('message')}"
    return f"{kind}: {error.get('message')}"
