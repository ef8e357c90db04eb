"""One MCP session with a server under test, on the official ``mcp`` client, read into one reply.

The server is reached over stdio (we start its command; the SDK's transport stops it, stdin closed,
then SIGTERM and SIGKILL to its process group) or streamable HTTP (a URL). The protocol version is
the client's to negotiate (``auto``: the 2026-07-28 stateless protocol when the server offers it,
else the ``initialize`` handshake), or pinned (``handshake``, or a version such as ``2026-07-28``).

Everything the session did is recorded as it passed: each JSON-RPC message sent and received (a tap
on the transport's streams), each HTTP request's status and MCP headers (``Mcp-Session-Id``,
``MCP-Protocol-Version``), the server's stderr (stdio). Outcomes are named by kind, never a traceback:

- ``tool error``: a ``tools/call`` result with ``isError: true`` (the server ran and said no);
- ``JSON-RPC error``: an error response the server sent (``code``, ``message``, ``data``; on
  streamable HTTP under 2026-07-28 it arrives with an HTTP 4xx);
- ``invalid result``: an answer the client rejects (structured content that does not match the tool's
  output schema, a result of the wrong shape);
- ``transport failure``: the connection ended, the server exited, or it could not be started or
  reached (the SDK reports these as its own error -32000 or as an exception group at close);
- ``timeout``: no answer before the deadline (the process is still stopped).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from ...json_types import JSONObject, JSONValue

METHODS = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "ping",
)
PROTOCOLS = ("auto", "handshake", "2026-07-28")
STDERR_TAIL = 2000
_SYNTHESIZED = (-32000, -32001)
"""Codes the SDK's client raises of its own (connection closed, request timeout): transport failures,
unless the server really sent such an error (the tap saw it)."""


@dataclass
class McpRecord:
    """What one session did, as plain data (the reply the checks read)."""

    connection: str
    server: str
    method: str
    params: JSONObject
    protocol_version: str | None = None
    session_id: str | None = None
    server_info: JSONObject | None = None
    result: JSONObject | None = None
    error: JSONObject | None = None
    messages: list[JSONObject] = field(default_factory=list)
    http: list[JSONObject] = field(default_factory=list)
    stderr: str = ""

    def saw_error(self, code: int) -> bool:
        return any(
            m["direction"] == "received" and (m["message"].get("error") or {}).get("code") == code
            for m in self.messages
            if isinstance(m.get("message"), dict)
        )

    def as_reply(self) -> JSONObject:
        result = self.result or {}
        found = result.get("content")
        content: list[Any] = found if isinstance(found, list) else []
        texts = _content_texts(content) + _resource_texts(result) + _prompt_texts(result)
        text = "\n".join(t for t in texts if t)
        is_error = result.get("isError") is True
        error = self.error
        if is_error and error is None:
            error = {"kind": "tool error", "message": text or "(no text)"}
        reply: JSONObject = {
            "transport": "mcp",
            "connection": self.connection,
            "server": self.server,
            "protocol_version": self.protocol_version,
            "session_id": self.session_id,
            "server_info": self.server_info,
            "method": self.method,
            "params": self.params,
            "result": self.result,
            "content": content,
            "text": text,
            "structured": result.get("structuredContent"),
            "is_error": is_error,
            "error": error,
            "state": _state(error, self.result),
            "http": self.http,
            "stderr": self.stderr,
            "timeline": [_line(m) for m in self.messages],
        }
        reply.update(_listings(result))
        return reply


def _content_texts(content: list[Any]) -> list[Any]:
    """The text parts of a ``tools/call`` result's content."""
    return [c.get("text") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]


def _resource_texts(result: JSONObject) -> list[Any]:
    """The texts of a ``resources/read`` result's contents."""
    contents = result.get("contents")
    if not isinstance(contents, list):
        return []
    return [c.get("text") for c in contents if isinstance(c, dict) and c.get("text")]


def _prompt_texts(result: JSONObject) -> list[Any]:
    """The text of each message of a ``prompts/get`` result."""
    texts = []
    for message in result.get("messages") or []:
        inner = message.get("content") if isinstance(message, dict) else None
        if isinstance(inner, dict) and isinstance(inner.get("text"), str):
            texts.append(inner["text"])
    return texts


def _state(error: JSONObject | None, result: JSONObject | None) -> str | None:
    """``failed`` on an error, ``completed`` on a result, else nothing yet."""
    if error is not None:
        return "failed"
    return "completed" if result is not None else None


