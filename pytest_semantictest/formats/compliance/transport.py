"""What an ``a2a`` or ``realtime`` case runs and checks first (the completions cases keep ChatRequest,
ChatResponse and :class:`.strict.ResponseCheck`).

The case's one step is a ``TransportRequest`` writing the ``observed`` slot (the assembled reply,
:mod:`pytest_semantictest.blocks.transport_request`); its first check, :class:`ReplyCheck`, turns
what broke the transport's contract into the case's result: nothing answered or the deadline
passed is an ERROR, a JSON-RPC error, a stream or socket that ended before the final event, an
``error`` event or a card that does not validate a FAILURE naming it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...databus import DataBus
from ...json_types import JSONObject, JSONValue
from ...model import CheckResult, Failure, Step

if TYPE_CHECKING:
    from .models import FrontMatter

SLOT = "observed"
URL_VARIABLES = {"a2a": "COMPLIANCE_A2A_URL", "realtime": "COMPLIANCE_REALTIME_URL"}


def transport_url(transport: str, dialect: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The base URL the environment gives a transport's files: ``COMPLIANCE_A2A_<DIALECT>_URL`` (a file
    naming its dialect), ``COMPLIANCE_A2A_URL``, ``COMPLIANCE_REALTIME_URL``; None for completions."""
    env = os.environ if env is None else env
    name = URL_VARIABLES.get(transport)
    if name is None:
        return None
    if dialect and env.get(f"COMPLIANCE_A2A_{dialect.upper()}_URL"):
        return env[f"COMPLIANCE_A2A_{dialect.upper()}_URL"]
    return env.get(name) or None


VERSION_VARIABLE = "COMPLIANCE_A2A_VERSION"
"""The A2A protocol version for every ``jsonrpc`` file that names none (``0.3`` or ``1.0``)."""


def transport_config(
    front: FrontMatter, base_url: str, a2a_version: tuple[str, str] | None = None, strict: JSONValue = None
) -> JSONObject:
    """What an a2a or realtime case's ``TransportRequest`` is told of its file: the transport, dialect and
    base URL; for realtime the event kinds the case's strict ``events:`` expects (read for to the end of
    the exchange); for a2a the protocol version (the front matter's, else ``a2a_version``: the option's
    or ``COMPLIANCE_A2A_VERSION``'s, with where it came from; else negotiated from the agent card) and
    the file's own tool-call shape."""
    config: JSONObject = {"transport": front.transport, "dialect": front.dialect, "base_url": base_url}
    if front.transport == "realtime":
        config["expect_events"] = expected_events(strict)
    if front.transport != "a2a":
        return config
    if front.a2a_version is not None:
        config["a2a_version"], config["a2a_version_source"] = front.a2a_version, "front matter"
    elif a2a_version is not None:
        config["a2a_version"], config["a2a_version_source"] = a2a_version
    if front.tool_calls is not None:
        config["tool_calls"] = front.tool_calls.model_dump()
    return config


def expected_events(strict: JSONValue) -> list[str]:
    """The event kinds a strict block's ``events:`` expects to arrive: each entry's ``kind``/``type`` of
    the list form, each key of the mapping form whose expectation is not ``not_exists``/``length(0)``."""
    events = strict.get("events") if isinstance(strict, dict) else None
    if isinstance(events, list):
        return _listed_kinds(events)
    if isinstance(events, dict):
        return [kind for kind, expectation in events.items() if not _expects_absent(expectation)]
    return []


def _listed_kinds(events: list[JSONValue]) -> list[str]:
    """The ``kind`` (or ``type``) of each entry of the list form."""
    kinds = [e.get("kind", e.get("type")) for e in events if isinstance(e, dict)]
    return [k for k in kinds if isinstance(k, str)]


def _expects_absent(expectation: JSONValue) -> bool:
    """Whether the mapping form's expectation for a kind is that none arrives."""
    return isinstance(expectation, str) and expectation.replace(" ", "") in ("not_exists", "length(0)")


def request_step(config: JSONObject, line: int | None, where: str) -> Step:
    return Step("TransportRequest", "request", None, config, SLOT, line, where)


