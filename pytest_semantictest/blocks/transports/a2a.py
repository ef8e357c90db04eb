"""An A2A client for compliance cases, in the two dialects agents serve (docs/compliance.md, "A2A").

- ``jsonrpc``: the A2A specification's JSON-RPC binding, protocol version 0.3 (``message/stream``,
  ``message/send``, ``tasks/get``; the ``kind``-tagged shapes) or 1.0 (``SendStreamingMessage``,
  ``SendMessage``, ``GetTask``, ``CancelTask`` with the ``A2A-Version: 1.0`` header; ``{"task": ...}``
  results, ``TASK_STATE_*`` states, parts without ``kind``). The card at
  ``/.well-known/agent-card.json`` says which versions the agent speaks and where (:mod:`.a2a_card`);
  requests are built and every payload is read with ``a2a-sdk``'s own types (:mod:`.a2a_fold`). A
  generated message is streamed when the card says the agent streams, else sent and its task polled
  with ``tasks/get`` / ``GetTask`` until it reaches a final state.
- ``webagents``: the WebAgents SDK's older ``POST /tasks`` transport (:mod:`.a2a_webagents`).

The dialect is the front matter's ``dialect``, else what the request shows (a ``jsonrpc`` body, a
``/tasks`` path), else the card the server has. What arrives is folded into one :class:`Reply`.
``a2a-sdk``'s client is not used: a case's request may be one written by hand (or broken on purpose),
every event must reach the evidence as it came, and every request goes through the one HTTP layer
within the case's deadline.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx

from ...json_types import JSONObject, JSONValue
from .a2a_card import Endpoint, card_problem, choose, streams, version_name
from .a2a_fold import fold_payload
from .a2a_rest import rest_exchange, v1_params
from .a2a_webagents import webagents_exchange
from .bounded import Bounded
from .reply import Reply, last_state
from .sse_read import read_events
from .tool_calls import ToolCallShapes, shapes_of

CARD_PATHS = {
    "jsonrpc": "/.well-known/agent-card.json",
    "webagents": "/.well-known/agent.json",
    "rest": "/.well-known/agent-card.json",
}
METHODS = {
    "0.3": {"send": "message/send", "stream": "message/stream", "get": "tasks/get"},
    "1.0": {"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask"},
}
VERSION_HEADER = "A2A-Version"
POLL_FIRST_S, POLL_MAX_S = 0.05, 1.0


async def a2a_exchange(client: httpx.AsyncClient, config: JSONObject, reply: Reply) -> None:
    """Run the case's exchange, filling ``reply`` as events arrive (so a deadline leaves what came)."""
    base = str(config["base_url"]).rstrip("/")
    http = Bounded(client, float(config.get("timeout") or 60_000) / 1000)
    shapes = shapes_of(config.get("tool_calls"))
    dialect = await _dialect(http, base, config, reply)
    if dialect is None:
        return
    reply.dialect = dialect
    card_url = base + CARD_PATHS[dialect]
    card_ok = await _card(http, card_url, config, reply)
    if dialect == "webagents":
        if card_ok and (not isinstance(reply.card, dict) or not reply.card.get("name")):
            reply.problem(f"the agent card at {card_url} has no name")
        await webagents_exchange(http, base, config, reply, shapes)
        return
    rest = dialect == "rest"  # the HTTP+JSON binding: A2A 1.0 only
    endpoint = _endpoint(config, reply, base, rest)
    if card_ok:
        problem = card_problem(reply.card, endpoint.version, card_url)
        if problem:
            reply.problem(problem)
    if rest:
        await rest_exchange(http, endpoint.url, config, reply, shapes, streams(reply.card))
        return
    await _jsonrpc(http, endpoint, config, reply, shapes)


async def _dialect(http: Bounded, base: str, config: JSONObject, reply: Reply) -> str | None:
    """The front matter's dialect, else what the request shows, else the card the server has; None
    (a problem said) when there is no card either."""
    dialect = config.get("dialect") or _dialect_of(config)
    if dialect is None:
        dialect = await _probe(http, base, config)
    if dialect is None:
        reply.problem(
            f"no A2A agent card at {base}{CARD_PATHS['jsonrpc']} or {base}{CARD_PATHS['webagents']}: "
            "name the dialect in the front matter (dialect: jsonrpc or dialect: webagents)"
        )
    return dialect


def _endpoint(config: JSONObject, reply: Reply, base: str, rest: bool) -> Endpoint:
    """The card's interface for the protocol version asked for (the REST binding speaks 1.0 only),
    noted in the reply; a mismatch is a problem."""
    wanted = "1.0" if rest else version_name(config.get("a2a_version"))
    source = "rest dialect" if rest else str(config.get("a2a_version_source") or "front matter")
    endpoint, problem = choose(reply.card, base, wanted, source, "HTTP+JSON" if rest else "JSONRPC")
    reply.version, reply.extra["version_from"] = endpoint.version, endpoint.source
    if problem:
        reply.problem(problem)
    return endpoint


def _dialect_of(config: JSONObject) -> str | None:
    body = config.get("body")
    if isinstance(body, dict) and "jsonrpc" in body:
        return "jsonrpc"
    if "/tasks" in str(config.get("url") or ""):
        return "webagents"
    return None


async def _probe(http: Bounded, base: str, config: JSONObject) -> str | None:
    for dialect, path in CARD_PATHS.items():
        # nothing listening: raises
        response = await http.get(base + path, headers=config.get("headers") or {})
        if response.status_code == 200:
            return dialect
    return None