_LISTINGS = (
    ("tools", "name", "tool_names"),
    ("resources", "uri", "resource_uris"),
    ("prompts", "name", "prompt_names"),
)


def _listings(result: JSONObject) -> JSONObject:
    """A list result's items with their names (or URIs), and the tools' input and output schemas."""
    found: JSONObject = {}
    for key, name_key, names in _LISTINGS:
        items = result.get(key)
        if isinstance(items, list):
            found[key] = items
            found[names] = [item.get(name_key) for item in items if isinstance(item, dict)]
    tools = result.get("tools")
    if isinstance(tools, list):
        found["input_schemas"] = {t.get("name"): t.get("inputSchema") for t in tools}
        found["output_schemas"] = {t.get("name"): t.get("outputSchema") for t in tools}
    return found


def _line(entry: JSONObject) -> str:
    arrow = "->" if entry.get("direction") == "sent" else "<-"
    text = json.dumps(entry.get("message"), ensure_ascii=False, sort_keys=True)
    return f"{arrow} {text if len(text) <= 400 else text[:400] + ' ...'}"


class _Tap:
    """A transport's stream, passed through, each JSON-RPC message recorded on its way."""

    def __init__(self, inner: Any, direction: str, record: McpRecord) -> None:
        self._inner, self._direction, self._record = inner, direction, record

    def _note(self, item: object) -> None:
        message = getattr(item, "message", None)
        if message is not None and hasattr(message, "model_dump"):
            dumped = message.model_dump(by_alias=True, mode="json", exclude_unset=True)
            self._record.messages.append({"direction": self._direction, "message": dumped})

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._note(item)
        return item

    async def send(self, item: Any) -> None:
        self._note(item)
        await self._inner.send(item)

    def __aiter__(self) -> _Tap:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        self._inner.close()

    async def __aenter__(self) -> _Tap:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


class _Recording:
    """A ``Transport`` around the SDK's own, whose streams are tapped."""

    def __init__(self, inner: Any, record: McpRecord) -> None:
        self._inner, self._record = inner, record

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        return _Tap(read, "received", self._record), _Tap(write, "sent", self._record)

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


def _http_hooks(record: McpRecord) -> dict[str, list[Any]]:
    async def response(resp: Any) -> None:
        req = resp.request
        headers = {
            k: v for k, v in resp.headers.items() if k.lower() in ("mcp-session-id", "mcp-protocol-version")
        }
        sent = {
            k: v for k, v in req.headers.items() if k.lower() in ("mcp-session-id", "mcp-protocol-version")
        }
        record.http.append(
            {
                "method": req.method,
                "url": str(req.url),
                "status": resp.status_code,
                "request_headers": sent,
                "headers": headers,
            }
        )
        if headers.get("mcp-session-id") or headers.get("Mcp-Session-Id"):
            record.session_id = next(v for k, v in headers.items() if k.lower() == "mcp-session-id")

    return {"request": [], "response": [response]}


async def _call(client: Any, method: str, params: Mapping[str, Any]) -> Any:
    if method == "tools/list":
        return await client.list_tools()
    if method == "tools/call":
        return await client.call_tool(str(params.get("name", "")), params.get("arguments"))
    if method == "resources/list":
        return await client.list_resources()
    if method == "resources/templates/list":
        return await client.list_resource_templates()
    if method == "resources/read":
        return await client.read_resource(str(params.get("uri", "")))
    if method == "prompts/list":
        return await client.list_prompts()
    if method == "prompts/get":
        return await client.get_prompt(str(params.get("name", "")), params.get("arguments"))
    return await client.send_ping()