@dataclass
class SlotCheck:
    """A case's check of what its request step wrote to :data:`SLOT`: ``**Expected:**`` and its line."""

    expected: str | None = None
    line: int | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({SLOT})

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        raise NotImplementedError

    @staticmethod
    def observed(bus: DataBus) -> tuple[JSONObject, JSONObject]:
        """What the request step wrote, and the reply in it (empty where there is none)."""
        found = bus.get(SLOT)
        observed: JSONObject = found if isinstance(found, dict) else {}
        reply: JSONObject = observed["reply"] if isinstance(observed.get("reply"), dict) else {}
        return observed, reply


@dataclass
class ReplyCheck(SlotCheck):
    """The exchange completed as its transport defines, and ``**Expected:**`` holds.

    ``failure``: the agent must reject the request (status >= 400, a JSON-RPC error, a failed or
    rejected task or response, an ``error`` event, or the connection refused), and nothing else may
    break (an agent card that does not validate still fails the case); ``success``, or no
    ``**Expected:**``: it must not. A deadline that passed is an ERROR either way.
    """

    def describe(self) -> str:
        return f"expected: {self.expected or 'a completed exchange'}"

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        observed, reply = self.observed(bus)
        url = _url(observed, reply)
        rejected = _rejected(observed, reply)
        if observed.get("timed_out") or (not observed.get("ok") and self.expected != "failure"):
            return CheckResult(
                error=f"{url}: {observed.get('failure') or observed.get('error') or 'no response'}"
            )
        if self.expected == "failure":
            return self._expected_rejection(observed, reply, rejected)
        if observed.get("problem"):
            return self._broken(str(observed["problem"]), "a completed exchange", reply)
        if rejected:  # without **Expected:** too: a failed task is never a pass
            return self._rejected_failure(observed, reply)
        return CheckResult()

    def _expected_rejection(self, observed: JSONObject, reply: JSONObject, rejected: bool) -> CheckResult:
        """Under ``**Expected:** failure``: refused or rejected passes, unless something else broke too."""
        others = reply.get("other_problems")
        if isinstance(others, list) and others:  # a rejection is wanted, a broken card is not
            return self._broken("; ".join(map(str, others)), "a rejection, and nothing else broken", reply)
        if rejected or not observed.get("ok"):  # refused, or rejected by the agent
            return CheckResult()
        return CheckResult(
            [
                Failure(
                    "expected: failure",
                    f"the agent accepted the request (state "
                    f"{reply.get('state')}) but the case expects it to be rejected",
                    "rejected",
                    reply.get("state"),
                    "rejected",
                    self.line,
                )
            ]
        )

    def _broken(self, message: str, expected: str, reply: JSONObject) -> CheckResult:
        """A failure of the exchange itself, with the events received."""
        return CheckResult(
            [
                Failure(
                    f"{reply.get('transport')} exchange",
                    message,
                    expected,
                    reply.get("state"),
                    None,
                    self.line,
                    {"events": _timeline(reply)},
                )
            ]
        )

    def _rejected_failure(self, observed: JSONObject, reply: JSONObject) -> CheckResult:
        """The agent rejected a request the case expects it to accept."""
        why = (
            json.dumps(reply.get("error"), ensure_ascii=False)
            if reply.get("error") is not None
            else "no error given"
        )
        return CheckResult(
            [
                Failure(
                    f"expected: {self.expected or 'a completed exchange'}",
                    f"the agent rejected the request (status {observed.get('status')}, state "
                    f"{reply.get('state')}): {why}",
                    "accepted",
                    reply.get("state"),
                    None,
                    self.line,
                    {"events": _timeline(reply)},
                )
            ]
        )


def _url(observed: JSONObject, reply: JSONObject) -> JSONValue:
    """Where the request went, as the reply or else the request names it, for an ERROR's line."""
    return reply.get("url") or (observed.get("request") or {}).get("url") or "the server"


def _rejected(observed: JSONObject, reply: JSONObject) -> bool:
    """Whether the agent rejected the request: a status >= 400, a JSON-RPC error, a failed or rejected
    task or response."""
    return (
        observed.get("status", 0) >= 400
        or reply.get("error") is not None
        or reply.get("state") in ("failed", "rejected")
    )


def _timeline(reply: JSONObject) -> str:
    """The events received, one a line under the failure (deltas folded)."""
    lines = reply.get("timeline") or []
    return "".join(f"\n    {line}" for line in lines) if lines else "none"
