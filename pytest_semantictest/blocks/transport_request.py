"""TransportRequest: a compliance case's exchange over ``a2a`` or ``realtime``, read into one reply.

Config (written by the compliance compiler, never resolved): ``transport`` (``a2a``,
``realtime``), ``dialect`` (A2A: ``jsonrpc``, ``webagents``, or absent to detect), ``base_url``,
and either ``url``/``method``/``headers``/``body`` (a ``**Request:**``) or ``messages`` (an
``**Input:**``); ``timeout`` (ms): a deadline for the whole exchange.

Output, the shape the compliance checks read (the ``observed`` slot): ``ok`` (the exchange ran to
its end or broke; False when nothing answered or the deadline passed), ``status``, ``stream``
(False), ``reply`` (the assembled reply, which ``body:`` and ``reply:`` strict paths address,
:mod:`.transports.reply`), ``content`` (its text), ``events``, ``tool_calls``, ``problem``,
``error``, ``timed_out``, ``request``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..evidence import Note
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block
from .transports.reply import Reply, last_events, last_state

if TYPE_CHECKING:
    from ..evidence import Evidence
    from ..step import StepContext

DEFAULT_TIMEOUT_MS = 60_000


class TransportRequestConfig(BaseModel):
    """A TransportRequest's config, written by the compliance compiler and taken as written."""

    model_config = ConfigDict(extra="allow", frozen=True)

    transport: JSONValue = None
    dialect: JSONValue = None
    base_url: JSONValue = None
    url: JSONValue = None
    method: JSONValue = None
    headers: JSONValue = None
    body: JSONValue = None
    messages: JSONValue = None
    agent: JSONValue = None
    timeout: JSONValue = None
    a2a_version: JSONValue = None
    a2a_version_source: JSONValue = None
    tool_calls: JSONValue = None
    expect_events: JSONValue = None


class TransportRequest(Block):
    name = "TransportRequest"
    concurrency_safe = True  # each case has its own connection
    resolve_config = False
    config_model = TransportRequestConfig
    config_keys = frozenset(TransportRequestConfig.model_fields)
    outputs = (
        "ok",
        "status",
        "stream",
        "reply",
        "content",
        "events",
        "tool_calls",
        "problem",
        "error",
        "timed_out",
        "request",
    )

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        transport = str(self.config.get("transport"))
        reply = Reply(
            transport, "realtime" if transport == "realtime" else str(self.config.get("dialect") or "")
        )
        redactor = ctx.run_context.redactor
        if redactor is not None:  # a value sent in a secret-looking header is a secret
            redactor.learn({"headers": dict(self.config.get("headers") or {})})
        ms = float(self.config.get("timeout") or DEFAULT_TIMEOUT_MS)
        # The exchange owns the case's deadline; the engine bounds the case later (engine.runner.REPORT_S),
        # so a hang is reported from here, with where the agent was.
        seconds = ms / 1000
        timed_out = False
        failure: str | None = None
        import httpx

        try:
            async with asyncio.timeout(seconds):
                await self._exchange(ctx, reply)
        except (TimeoutError, httpx.TimeoutException):  # also the HTTP layer's DeadlineExceeded
            failure = _timeout(reply, seconds)
            timed_out = failure is not None
        except (OSError, httpx.TransportError) as exc:
            failure = (
                f"cannot connect to {reply.url or self.config.get('base_url')}: {type(exc).__name__}: {exc}"
            )
        except Exception as exc:  # httpx's and websockets' own errors: named, never a crash  # noqa: BLE001
            failure = f"{type(exc).__name__}: {exc}".rstrip(": ")
        return self._output(reply, failure, timed_out)

    async def _exchange(self, ctx: StepContext, reply: Reply) -> None:
        from .transports.a2a import a2a_exchange
        from .transports.realtime import realtime_exchange

        if self.config.get("transport") == "realtime":
            await realtime_exchange(dict(self.config), reply)
        else:
            await a2a_exchange(ctx.http, dict(self.config), reply)

    def _output(self, reply: Reply, failure: str | None, timed_out: bool) -> JSONObject:
        data = reply.as_dict()
        ok = failure is None and (reply.status != 0 or bool(reply.problems))
        return {
            "ok": ok,
            "status": reply.status,
            "stream": False,
            "reply": data,
            "content": data["text"],
            "events": data["events"],
            "tool_calls": data["tool_calls"],
            "problem": data["problem"],
            "error": failure or data["error"],
            "failure": failure,
            "timed_out": timed_out,
            "request": self.sent(),
            "url": reply.url,
        }

    def sent(self) -> JSONObject:
        keys = ("transport", "dialect", "url", "method", "headers", "body", "messages")
        return {key: self.config[key] for key in keys if self.config.get(key) is not None}

    def error_output(self, inputs: JSONObject, message: str) -> JSONObject:
        return {"ok": False, "status": 0, "error": message, "failure": message, "request": self.sent()}

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The exchange as a timeline of its events (deltas folded), with its state and text."""
        out = trace.output
        if not isinstance(out, Mapping) or not isinstance(out.get("reply"), Mapping):
            return []
        reply = out["reply"]
        fields = {
            key: reply.get(key)
            for key in ("url", "dialect", "version", "status", "state", "final", "text", "problem", "error")
            if reply.get(key) not in (None, "")
        }
        if reply.get("version_from"):  # which A2A version was spoken, and why that one
            fields["version"] = f"{reply['version']} (from the {reply['version_from']})"
        if out.get("failure"):
            fields["failure"] = out["failure"]
        title = "Realtime session" if reply.get("transport") == "realtime" else "A2A exchange"
        return [Note(title, fields, "\n".join(reply.get("timeline") or []) or "(no events)")]


def _timeout(reply: Reply, seconds: float) -> str | None:
    """The failure of an exchange the case's timeout ended, with where the agent was; None when the
    agent answered all it was asked and only an event the case expects never came (a problem of the
    reply, not a failure)."""
    if reply.reading_on:
        reply.problem(
            f"waited until the case's timeout of {seconds:g} s for {', '.join(reply.waiting)}, "
            f"which never came; {last_events(reply)}"
        )
        return None
    return (
        f"no final event within the case's timeout of {seconds:g} s (a deadline for the whole "
        f"exchange); last state: {last_state(reply)}; {last_events(reply)}"
        + (f"; waiting for {', '.join(reply.waiting)}" if reply.waiting else "")
    )
