"""The reply of an A2A task or a Realtime response, assembled from the events that carried it.

One shape for every transport but completions (documented in docs/compliance.md):

- ``transport``, ``dialect`` (``jsonrpc``, ``webagents``, ``realtime``), ``version`` (A2A
  ``jsonrpc``: the protocol version spoken, ``0.3`` or ``1.0``, and ``version_from``: ``agent card``,
  ``front matter``, ``environment`` or ``default``), ``status`` (the HTTP status,
  101 for an opened WebSocket, 0 for none), ``state`` (the last state the agent reported: A2A's
  ``completed``/``working``/..., WebAgents' ``running``/``completed``/``failed``, a Realtime
  response's ``completed``/``failed``/``cancelled``/``incomplete``), ``final`` (the final event
  arrived);
- ``text`` (message parts, text artifacts and text deltas, in order), ``data`` (data parts),
  ``tool_calls`` (``name``, ``arguments``, ``call_id``), ``artifacts``, ``messages``;
- ``events``: every event as received, each with ``kind`` (and ``type``, the same, so the
  ``events:`` strict key reads them), unknown kinds kept;
- ``task_id``, ``context_id``, ``task`` (WebAgents' ``GET /tasks/{id}``), ``card`` (the agent card);
- ``error``: an error the agent sent (a JSON-RPC error object, a ``task.failed`` error, an ``error``
  event); ``problem``: why the exchange broke the transport's contract (an ended stream, a closed
  socket, an error, a card that does not validate), the case's failure; ``other_problems``: those of
  them that are not the agent rejecting the request, which fail a case expecting a failure too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ...json_types import JSONObject, JSONValue

DELTA_KINDS = frozenset(
    {
        "task.message",
        "artifact-update",
        "response.text.delta",
        "response.output_text.delta",
        "response.function_call_arguments.delta",
        "response.audio_transcript.delta",
    }
)
TIMELINE_LIMIT = 80


@dataclass
class Reply:
    transport: str
    dialect: str
    url: str = ""
    status: int = 0
    state: str | None = None
    final: bool = False
    version: str | None = None
    """The A2A protocol version the exchange spoke (``0.3``, ``1.0``); None for other transports."""
    texts: list[str] = field(default_factory=list)
    data: list[JSONValue] = field(default_factory=list)
    tool_calls: list[JSONObject] = field(default_factory=list)
    artifacts: list[JSONObject] = field(default_factory=list)
    messages: list[JSONObject] = field(default_factory=list)
    events: list[JSONObject] = field(default_factory=list)
    task_id: str | None = None
    context_id: str | None = None
    task: JSONValue = None
    card: JSONValue = None
    error: JSONValue = None
    problems: list[str] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)
    """The problems that are the agent rejecting the request (:meth:`problem`)."""
    extra: JSONObject = field(default_factory=dict)
    """More of the reply's shape (Realtime ``responses``, A2A ``turns``)."""
    waiting: list[str] = field(default_factory=list)
    """The server events the exchange is reading for now (named when the deadline or a close ends it)."""
    reading_on: bool = False
    """Every client event was sent and answered as the protocol asks; the exchange reads on only for
    the events the case expects (a deadline then is a missing event, not a hang)."""
    deltas: bool = False
    """Text deltas arrived for the current response (then its ``.done`` text is not added again)."""

    def event(self, kind: str, payload: JSONValue) -> None:
        self.events.append({"kind": kind, "type": kind, "data": payload})

    def problem(self, message: str) -> None:
        """Why the exchange broke the transport's contract. One recorded once the agent rejected the
        request (an error it sent: a JSON-RPC error, an ``error`` event; a status of 400 or more, a
        refused WebSocket) is that rejection, which a case expecting a failure wants, unlike every
        other problem (a card that does not validate, recorded before the exchange)."""
        if message not in self.problems:
            self.problems.append(message)
        if (self.error is not None or self.status >= 400) and message not in self.rejections:
            self.rejections.append(message)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    def as_dict(self) -> JSONObject:
        """The reply as the checks read it (see the module docstring)."""
        out: JSONObject = {
            "transport": self.transport,
            "dialect": self.dialect,
            "url": self.url,
            "status": self.status,
            "state": self.state,
            "final": self.final,
            "text": self.text,
            "data": self.data,
            "tool_calls": self.tool_calls,
            "artifacts": self.artifacts,
            "messages": self.messages,
            "events": self.events,
            "task_id": self.task_id,
            "context_id": self.context_id,
            "error": self.error,
            "problem": "; ".join(self.problems) or None,
            "other_problems": [p for p in self.problems if p not in self.rejections],
            "timeline": timeline(self.events),
        }
        if self.waiting:
            out["waiting"] = list(self.waiting)
        if self.version is not None:
            out["version"] = self.version
        if self.task is not None:
            out["task"] = self.task
        if self.card is not None:
            out["card"] = self.card
        return {**out, **self.extra}


