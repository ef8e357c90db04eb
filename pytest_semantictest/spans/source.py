"""Where a test reads its spans from: the receiver in this process, or the xdist controller's."""

from __future__ import annotations

import asyncio
from typing import Protocol

from .model import Span
from .receiver import SPANS_PATH, SpanReceiver


class SpanSource(Protocol):
    """The spans of one trace, waited for as :meth:`SpanReceiver.spans` does (``roots``: the root spans
    to wait for, one a request of the test's that the agent handled; the parents are the span ids this
    process's ``traceparent`` headers of that trace carried)."""

    @property
    def endpoint(self) -> str: ...

    async def spans(self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1) -> list[Span]: ...


def _parents(trace_id: str) -> list[str]:
    from ..trace_context import sent

    return sent(trace_id)


class LocalSpans:
    def __init__(self, receiver: SpanReceiver) -> None:
        self.receiver = receiver

    @property
    def endpoint(self) -> str:
        return self.receiver.url

    async def spans(self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1) -> list[Span]:
        parents = _parents(trace_id)
        return await asyncio.to_thread(self.receiver.spans, trace_id, wait_s, quiet_s, roots, parents)


class RemoteSpans:
    """The controller's receiver, asked over HTTP (an xdist worker)."""

    def __init__(self, url: str) -> None:
        self.url = url

    @property
    def endpoint(self) -> str:
        return self.url

    async def spans(self, trace_id: str, wait_s: float, quiet_s: float, roots: int = 1) -> list[Span]:
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
            return [Span(**fields) for fields in reply.json()]
