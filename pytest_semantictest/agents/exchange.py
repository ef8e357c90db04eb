"""The one agent exchange: a request sent to an agent endpoint, its reply read and parsed.

Every message to an agent under test goes through :func:`exchange`: highbar messages
(:func:`~pytest_semantictest.agents.protocol.send`, also through ``LiveAgent.turn`` for AgentTurn)
and OpenAI-style chat requests (:func:`~pytest_semantictest.agents.protocol.send_json`, for the
conversation blocks through :func:`~pytest_semantictest.agents.chat.send_chat`). An
:class:`AgentRequest` says what to send (method, URL, headers with the ``X-Highbar-Test`` test id the
agent's trace records carry, body bytes), the deadline for the whole exchange (connect to last
byte), the reply's ``response_path`` and how to mask secrets in messages. The reply is an
:class:`AgentReply`: status (0: no response), headers, raw body, parsed text and data, tool calls
the reply carries, duration and ``error`` (why the exchange failed; :meth:`AgentReply.checked`
raises it as ``AgentError``). Reply rules are highbar's: no redirects, 2xx, non-empty, at most
10 MB; the text rules are :func:`~pytest_semantictest.agents.replies.parse_reply`'s.

:func:`send_within` is the HTTP layer under it, shared with the HTTP blocks: send a request and
read its reply inside one :class:`~pytest_semantictest.deadline.Deadline`. A mutation run
(``docs/mutation.md``) records and replays every reply here, through :func:`set_interceptor`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import httpx

from ..deadline import Deadline
from ..http_clients import async_client
from ..json_types import JSONValue
from ..redact import Redactor
from .errors import AgentError
from .replies import excerpt, openai_reply, parse_reply
from .traces import ToolCall

MAX_REPLY_BYTES = 10_000_000
TEST_HEADER = "X-Highbar-Test"

T = TypeVar("T")


class Send(Protocol):
    """``send_within``'s own signature: what an interceptor is given to reach the network."""

    def __call__(
        self,
        deadline: Deadline,
        http: httpx.AsyncClient,
        request: httpx.Request,
        read: Callable[[httpx.Response], Awaitable[T]],
        *,
        follow_redirects: bool,
        phase: str,
    ) -> Awaitable[tuple[httpx.Response, T]]: ...


class Interceptor(Protocol):
    """``(send, deadline, http, request, read, follow_redirects=..., phase=...)``: records or replays."""

    def __call__(
        self,
        send: Send,
        deadline: Deadline,
        http: httpx.AsyncClient,
        request: httpx.Request,
        read: Callable[[httpx.Response], Awaitable[T]],
        *,
        follow_redirects: bool,
        phase: str,
    ) -> Awaitable[tuple[httpx.Response, T]]: ...


_interceptor: list[Interceptor] = []


def replaying() -> bool:
    """A mutation run is answering from recorded replies (an interceptor with ``replays`` set): no
    agent is reached, so nothing is worth waiting for (highbar's settle time)."""
    return bool(_interceptor) and bool(getattr(_interceptor[0], "replays", False))


def set_interceptor(interceptor: Interceptor | None) -> None:
    """Route every :func:`send_within` through ``interceptor`` (None: straight to the network)."""
    _interceptor[:] = [interceptor] if interceptor is not None else []