def last_state(reply: Reply) -> str:
    return reply.state or "none reported"


def last_events(reply: Reply, count: int = 3) -> str:
    """The last events received, as the timeline shows them (what a deadline interrupted)."""
    lines = timeline(reply.events)
    if not lines:
        return "no events received"
    shown = lines[-count:]
    more = f"{len(lines) - count} before, then " if len(lines) > count else ""
    return f"last events: {more}{' | '.join(shown)}"


def timeline(events: list[JSONObject]) -> list[str]:
    """The events, one line each, consecutive deltas of one kind folded into one line."""
    out: list[str] = []
    folded: tuple[str, int, str] | None = None
    for event in events:
        kind = str(event.get("kind"))
        if kind in DELTA_KINDS:
            text = _delta_text(event.get("data"))
            if folded and folded[0] == kind:
                folded = (kind, folded[1] + 1, folded[2] + text)
            else:
                _flush(out, folded)
                folded = (kind, 1, text)
            continue
        _flush(out, folded)
        folded = None
        out.append(f"{kind}{_summary(event.get('data'))}")
    _flush(out, folded)
    if len(out) > TIMELINE_LIMIT:
        out = [*out[: TIMELINE_LIMIT - 1], f"... {len(out) - TIMELINE_LIMIT + 1} more"]
    return out


def _flush(out: list[str], folded: tuple[str, int, str] | None) -> None:
    if folded:
        kind, count, text = folded
        out.append(f"{kind} x{count}: {json.dumps(text[:200], ensure_ascii=False)}")


def _delta_text(data: JSONValue) -> str:
    if isinstance(data, dict):
        if isinstance(data.get("delta"), str):
            return str(data["delta"])
        if len(data) == 1 and isinstance(data.get("artifactUpdate"), dict):
            data = data["artifactUpdate"]
        parts = data.get("parts") or (data.get("artifact") or {}).get("parts") or []
        return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return ""


V1_WRAPPERS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})


def _summary(data: JSONValue) -> str:
    if not isinstance(data, dict):
        return f": {str(data)[:120]}" if data is not None else ""
    bits = _summary_bits(_unwrapped(data))
    return f" ({', '.join(bits)})" if bits else ""


def _unwrapped(data: JSONObject) -> JSONObject:
    """An A2A 1.0 result's inner object (``{"statusUpdate": {...}}``); anything else as it is."""
    if len(data) == 1 and next(iter(data)) in V1_WRAPPERS and isinstance(next(iter(data.values())), dict):
        inner: JSONObject = next(iter(data.values()))
        return inner
    return data


def _summary_bits(data: JSONObject) -> list[str]:
    """The state, response status and error an event carries, as ``key=value``."""
    bits = []
    status = data.get("status")
    state = status.get("state") if isinstance(status, dict) else status
    if state:
        bits.append(f"state={state}")
    response = data.get("response")
    if isinstance(response, dict) and response.get("status"):
        bits.append(f"status={response['status']}")
    error = data.get("error")
    if error:
        bits.append(f"error={json.dumps(error, ensure_ascii=False)[:160]}")
    return bits
