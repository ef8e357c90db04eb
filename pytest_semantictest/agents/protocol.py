"""Sending one message to the agent the way highbar does, and reading its reply.

Request: ``request_method endpoint``, body ``request_body`` with placeholders resolved
structurally and sent as compact JSON (a string body goes as text/plain), headers from
the config then ``X-Highbar-Test: <test id>`` (always, replacing any). Reply: 2xx,
non-empty, at most 10 MB, whole body within ``timeout_ms``. Every failure is an
``AgentError`` that never quotes the request headers (they carry tokens). Both senders here
build an :class:`~.exchange.AgentRequest` and go through the one :func:`~.exchange.exchange`.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from ..json_types import JSONValue
from .config import AgentConfig
from .correlate import matches_correlate, new_test_id
from .errors import AgentError
from .exchange import MAX_REPLY_BYTES, TEST_HEADER, AgentReply, AgentRequest, exchange, json_bytes, set_header
from .placeholders import Values, render

__all__ = [
    "MAX_REPLY_BYTES",
    "TEST_HEADER",
    "AgentReply",
    "build_request",
    "matches_correlate",
    "new_test_id",
    "send",
    "send_json",
]


def build_request(cfg: AgentConfig, values: Values) -> tuple[dict[str, str], bytes]:
    """Headers and body bytes for one message. Raises ``AgentError`` (placeholders)."""
    headers: dict[str, str] = {}
    for name, value in render(dict(cfg.request_headers), values).items():
        set_header(headers, str(name), value)
    session_headers = values.session.get("headers")
    if isinstance(session_headers, Mapping):  # a session setup may return headers (highbar)
        for name, value in session_headers.items():
            set_header(headers, str(name), value)
    set_header(headers, TEST_HEADER, values.test_id)
    body = render(cfg.request_body, values)
    if isinstance(body, str):
        headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        return headers, body.encode("utf-8")
    if not any(key.lower() == "content-type" for key in headers):
        headers["Content-Type"] = "application/json"
    return headers, json_bytes(body)


async def send(
    client: httpx.AsyncClient | None,
    cfg: AgentConfig,
    message: str,
    test_id: str,
    *,
    test_name: str = "",
    session: Mapping[str, JSONValue] | None = None,
) -> AgentReply:
    """Send ``message`` as execution ``test_id``; the reply text and tool calls.

    ``client`` None: a client is made for this one request. Raises ``AgentError``.
    """
    try:
        return await _send(client, cfg, message, test_id, test_name, session or {})
    except AgentError as e:
        raise type(e)(cfg.redactor.text(str(e))) from None


async def _send(
    client: httpx.AsyncClient | None,
    cfg: AgentConfig,
    message: str,
    test_id: str,
    test_name: str,
    session: Mapping[str, JSONValue],
) -> AgentReply:
    values = Values(test_id=test_id, message=message, test_name=test_name, session=session)
    headers, body = build_request(cfg, values)
    return (await exchange(client, agent_request(cfg, headers, body, test_id))).checked()


async def send_json(
    client: httpx.AsyncClient | None, cfg: AgentConfig, payload: JSONValue, test_id: str
) -> AgentReply:
    """POST ``payload`` as JSON (no placeholders: an OpenAI-style request) as execution ``test_id``.

    Headers: the config's, then ``X-Highbar-Test``; the reply is read as the protocol's: its text is
    ``choices[0].message.content`` (``replies.parse_reply`` with ``openai``), whatever else it holds.
    Raises ``AgentError``.
    """
    headers = {str(k): str(v) for k, v in cfg.request_headers.items() if k.lower() != TEST_HEADER.lower()}
    headers[TEST_HEADER] = test_id
    if not any(key.lower() == "content-type" for key in headers):
        headers["Content-Type"] = "application/json"
    request = agent_request(cfg, headers, json_bytes(payload), test_id, openai=True)
    return (await exchange(client, request)).checked()


def agent_request(
    cfg: AgentConfig, headers: dict[str, str], body: bytes, test_id: str, *, openai: bool = False
) -> AgentRequest:
    """The request to ``cfg``'s endpoint: its method, timeout, response path and secret masking
    (``openai``: the reply is read as an OpenAI chat completion only)."""
    return AgentRequest(
        cfg.request_method,
        cfg.endpoint,
        headers,
        body,
        test_id,
        cfg.timeout_ms,
        cfg.response_path,
        cfg.redactor,
        openai,
    )