async def _card(http: Bounded, url: str, config: JSONObject, reply: Reply) -> bool:
    """Fetch the agent card into the reply; False (a problem said) when there is none to read."""
    response = await http.get(url, headers=config.get("headers") or {})
    try:
        card = response.json()
    except ValueError:
        reply.problem(f"the agent card at {url} is not JSON (status {response.status_code})")
        return False
    reply.card = card
    if response.status_code != 200:
        reply.problem(f"the agent card at {url} answered status {response.status_code}")
        return False
    return True


# -- JSON-RPC, both versions -------------------------------------------------------------------------


def _message_body(version: str, method: str, text: str, context_id: str | None) -> JSONObject:
    """A generated request, built with a2a-sdk's types of the version (v0.3 pydantic, v1.0 protobuf)."""
    message_id = str(uuid.uuid4())
    if version == "1.0":
        return {
            "jsonrpc": "2.0",
            "id": str(uuid.uuid4()),
            "method": method,
            "params": v1_params(text, context_id),
        }
    from a2a.compat.v0_3 import types as a2a

    v03 = a2a.Message(
        role=a2a.Role.user,
        parts=[a2a.Part(root=a2a.TextPart(text=text))],
        message_id=message_id,
        context_id=context_id,
    )
    request = a2a.SendStreamingMessageRequest(id=str(uuid.uuid4()), params=a2a.MessageSendParams(message=v03))
    return {**request.model_dump(mode="json", exclude_none=True), "method": method}


async def _jsonrpc(
    http: Bounded, endpoint: Endpoint, config: JSONObject, reply: Reply, shapes: ToolCallShapes
) -> None:
    url = str(config.get("url") or endpoint.url)
    turn = _Turn(http, url, endpoint.version, config, reply, shapes)
    if config.get("body") is not None:
        await turn.send_and_read(config["body"])
        return
    kind = "stream" if streams(reply.card) else "send"
    turns = reply.extra.setdefault("turns", [])
    for text in _user_texts(config):  # one message a user turn, the context kept
        reply.final, reply.task_id, start = False, None, len(reply.texts)
        method = METHODS[endpoint.version][kind]
        await turn.send_and_read(_message_body(endpoint.version, method, text, reply.context_id))
        turns.append({"text": "".join(reply.texts[start:]), "state": reply.state, "final": reply.final})
        if reply.problems or reply.error:
            return


def _user_texts(config: JSONObject) -> list[str]:
    return [str(m.get("content", "")) for m in config.get("messages") or [] if m.get("role") == "user"]


class _Turn:
    """One request and what answers it: an event stream, or a body and then polling of its task."""

    def __init__(
        self, http: Bounded, url: str, version: str, config: JSONObject, reply: Reply, shapes: ToolCallShapes
    ) -> None:
        self.http, self.url, self.version, self.reply, self.shapes = http, url, version, reply, shapes
        version_header = {VERSION_HEADER: version} if version == "1.0" else {}
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream, application/json",
            **version_header,
            **(config.get("headers") or {}),
        }
        self.method = str(config.get("method") or "POST")

    async def send_and_read(self, body: JSONValue) -> None:
        """Send ``body``; read its event stream to the end, or its answer and then its task's polls."""
        reply = self.reply
        reply.url = self.url
        raw = await self._send(body)
        if raw is None:  # a stream, read to its end
            return
        marks = _marks(reply)
        if raw.strip():
            fold_payload(raw, reply, self.version, self.shapes)
        if reply.final or reply.error or reply.status >= 400:
            return
        if reply.task_id:
            await self._poll(marks)
        if not reply.final and not reply.error:
            reply.problem(f"the response ended before the task completed; last state: {last_state(reply)}")

    async def _send(self, body: JSONValue, method: str | None = None) -> str | None:
        reply = self.reply
        content = json.dumps(body).encode() if not isinstance(body, str) else body.encode()

        async def read(response: httpx.Response) -> str | None:
            reply.status = response.status_code
            if "text/event-stream" not in response.headers.get("content-type", ""):
                return (await response.aread()).decode("utf-8", "replace")
            async for event in read_events(response):
                fold_payload(event.data, reply, self.version, self.shapes)
                if reply.final:
                    break
            if not reply.final and not reply.error:
                reply.problem(f"the stream ended before the task completed; last state: {last_state(reply)}")
            return None

        _, raw = await self.http.send(method or self.method, self.url, self.headers, content, read)
        return raw

    async def _poll(self, marks: tuple[int, int, int, int]) -> None:
        """Ask for the task until it reaches a final state (the case's deadline bounds this); each
        answer is the whole task, so what the turn's earlier answers added is replaced, not repeated."""
        reply, wait = self.reply, POLL_FIRST_S
        polls = 0
        while not reply.final and not reply.error:
            await asyncio.sleep(wait)
            wait = min(wait * 2, POLL_MAX_S)
            method = METHODS[self.version]["get"]
            body = {
                "jsonrpc": "2.0",
                "id": str(uuid.uuid4()),
                "method": method,
                "params": {"id": reply.task_id},
            }
            raw = await self._send(body, "POST")  # whatever the case's own request was sent with
            polls += 1
            reply.extra["polls"] = polls
            if raw is None or reply.status >= 400:
                return
            _truncate(reply, marks)
            fold_payload(raw, reply, self.version, self.shapes)


def _marks(reply: Reply) -> tuple[int, int, int, int]:
    return len(reply.texts), len(reply.data), len(reply.tool_calls), len(reply.messages)


def _truncate(reply: Reply, marks: tuple[int, int, int, int]) -> None:
    del (
        reply.texts[marks[0] :],
        reply.data[marks[1] :],
        reply.tool_calls[marks[2] :],
        reply.messages[marks[3] :],
    )
