"""McpCall: one request to an MCP server under test, over stdio or streamable HTTP (the ``mcp`` client).

Each step opens its own session (over stdio it starts the server and always stops it), sends one
request and closes. Keys, as ``input`` (resolved) or ``config`` (as written):

- the server: ``command`` (a string split like a shell's, or a list; run in ``cwd``, default the
  directory pytest was invoked from; ``env``: extra environment for it, the SDK passes a stdio server only a handful
  of variables) or ``url`` (streamable HTTP; ``headers`` sent with each request);
- ``method``: ``tools/list``, ``tools/call`` (the default when ``tool`` is given), ``resources/list``,
  ``resources/read``, ``resources/templates/list``, ``prompts/list``, ``prompts/get``, ``ping``;
  ``params``, or the shorthands ``tool``/``name``, ``arguments``, ``uri``;
- ``protocol``: ``auto`` (default), ``handshake`` (the ``initialize`` handshake, ``Mcp-Session-Id``)
  or ``2026-07-28`` (stateless);
- ``timeout``: milliseconds for the whole session (default 30000).

Output: the reply (:class:`.transports.mcp.McpRecord`): ``protocol_version``, ``session_id``,
``server_info``, ``result``, ``text``, ``structured``, ``is_error``, ``error`` (``kind``: ``tool
error``, ``JSON-RPC error``, ``transport failure``, ``timeout``), ``state``, lists' ``tools`` /
``tool_names`` / ``input_schemas`` ..., ``timeline``, ``http``, ``stderr``; plus ``ok`` (the session
ran to its end), ``failure`` and ``timed_out``. A compliance file's ``McpRequest`` (the same, internal)
gives the reply under ``reply`` in the shape the compliance checks read.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo

from ..evidence import Note, ToolCall, ToolCalls
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError
from .base import config_problems as model_problems
from .transports.mcp import METHODS, PROTOCOLS, McpFailure, McpRecord, run_session

if TYPE_CHECKING:
    from ..evidence import Evidence
    from ..run_context import SecretRegistry
    from ..step import StepContext

DEFAULT_TIMEOUT_MS = 30_000
STOP_RESERVE_MS = 5_000.0
_KEYS = (
    "command",
    "url",
    "env",
    "cwd",
    "headers",
    "method",
    "params",
    "tool",
    "name",
    "arguments",
    "uri",
    "protocol",
    "timeout",
)


def _command_line(command: JSONValue) -> JSONValue:
    if command is None or (isinstance(command, str) and command.strip()):
        return command
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        return command
    raise ValueError("'command' is a command line or a list of words")


def _known_method(method: JSONValue) -> JSONValue:
    if method is not None and method not in METHODS:
        from ..errors import did_you_mean

        raise ValueError(f"unknown MCP method {method!r}{did_you_mean(str(method), METHODS)}")
    return method


def _known_protocol(protocol: JSONValue) -> JSONValue:
    if protocol is not None and protocol not in PROTOCOLS:
        raise ValueError(f"protocol is one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    return protocol


def _mapping(value: JSONValue, info: ValidationInfo) -> JSONValue:
    if value is not None and not isinstance(value, Mapping):
        raise ValueError(f"'{info.field_name}' is a mapping")
    return value


def _milliseconds(timeout: JSONValue) -> JSONValue:
    if timeout is None or (
        isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 86_400_000
    ):
        return timeout
    raise ValueError("'timeout' is milliseconds, a number above 0")


class McpCallConfig(BaseModel):
    """An McpCall's keys as written (config or object input), in the order their problems are told."""

    model_config = ConfigDict(extra="allow", frozen=True)

    command: Annotated[JSONValue, BeforeValidator(_command_line)] = None
    method: Annotated[JSONValue, BeforeValidator(_known_method)] = None
    protocol: Annotated[JSONValue, BeforeValidator(_known_protocol)] = None
    env: Annotated[JSONValue, BeforeValidator(_mapping)] = None
    headers: Annotated[JSONValue, BeforeValidator(_mapping)] = None
    params: Annotated[JSONValue, BeforeValidator(_mapping)] = None
    arguments: Annotated[JSONValue, BeforeValidator(_mapping)] = None
    timeout: Annotated[JSONValue, BeforeValidator(_milliseconds)] = None
    url: JSONValue = None
    cwd: JSONValue = None
    tool: JSONValue = None
    name: JSONValue = None
    uri: JSONValue = None