async def run_session(
    record: McpRecord,
    *,
    command: list[str] | None,
    url: str | None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    headers: Mapping[str, str] | None = None,
    protocol: str = "auto",
    seconds: float = 60.0,
) -> None:
    """Open a session, send ``record.method`` with ``record.params``, keep what came back in ``record``.

    Raises ``McpFailure`` (a transport failure, named) and ``TimeoutError``; a JSON-RPC error the
    server sent is kept in ``record.error``, not raised."""
    from mcp import Client, MCPError

    mode = "legacy" if protocol == "handshake" else protocol
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with AsyncExitStack() as stack:
                if command is not None:
                    inner = _stdio(command, env, cwd, errlog)
                else:
                    inner = await _streamable_http(stack, str(url), headers, record)
                client = Client(
                    _Recording(inner, record), mode=mode, cache=None, read_timeout_seconds=seconds
                )
                await stack.enter_async_context(client)
                record.protocol_version = client.protocol_version
                info = client.server_info
                record.server_info = info.model_dump(mode="json", exclude_none=True) if info else None
                await _ask(client, record, errlog)
        except McpFailure:
            raise
        except MCPError as exc:  # the connection itself (the probe, the handshake) failed
            _keep_error(exc, record, errlog)
        except TimeoutError:
            raise
        except BaseException as exc:  # an exception group at close, an OSError, httpx2's errors: named
            if _cancelled(exc):  # the deadline's cancellation, or an interrupt: not ours to name
                raise
            named = _leaves(exc)
            if not named.startswith("transport failure"):
                named = _closed(named, record, errlog)
            raise McpFailure(named) from None
        finally:
            record.stderr = _tail(errlog)


def _stdio(command: list[str], env: Mapping[str, str] | None, cwd: str | None, errlog: Any) -> Any:
    """The SDK's stdio transport to the server ``command`` starts, its stderr into ``errlog``."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(env or {}), cwd=cwd)
    return stdio_client(params, errlog=errlog)


async def _streamable_http(
    stack: AsyncExitStack, url: str, headers: Mapping[str, str] | None, record: McpRecord
) -> Any:
    """The SDK's streamable HTTP transport to ``url``, each response's MCP headers recorded."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers=dict(headers or {}))
    http.event_hooks = _http_hooks(record)
    await stack.enter_async_context(http)
    return streamable_http_client(url, http_client=http)


async def _ask(client: Any, record: McpRecord, errlog: Any) -> None:
    """Send the record's request; keep its result, or the error the server sent or the client found."""
    from mcp import MCPError

    try:
        result = await _call(client, record.method, record.params)
    except MCPError as exc:
        _keep_error(exc, record, errlog)
        return
    except (RuntimeError, ValueError) as exc:  # the client's own checks of the answer
        # (structured content against the tool's output schema, the result's shape)
        record.error = {"kind": "invalid result", "message": f"{type(exc).__name__}: {exc}"}
        return
    record.result = result.model_dump(by_alias=True, mode="json", exclude_none=True)


def _keep_error(exc: Any, record: McpRecord, errlog: Any) -> None:
    """Keep a JSON-RPC error the server sent; one the SDK made up for a lost connection is a failure."""
    if exc.code in _SYNTHESIZED and not record.saw_error(exc.code):
        raise McpFailure(_closed(exc.message, record, errlog)) from None
    record.error = {"kind": "JSON-RPC error", **exc.error.model_dump(mode="json", exclude_none=True)}


class McpFailure(Exception):
    """A transport failure: what ended the session, in one line."""


def _cancelled(exc: BaseException) -> bool:
    """A cancellation or an interrupt, alone or inside an exception group."""
    if isinstance(exc, BaseExceptionGroup):
        return any(_cancelled(inner) for inner in exc.exceptions)
    return not isinstance(exc, Exception)


def _leaves(exc: BaseException) -> str:
    """An exception (group) as the distinct messages of its leaves: ``ConnectError: ...``."""
    found: list[str] = []

    def walk(e: BaseException) -> None:
        if isinstance(e, McpFailure):  # already named
            found.append(str(e))
            return
        if isinstance(e, BaseExceptionGroup):
            for inner in e.exceptions:
                walk(inner)
            return
        text = f"{type(e).__name__}: {e}".rstrip(": ")
        if text not in found:
            found.append(text)

    walk(exc)
    return "; ".join(found) or type(exc).__name__


def _closed(why: str, record: McpRecord, errlog: Any) -> str:
    """The failure in one line; over stdio with the last line the server wrote to its stderr."""
    last = [line for line in _tail(errlog).splitlines() if line.strip()]
    said = f"; its stderr ends: {last[-1].strip()[:300]!r}" if last else ""
    return f"transport failure: the session with {record.server} ended: {why}{said}"


def _tail(errlog: Any) -> str:
    try:
        errlog.flush()
        errlog.seek(0)
        text: str = errlog.read()
    except (OSError, ValueError):
        return ""
    return text[-STDERR_TAIL:]


def jsonable(value: object) -> JSONValue:
    return json.loads(json.dumps(value, default=str))
