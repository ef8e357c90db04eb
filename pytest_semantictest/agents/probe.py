"""What an agent at a URL speaks, found by asking it once (``semantictest init``).

In order: OpenAI chat completions (a ``POST`` of one user message to the URL, else to
``/v1/chat/completions`` or ``/chat/completions`` under it), an A2A agent card
(``/.well-known/agent-card.json``: the JSON-RPC binding; ``/.well-known/agent.json``: the WebAgents
dialect), an OpenAI Realtime WebSocket (``/realtime``: ``session.created`` on connect). What the
agent answered is kept, so the spec written from it passes against it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..http_clients import sync_client
from ..json_types import JSONValue

HELLO = "Hello"
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
CARDS = (("/.well-known/agent-card.json", "jsonrpc"), ("/.well-known/agent.json", "webagents"))


@dataclass
class Probe:
    """What the agent speaks (``chat``, ``a2a``, ``realtime``) and what it answered."""

    kind: str
    url: str
    """Where it was reached: the chat completions URL, the A2A base URL, the realtime socket's base."""
    model: str = ""
    text: str = ""
    tool_calls: list[str] = field(default_factory=list)
    name: str = ""
    dialect: str = ""
    tried: list[str] = field(default_factory=list)


class ProbeError(Exception):
    """Nothing at the URL answered as an agent we know; the message says what each try got."""


def _base(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")).rstrip("/")


def _chat_urls(url: str) -> list[str]:
    path = urlsplit(url).path.rstrip("/")
    if path.endswith("/chat/completions"):
        return [url]
    return [url.rstrip("/") + p for p in CHAT_PATHS] + ([_base(url) + CHAT_PATHS[0]] if path else [])


def _models(client: httpx.Client, chat_url: str) -> list[str]:
    """The model ids ``GET .../models`` beside the chat URL lists (empty when it lists none)."""
    try:
        answer = client.get(chat_url.removesuffix("/chat/completions") + "/models")
        data = answer.json().get("data") if answer.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return []
    return [str(m["id"]) for m in data or [] if isinstance(m, dict) and m.get("id")]


def _chat(client: httpx.Client, url: str, model: str | None, tried: list[str]) -> Probe | None:
    for chat_url in _chat_urls(url):
        chosen = model or next(iter(_models(client, chat_url)), "default")
        body = {"model": chosen, "messages": [{"role": "user", "content": HELLO}]}
        try:
            answer = client.post(chat_url, json=body)
        except httpx.HTTPError as exc:
            tried.append(f"POST {chat_url}: {type(exc).__name__}: {exc}")
            continue
        try:
            data = answer.json()
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            tried.append(
                f"POST {chat_url}: {answer.status_code}, not a chat completion: {answer.text[:120]!r}"
            )
            continue
        if answer.status_code != 200:
            tried.append(f"POST {chat_url}: {answer.status_code}")
            continue
        calls = [str((c.get("function") or {}).get("name")) for c in message.get("tool_calls") or []]
        return Probe("chat", chat_url, chosen, str(message.get("content") or ""), calls, tried=tried)
    return None


def _a2a(client: httpx.Client, url: str, tried: list[str]) -> Probe | None:
    base = url.rstrip("/")
    for path, dialect in CARDS:
        try:
            answer = client.get(base + path)
            card = answer.json() if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            card = None
        if isinstance(card, dict) and card.get("name"):
            return Probe("a2a", base, name=str(card["name"]), dialect=dialect, tried=tried)
        tried.append(f"GET {base + path}: no agent card")
    return None


def _realtime(url: str, timeout: float, tried: list[str]) -> Probe | None:
    from websockets.exceptions import WebSocketException
    from websockets.sync.client import connect

    parts = urlsplit(url)
    scheme = {"https": "wss", "http": "ws"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    socket_url = urlunsplit(
        (scheme, parts.netloc, path if path.endswith("/realtime") else path + "/realtime", "", "")
    )
    try:
        with connect(socket_url, open_timeout=timeout, close_timeout=1) as socket:
            first: JSONValue = json.loads(socket.recv(timeout=timeout))
    except (OSError, TimeoutError, WebSocketException, ValueError) as exc:
        tried.append(f"WebSocket {socket_url}: {type(exc).__name__}: {exc}")
        return None
    if isinstance(first, dict) and first.get("type") == "session.created":
        base = urlunsplit((parts.scheme, parts.netloc, path.removesuffix("/realtime"), "", ""))
        return Probe("realtime", base.rstrip("/"), tried=tried)
    tried.append(f"WebSocket {socket_url}: the first event was not session.created")
    return None


def probe(url: str, *, model: str | None = None, timeout: float = 10.0) -> Probe:
    """What the agent at ``url`` speaks; raises ProbeError saying what each try got."""
    tried: list[str] = []
    if urlsplit(url).scheme in ("ws", "wss"):
        found = _realtime(url, timeout, tried)
    else:
        with sync_client(timeout=timeout) as client:
            found = _chat(client, url, model, tried) or _a2a(client, url, tried)
        found = found or _realtime(url, timeout, tried)
    if found is None:
        raise ProbeError(
            f"no agent at {url} answered as OpenAI chat completions, an A2A agent card or a Realtime "
            "socket:\n  " + "\n  ".join(tried)
        )
    return found