@dataclass(frozen=True)
class AgentRequest:
    """One request to an agent endpoint, ready to send."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    test_id: str
    """The execution id, sent as ``X-Highbar-Test`` (the agent tags its trace records with it)."""
    timeout_ms: float = 60000
    """The deadline for the whole exchange, connect to last byte."""
    response_path: str | None = None
    """Where the reply text is in a JSON reply (None: highbar's implicit keys)."""
    redactor: Redactor | None = None
    """Masks the secrets the agent config holds in every message the exchange gives (None: nothing to mask)."""
    openai: bool = False
    """The reply is an OpenAI chat completion: its text is ``choices[0].message.content`` only, never a
    key highbar's agents answer with (``replies.openai_reply``, not ``parse_reply``)."""

    def shown(self, message: str) -> str:
        """``message`` as the exchange gives it: the config's secrets masked."""
        return self.redactor.text(message) if self.redactor is not None else message


@dataclass(frozen=True)
class AgentReply:
    """What came back for one request; ``error`` set when the exchange failed."""

    text: str
    status: int  # 0: no (complete) response
    raw: str  # the body as text
    data: JSONValue  # parsed JSON, or None for a plain-text reply
    tool_calls: list[ToolCall] | None  # from the reply itself; None when it carries none
    test_id: str
    elapsed_ms: float
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    def checked(self) -> AgentReply:
        """This reply, or ``AgentError`` saying why the exchange failed."""
        if self.error is not None:
            raise AgentError(self.error)
        return self


def set_header(headers: dict[str, str], name: str, value: JSONValue) -> None:
    """Set ``name`` (replacing any spelling of it); a non-string value is sent as JSON."""
    for existing in [key for key in headers if key.lower() == name.lower()]:
        del headers[existing]
    headers[name] = value if isinstance(value, str) else json.dumps(value)


def json_bytes(value: JSONValue) -> bytes:
    """``value`` as compact JSON bytes, the way agent requests are sent."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


async def send_within(
    deadline: Deadline,
    http: httpx.AsyncClient,
    request: httpx.Request,
    read: Callable[[httpx.Response], Awaitable[T]],
    *,
    follow_redirects: bool,
    phase: str = "reading the response body",
) -> tuple[httpx.Response, T]:
    """Send ``request`` and ``read`` its reply, all inside ``deadline``; the response is always
    closed (a reply not read to its end closes the connection). Raises what httpx raises and
    ``DeadlineExceeded``."""
    if _interceptor:
        sent: tuple[httpx.Response, T] = await _interceptor[0](
            _send_live, deadline, http, request, read, follow_redirects=follow_redirects, phase=phase
        )
        return sent
    return await _send_live(deadline, http, request, read, follow_redirects=follow_redirects, phase=phase)


async def _send_live(
    deadline: Deadline,
    http: httpx.AsyncClient,
    request: httpx.Request,
    read: Callable[[httpx.Response], Awaitable[T]],
    *,
    follow_redirects: bool,
    phase: str,
) -> tuple[httpx.Response, T]:
    async with deadline:
        response = await http.send(request, stream=True, follow_redirects=follow_redirects)
        try:
            deadline.reading(response, phase)
            return response, await read(response)
        finally:
            await response.aclose()


async def exchange(client: httpx.AsyncClient | None, request: AgentRequest) -> AgentReply:
    """Send ``request`` and read the reply; a failed exchange is a reply with ``error`` set.

    ``client`` None: a client is made for this one request.
    """
    started = time.perf_counter()
    try:
        status, headers, raw = await _transfer(client, request)
    except AgentError as e:
        return _failed(request, started, str(e))
    elapsed = (time.perf_counter() - started) * 1000
    text = raw.decode(_charset(headers.get("content-type", "")), errors="replace")
    kept = {k.lower(): v for k, v in headers.items()}
    try:
        _check_status(status, headers, raw, text, request.url)
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        parsed = openai_reply(text) if request.openai else parse_reply(text, media, request.response_path)
    except AgentError as e:
        return AgentReply("", status, text, None, None, request.test_id, elapsed, kept, request.shown(str(e)))
    return AgentReply(
        parsed.text, status, text, parsed.data, parsed.tool_calls, request.test_id, elapsed, kept
    )


def _failed(request: AgentRequest, started: float, message: str) -> AgentReply:
    elapsed = (time.perf_counter() - started) * 1000
    return AgentReply("", 0, "", None, None, request.test_id, elapsed, {}, request.shown(message))


async def _transfer(
    client: httpx.AsyncClient | None, request: AgentRequest
) -> tuple[int, httpx.Headers, bytes]:
    """Status, headers and body bytes; ``AgentError`` when no complete reply came."""
    seconds = request.timeout_ms / 1000
    own = client is None
    http = client or async_client()
    try:
        sent = http.build_request(
            request.method, request.url, headers=request.headers, content=request.body, timeout=seconds
        )
        response, data = await send_within(
            Deadline(request.timeout_ms, f"{request.method} {request.url}"),
            http,
            sent,
            _bounded,
            follow_redirects=False,
        )
    except (TimeoutError, httpx.TimeoutException):
        raise AgentError(f"no response in {seconds:g}s (timeout)") from None
    except httpx.ConnectError as e:
        raise AgentError(f"cannot reach {request.url}: {e}") from None
    except httpx.LocalProtocolError:
        raise AgentError(
            f"the request to {request.url} could not be sent: a header value has a control character "
            "or leading or trailing whitespace; the value is not shown"
        ) from None
    except httpx.HTTPError as e:
        raise AgentError(f"request to {request.url} failed: {type(e).__name__}: {e}") from None
    finally:
        if own:
            await http.aclose()
    return response.status_code, response.headers, data


async def _bounded(response: httpx.Response) -> bytes:
    """The whole body, or ``AgentError`` once it is larger than :data:`MAX_REPLY_BYTES`."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REPLY_BYTES:
        raise _too_large()
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > MAX_REPLY_BYTES:
            raise _too_large()
    return bytes(data)


def _check_status(status: int, headers: Mapping[str, str], raw: bytes, text: str, url: str) -> None:
    if 300 <= status < 400:
        where = headers.get("location", "an unnamed location")
        raise AgentError(f"HTTP {status} from {url}: redirected to {where}; set the endpoint to that URL")
    if not 200 <= status < 300:
        raise AgentError(f"HTTP {status} from {url}: {excerpt(text)}")
    if not raw.strip():
        raise AgentError(f"the agent replied with an empty body (HTTP {status})")


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
