"""Sending one message to the agent the way highbar does, and reading its reply.

Request: ``request_method endpoint``, body ``request_body`` with placeholders resolved
structurally and sent as compact JSON (a string body goes as text/plain), headers from
the config then ``X-Highbar-Test: <test id>`` (always, replacing any). Reply: 2xx,
non-empty, at most 10 MB, whole body within ``timeout_ms``. Every failure is an
``AgentError`` that never quotes the request headers (they carry tokens).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from .config import AgentConfig
from .correlate import matches_correlate, new_test_id
from .errors import AgentError
from .placeholders import Values, render
from .replies import excerpt, parse_reply
from .traces import ToolCall

MAX_REPLY_BYTES = 10_000_000
TEST_HEADER = "X-Highbar-Test"

__all__ = ["MAX_REPLY_BYTES", "TEST_HEADER", "AgentReply", "build_request", "matches_correlate",
           "new_test_id", "send", "send_json"]


@dataclass(frozen=True)
class AgentReply:
    """What came back for one message."""

    text: str
    status: int
    raw: str
    data: Any  # parsed JSON, or None for a plain-text reply
    tool_calls: list[ToolCall] | None  # from the reply itself; None when it carries none
    test_id: str
    elapsed_ms: float


def build_request(cfg: AgentConfig, values: Values) -> tuple[dict[str, str], bytes]:
    """Headers and body bytes for one message. Raises ``AgentError`` (placeholders)."""
    headers: dict[str, str] = {}

    def put(name: str, value: Any) -> None:
        for existing in [key for key in headers if key.lower() == name.lower()]:
            del headers[existing]
        headers[name] = value if isinstance(value, str) else json.dumps(value)

    for name, value in render(dict(cfg.request_headers), values).items():
        put(str(name), value)
    session_headers = values.session.get("headers")
    if isinstance(session_headers, Mapping):  # a session setup may return headers (highbar)
        for name, value in session_headers.items():
            put(str(name), value)
    put(TEST_HEADER, values.test_id)
    body = render(cfg.request_body, values)
    if isinstance(body, str):
        headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        return headers, body.encode("utf-8")
    if not any(key.lower() == "content-type" for key in headers):
        headers["Content-Type"] = "application/json"
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return headers, data.encode("utf-8")


async def send(
    client: httpx.AsyncClient | None,
    cfg: AgentConfig,
    message: str,
    test_id: str,
    *,
    test_name: str = "",
    session: Mapping[str, Any] | None = None,
) -> AgentReply:
    """Send ``message`` as execution ``test_id``; the reply text and tool calls.

    ``client`` None: a client is made for this one request. Raises ``AgentError``.
    """
    try:
        return await _send(client, cfg, message, test_id, test_name, session or {})
    except AgentError as e:
        raise type(e)(cfg.mask(str(e))) from None


async def _send(
    client: httpx.AsyncClient | None, cfg: AgentConfig, message: str, test_id: str,
    test_name: str, session: Mapping[str, Any],
) -> AgentReply:
    values = Values(test_id=test_id, message=message, test_name=test_name, session=session)
    headers, body = build_request(cfg, values)
    return await _post(client, cfg, headers, body, test_id)


async def send_json(client: httpx.AsyncClient | None, cfg: AgentConfig, payload: Any, test_id: str) -> AgentReply:
    """POST ``payload`` as JSON (no placeholders: an OpenAI-style request) as execution ``test_id``.

    Headers: the config's, then ``X-Highbar-Test``; the reply is read like :func:`send`'s.
    Raises ``AgentError``.
    """
    headers = {str(k): str(v) for k, v in cfg.request_headers.items() if k.lower() != TEST_HEADER.lower()}
    headers[TEST_HEADER] = test_id
    if not any(key.lower() == "content-type" for key in headers):
        headers["Content-Type"] = "application/json"
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    try:
        return await _post(client, cfg, headers, body, test_id)
    except AgentError as e:
        raise type(e)(cfg.mask(str(e))) from None


async def _post(
    client: httpx.AsyncClient | None, cfg: AgentConfig, headers: dict[str, str], body: bytes, test_id: str
) -> AgentReply:
    seconds = cfg.timeout_ms / 1000
    started = time.perf_counter()
    own = client is None
    http = client or httpx.AsyncClient(trust_env=False)
    try:
        async with asyncio.timeout(seconds):
            raw, status, reply_headers = await _exchange(http, cfg, headers, body, seconds)
    except TimeoutError:
        raise AgentError(f"no response in {seconds:g}s (timeout)") from None
    except httpx.TimeoutException:
        raise AgentError(f"no response in {seconds:g}s (timeout)") from None
    except httpx.ConnectError as e:
        raise AgentError(f"cannot reach {cfg.endpoint}: {e}") from None
    except httpx.LocalProtocolError:
        raise AgentError(
            f"the request to {cfg.endpoint} could not be sent: a header value has a control character "
            "or leading or trailing whitespace; the value is not shown"
        ) from None
    except httpx.HTTPError as e:
        raise AgentError(f"request to {cfg.endpoint} failed: {type(e).__name__}: {e}") from None
    finally:
        if own:
            await http.aclose()
    elapsed = (time.perf_counter() - started) * 1000
    charset = _charset(reply_headers.get("content-type", ""))
    text = raw.decode(charset, errors="replace")
    if 300 <= status < 400:
        where = reply_headers.get("location", "an unnamed location")
        raise AgentError(f"HTTP {status} from {cfg.endpoint}: redirected to {where}; set the endpoint to that URL")
    if not 200 <= status < 300:
        raise AgentError(f"HTTP {status} from {cfg.endpoint}: {excerpt(text)}")
    if not raw.strip():
        raise AgentError(f"the agent replied with an empty body (HTTP {status})")
    content_type = reply_headers.get("content-type", "").split(";")[0].strip().lower()
    parsed = parse_reply(text, content_type, cfg.response_path)
    return AgentReply(parsed.text, status, text, parsed.data, parsed.tool_calls, test_id, elapsed)


async def _exchange(
    http: httpx.AsyncClient, cfg: AgentConfig, headers: dict[str, str], body: bytes, seconds: float
) -> tuple[bytes, int, httpx.Headers]:
    request = http.build_request(cfg.request_method, cfg.endpoint, headers=headers, content=body,
                                 timeout=seconds)
    response = await http.send(request, stream=True, follow_redirects=False)
    try:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_REPLY_BYTES:
            raise _too_large()
        data = bytearray()
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) > MAX_REPLY_BYTES:
                raise _too_large()
        return bytes(data), response.status_code, response.headers
    finally:
        await response.aclose()


def _too_large() -> AgentError:
    return AgentError(f"the reply is larger than {MAX_REPLY_BYTES // 1_000_000} MB; reading stopped there")


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            try:
                "".encode(value.strip('"'))
                return value.strip('"')
            except LookupError:
                break
    return "utf-8"