def config_problems(config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
    """What is wrong with an McpCall as written (at collection, before any server starts): the
    server to reach, each key (the model's), the name a call needs."""
    problems: list[tuple[str, str]] = []
    if (config.get("command") is None) == (config.get("url") is None):
        problems.append(
            ("command", "give the server as 'command' (stdio) or 'url' (streamable HTTP), one of them")
        )
    problems += model_problems(McpCallConfig, config)
    if _method(config) in ("tools/call", "prompts/get") and not _params(config).get("name"):
        problems.append(("tool", f"{_method(config)} needs the name: 'tool' (or params.name)"))
    return problems


def _method(config: Mapping[str, JSONValue]) -> str:
    method = config.get("method")
    if isinstance(method, str):
        return method
    return "tools/call" if config.get("tool") is not None else "tools/list"


def _params(config: Mapping[str, JSONValue]) -> JSONObject:
    params = dict(config["params"]) if isinstance(config.get("params"), Mapping) else {}
    name = config.get("tool") or config.get("name")
    if name is not None:
        params.setdefault("name", name)
    if config.get("arguments") is not None:
        params.setdefault("arguments", config["arguments"])
    if config.get("uri") is not None:
        params.setdefault("uri", config["uri"])
    return params


class McpCall(Block):
    name = "McpCall"
    concurrency_safe = True  # each step has its own session (and its own server process over stdio)
    inputs = _KEYS
    input_keys = frozenset(_KEYS)
    config_model = McpCallConfig
    config_keys = frozenset(_KEYS)
    as_reply: ClassVar[bool] = False
    _failed_output: JSONObject | None = None
    outputs = ("ok", "protocol_version", "result", "text", "structured", "is_error", "error", "reply")

    @classmethod
    def validate_config(cls, config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        return config_problems(config) if config.get("command") or config.get("url") else []

    @classmethod
    def validate_input(cls, value: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        return config_problems(value) if value.get("command") or value.get("url") else []

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        given = {**self.config, **{k: v for k, v in inputs.items() if k in _KEYS}}
        problems = config_problems(given)
        if problems:
            return self._refused(given, problems)
        if ctx.run_context.redactor is not None:
            _learn_secrets(ctx.run_context.redactor, given)
        session = _Session.of(given)
        record = McpRecord(session.connection, session.server, _method(given), _params(given))
        failure: str | None = None
        timed_out = False
        try:
            async with asyncio.timeout(session.seconds):
                await session.run(record)
        except TimeoutError:
            timed_out = True
            failure = session.timeout_message(record.method)
        except McpFailure as exc:
            failure = str(exc)
        output = self._output(record, failure, timed_out, given)
        if failure is not None and not self.as_reply:  # the step's error: a check reading it names the cause
            self._failed_output = output
            raise BlockError(failure)
        return output

    def _refused(self, given: JSONObject, problems: list[tuple[str, str]]) -> JSONObject:
        """A call that cannot be made as given: the step's error, or a failed reply (``as_reply``)."""
        message = f"{self.name}: " + "; ".join(f"{key}: {why}" for key, why in problems)
        if not self.as_reply:
            raise BlockError(message)
        return self._output(McpRecord("", "", _method(given), {}), message, False, given)

    def _output(
        self, record: McpRecord, failure: str | None, timed_out: bool, given: JSONObject
    ) -> JSONObject:
        reply = record.as_reply()
        if failure is not None:
            kind = "timeout" if timed_out else "transport failure"
            reply["error"] = {"kind": kind, "message": failure}
            reply["state"] = "failed"
        request = {k: v for k, v in given.items() if k in ("command", "url", "method", "params", "protocol")}
        request.update(method=record.method, params=record.params)
        if not self.as_reply:
            return {
                **reply,
                "ok": failure is None,
                "failure": failure,
                "timed_out": timed_out,
                "request": request,
            }
        tool_calls: list[JSONValue] = []
        if record.method == "tools/call":
            tool_calls.append(
                {
                    "name": record.params.get("name"),
                    "arguments": record.params.get("arguments"),
                    "result": reply["result"],
                }
            )
        request = {"transport": "mcp", "method": "MCP", "url": record.method, "body": record.params}
        return {
            "ok": failure is None,
            "status": _status(record),
            "stream": False,
            "reply": reply,
            "content": reply["text"],
            "events": [],
            "tool_calls": tool_calls,
            "problem": None,
            "error": failure or (reply["error"] or {}).get("message"),
            "failure": failure,
            "timed_out": timed_out,
            "request": request,
            "url": record.server,
        }

    def error_output(self, inputs: JSONObject, message: str) -> JSONObject:
        """The session's reply as far as it went (its evidence shows), else the message alone."""
        return self._failed_output or {"ok": False, "status": 0, "error": message, "failure": message}

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The session as a Note (server, protocol version, session id, outcome, every message) and,
        for ``tools/call``, the call as a tool-call row."""
        out = trace.output
        if not isinstance(out, Mapping):
            return []
        reply = out.get("reply") if isinstance(out.get("reply"), Mapping) else out
        if not isinstance(reply, Mapping) or reply.get("transport") != "mcp":
            return []
        error = reply.get("error") if isinstance(reply.get("error"), Mapping) else None
        fields = _session_fields(reply, error)
        records: list[Evidence] = [
            Note("MCP session", fields, "\n".join(_session_lines(reply)) or "(no messages)")
        ]
        if reply.get("method") == "tools/call":
            records.append(ToolCalls([_tool_call(reply, error)], "MCP tools/call"))
        return records


def _learn_secrets(redactor: SecretRegistry, given: Mapping[str, JSONValue]) -> None:
    """Values sent in secret headers, or given in env under a secret's name, are secrets."""
    from ..redact import secret_name

    redactor.learn({"headers": dict(given.get("headers") or {})})
    env = dict(given.get("env") or {})
    redactor.add([str(v) for k, v in env.items() if secret_name(str(k))])


@dataclass(frozen=True)
class _Session:
    """Where an McpCall's session runs (a stdio server's command line, else a URL) and how long it may."""

    words: list[str]
    url: str
    given: Mapping[str, JSONValue]
    ms: float
    reserve: float
    """The session ends this long before the case's own timeout, so the cause is named: the time the SDK
    takes to abandon a request (a courtesy cancel, bounded at 5 s) and stop a stdio server that does not
    exit (stdin closed, 2 s, SIGTERM, 2 s, SIGKILL)."""

    @classmethod
    def of(cls, given: Mapping[str, JSONValue]) -> _Session:
        command = given.get("command")
        words = shlex.split(command) if isinstance(command, str) else [str(c) for c in command or []]
        timeout = given.get("timeout")
        ms = float(timeout) if isinstance(timeout, (int, float)) and timeout else float(DEFAULT_TIMEOUT_MS)
        return cls(words, str(given.get("url")), given, ms, min(STOP_RESERVE_MS, ms / 2))

    @property
    def connection(self) -> str:
        return "stdio" if self.words else "streamable-http"

    @property
    def server(self) -> str:
        return shlex.join(self.words) if self.words else self.url

    @property
    def seconds(self) -> float:
        return (self.ms - self.reserve) / 1000

    async def run(self, record: McpRecord) -> None:
        root = Path.cwd()  # where pytest was invoked, as for an agent's start and a compliance server
        cwd = self.given.get("cwd")
        await run_session(
            record,
            command=self.words or None,
            url=None if self.words else self.url,
            env=_strings(self.given.get("env")),
            cwd=str(root / str(cwd)) if cwd else str(root),
            headers=_strings(self.given.get("headers")),
            protocol=str(self.given.get("protocol") or "auto"),
            seconds=self.seconds,
        )

    def timeout_message(self, method: str) -> str:
        return (
            f"timeout: {method} had no answer within {self.seconds:g} s (the session's deadline, "
            f"{self.reserve / 1000:g} s before the timeout of {self.ms / 1000:g} s); "
            + ("the server was stopped" if self.words else "the request was cancelled")
        )


def _strings(mapping: JSONValue) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(mapping or {}).items()}


def _session_fields(reply: Mapping[str, JSONValue], error: Mapping[str, JSONValue] | None) -> JSONObject:
    """The session's facts that have a value: server, protocol version, session id, outcome, error."""
    fields = {
        key: reply.get(key)
        for key in ("connection", "server", "protocol_version", "session_id", "method", "state")
        if reply.get(key) not in (None, "")
    }
    if error is not None:
        fields["error"] = _error_text(error)
    return fields


def _error_text(error: Mapping[str, JSONValue]) -> str:
    """``kind: code message`` of a session's error (the kind once, when the message starts with it)."""
    said = f"{error.get('code')} {error.get('message')}" if "code" in error else str(error.get("message"))
    return said if said.startswith(str(error.get("kind"))) else f"{error.get('kind')}: {said}"


def _session_lines(reply: Mapping[str, JSONValue]) -> list[str]:
    """Every message of the session, its HTTP requests, and a failed server's last stderr lines."""
    lines = list(reply.get("timeline") or [])
    lines += [
        f"HTTP {h.get('method')} {h.get('status')} {h.get('headers') or ''}".rstrip()
        for h in reply.get("http") or []
    ]
    if reply.get("stderr") and reply.get("state") == "failed":  # what the server said of it
        lines.append("server stderr (last lines):\n" + str(reply["stderr"]).rstrip())
    return lines


def _tool_call(reply: Mapping[str, JSONValue], error: Mapping[str, JSONValue] | None) -> ToolCall:
    """A ``tools/call`` session as a tool-call row: its result, or the error's message."""
    found = reply.get("params")
    params: Mapping[str, JSONValue] = found if isinstance(found, Mapping) else {}
    result = reply.get("structured") if reply.get("structured") is not None else reply.get("text")
    return ToolCall(
        params.get("name"), params.get("arguments"), None if error else result, error and error.get("message")
    )


def _status(record: McpRecord) -> int:
    """The HTTP status of the request's answer on streamable HTTP (the last POST), else 0 over stdio
    (a JSON-RPC error under 2026-07-28 arrives with a 4xx)."""
    posts = [h for h in record.http if h.get("method") == "POST"]
    status = posts[-1].get("status") if posts else 0
    return status if isinstance(status, int) else 0


class McpRequest(McpCall):
    """A compliance file's MCP exchange (internal): its config is written by the compiler and reaches the
    block as written (a ``${...}`` in a tool's arguments is text to send), and its output is the reply in
    the shape the compliance checks read (``ok``, ``status``, ``reply``, ...)."""

    name = "McpRequest"
    resolve_config = False
    as_reply = True
