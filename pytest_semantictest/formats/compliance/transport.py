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

from ...databus import DataBus
from ...json_types import JSONObject
from ...model import CheckResult, Failure, Step

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


def request_step(config: JSONObject, line: int | None, where: str) -> Step:
    return Step("TransportRequest", "request", None, config, SLOT, line, where)


@dataclass
class ReplyCheck:
    """The exchange completed as its transport defines, and ``**Expected:**`` holds.

    ``failure``: the agent must reject the request (status >= 400, a JSON-RPC error, a failed or
    rejected task or response, an ``error`` event, or the connection refused), and nothing else may
    break (an agent card that does not validate still fails the case); ``success``, or no
    ``**Expected:**``: it must not. A deadline that passed is an ERROR either way.
    """

    expected: str | None = None
    line: int | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({SLOT})

    def describe(self) -> str:
        return f"expected: {self.expected or 'a completed exchange'}"

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        found = bus.get(SLOT)
        observed: JSONObject = found if isinstance(found, dict) else {}
        reply: JSONObject = observed["reply"] if isinstance(observed.get("reply"), dict) else {}
        url = reply.get("url") or (observed.get("request") or {}).get("url") or "the server"
        rejected = (
            observed.get("status", 0) >= 400
            or reply.get("error") is not None
            or reply.get("state") in ("failed", "rejected")
        )
        if observed.get("timed_out") or (not observed.get("ok") and self.expected != "failure"):
            return CheckResult(
                error=f"{url}: {observed.get('failure') or observed.get('error') or 'no response'}"
            )
        if self.expected == "failure":
            others = reply.get("other_problems")
            if isinstance(others, list) and others:  # a rejection is wanted, a broken card is not
                return CheckResult(
                    [
                        Failure(
                            f"{reply.get('transport')} exchange",
                            "; ".join(map(str, others)),
                            "a rejection, and nothing else broken",
                            reply.get("state"),
                            None,
                            self.line,
                            {"events": _timeline(reply)},
                        )
                    ]
                )
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
        if observed.get("problem"):
            return CheckResult(
                [
                    Failure(
                        f"{reply.get('transport')} exchange",
                        str(observed["problem"]),
                        "a completed exchange",
                        reply.get("state"),
                        None,
                        self.line,
                        {"events": _timeline(reply)},
                    )
                ]
            )
        if rejected:  # without **Expected:** too: a failed task is never a pass
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
        return CheckResult()


def _timeline(reply: JSONObject) -> str:
    """The events received, one a line under the failure (deltas folded)."""
    lines = reply.get("timeline") or []
    return "".join(f"\n    {line}" for line in lines) if lines else "none"
