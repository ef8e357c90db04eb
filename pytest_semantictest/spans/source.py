"""Where a test reads its spans from: the receiver in this process, or the xdist controller's; and
where the executions of this process are announced, for the one-at-a-time rule
(:mod:`.attribution`)."""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request
from typing import Protocol

from .attribution import Unattributed
from .model import Span
from .receiver import EXECUTIONS_PATH, SPANS_PATH, SpanReceiver


class SpanSource(Protocol):
    """The spans of one trace, waited for as :meth:`SpanReceiver.read` does (``roots``: the root spans
    to wait for, one a request of the test's that the agent handled; the parents are the span ids this
    process's ``traceparent`` headers of that trace carried)."""

    @property
    def endpoint(self) -> str: ...

    async def read(
        self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1
    ) -> tuple[list[Span], Unattributed]: ...

    async def spans(self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1) -> list[Span]: ...

    def announce(self, trace_id: str, event: str) -> None:
        """An execution of this process begins or ends (``event``)."""


def _parents(trace_id: str) -> list[str]:
    from ..trace_context import sent

    return sent(trace_id)


class LocalSpans:
    def __init__(self, receiver: SpanReceiver) -> None:
        self.receiver = receiver

    @property
    def endpoint(self) -> str:
        return self.receiver.url

    async def read(
        self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1
    ) -> tuple[list[Span], Unattributed]:
        parents = _parents(trace_id)
        return await asyncio.to_thread(self.receiver.read, trace_id, wait_s, quiet_s, roots, parents)

    async def spans(self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1) -> list[Span]:
        return (await self.read(trace_id, wait_s, quiet_s, roots))[0]

    def announce(self, trace_id: str, event: str) -> None:
        (self.receiver.begin if event == "begin" else self.receiver.end)(trace_id)


class RemoteSpans:
    """The controller's receiver, asked over HTTP (an xdist worker)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.unannounced: str | None = None
        """Why an execution could not be announced: foreign traces are then attributed to none."""

    @property
    def endpoint(self) -> str:
        return self.url

    async def read(
        self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1
    ) -> tuple[list[Span], Unattributed]:
        from ..http_clients import async_client

        async with async_client(timeout=wait_s + 30) as client:
            reply = await client.get(
                self.url + SPANS_PATH,
                params={
                    "trace": trace_id,
                    "wait": wait_s,
                    "quiet": quiet_s,
                    "roots": roots,
                    "parents": ",".join(_parents(trace_id)),
                },
            )
            reply.raise_for_status()
            data = reply.json()
            found = [Span(**fields) for fields in data["spans"]]
            return found, Unattributed(**data["unattributed"])

    async def spans(self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1) -> list[Span]:
        return (await self.read(trace_id, wait_s, quiet_s, roots))[0]

    def announce(self, trace_id: str, event: str) -> None:
        """Synchronous and in order (a loopback request of a millisecond): the controller must know an
        execution runs before its agent's spans can arrive."""
        query = f"?trace={trace_id}&event={event}&at={time.time_ns()}"
        request = urllib.request.Request(self.url + EXECUTIONS_PATH + query, data=b"", method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=10):  # noqa: S310  (loopback: the controller)
                pass
        except (OSError, urllib.error.URLError) as exc:
            self.unannounced = f"the controller's OTLP receiver could not be told of an execution: {exc}"
