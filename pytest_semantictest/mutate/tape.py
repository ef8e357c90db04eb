"""Recording and replaying agent replies at the one HTTP layer (``agents.exchange.send_within``).

:class:`Tape` sends each request for real, keeps the reply (status, headers, decoded body, or what
was raised) and hands the reader the same bytes. :class:`Replay` answers from a tape and never
reaches the network: a request the tape has no reply for fails and is counted in ``unrecorded``.
A reply is found by its request's signature (method, URL, body without the execution id), else by
its place among the requests to the same method and URL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import httpx

from ..agents.exchange import MAX_REPLY_BYTES, TEST_HEADER, Send
from ..deadline import Deadline
from .mutations import Mutation, Recorded

T = TypeVar("T")
Signature = tuple[str, str, bytes]
_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def signature(request: httpx.Request) -> Signature:
    body = request.content
    test_id = request.headers.get(TEST_HEADER, "")
    if test_id:
        body = body.replace(test_id.encode(), b"")
    return request.method, str(request.url), body


async def _read_bytes(response: httpx.Response) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > MAX_REPLY_BYTES:
            break
    return bytes(data)


async def _answer(
    deadline: Deadline,
    request: httpx.Request,
    reply: Recorded,
    read: Callable[[httpx.Response], Awaitable[T]],
    phase: str,
) -> tuple[httpx.Response, T]:
    if reply.raised is not None:
        raise reply.raised
    if reply.slow:
        raise httpx.ReadTimeout("mutation slow_reply: no reply before the timeout", request=request)
    response = httpx.Response(reply.status, headers=list(reply.headers), content=reply.body, request=request)
    async with deadline:
        try:
            deadline.reading(response, phase)
            return response, await read(response)
        finally:
            await response.aclose()


@dataclass
class Tape:
    """The replies of one test's normal run, in the order they came."""

    replies: list[tuple[Signature, Recorded]] = field(default_factory=list)

    async def __call__(
        self,
        send: Send,
        deadline: Deadline,
        http: httpx.AsyncClient,
        request: httpx.Request,
        read: Callable[[httpx.Response], Awaitable[T]],
        *,
        follow_redirects: bool,
        phase: str,
    ) -> tuple[httpx.Response, T]:
        key = signature(request)
        try:
            response, body = await send(
                deadline, http, request, _read_bytes, follow_redirects=follow_redirects, phase=phase
            )
        except Exception as exc:
            self.replies.append((key, Recorded(0, (), b"", exc)))
            raise
        headers = tuple((k, v) for k, v in response.headers.items() if k.lower() not in _DROPPED_HEADERS)
        reply = Recorded(response.status_code, headers, body)
        self.replies.append((key, reply))
        return await _answer(deadline, request, reply, read, phase)

    def targets(self) -> list[tuple[Signature, Recorded]]:
        """One reply per distinct request (a repeated test's runs send the same): what is mutated."""
        seen: dict[Signature, Recorded] = {}
        for key, reply in self.replies:
            seen.setdefault(key, reply)
        return list(seen.items())


@dataclass
class Replay:
    """Answers from ``tape``; the replies recorded for ``target`` are replaced by ``mutation``'s."""

    tape: Tape
    target: Signature | None = None
    mutation: Mutation | None = None
    unrecorded: list[str] = field(default_factory=list)
    judge_misses: int = 0
    """LLM calls of the replayed run that the replay cache could not answer (set by whoever ran it)."""
    _used: set[int] = field(default_factory=set)
    _count: dict[tuple[str, str], int] = field(default_factory=dict)
    replays = True

    async def __call__(
        self,
        send: Send,
        deadline: Deadline,
        http: httpx.AsyncClient,
        request: httpx.Request,
        read: Callable[[httpx.Response], Awaitable[T]],
        *,
        follow_redirects: bool,
        phase: str,
    ) -> tuple[httpx.Response, T]:
        key = signature(request)
        found = self._take(key)
        if found is None:
            self.unrecorded.append(f"{request.method} {request.url}")
            raise httpx.ConnectError(
                "mutation run: no recorded reply for this request (not sent)", request=request
            )
        recorded_key, reply = found
        if self.mutation is not None and recorded_key == self.target:
            reply = self.mutation.reply
        return await _answer(deadline, request, reply, read, phase)

    @property
    def used(self) -> frozenset[int]:
        """The places in the tape of the replies given so far."""
        return frozenset(self._used)

    def _take(self, key: Signature) -> tuple[Signature, Recorded] | None:
        replies = self.tape.replies
        for n, (k, reply) in enumerate(replies):
            if k == key and n not in self._used:
                self._used.add(n)
                return k, reply
        place = key[:2]
        same = [n for n, (k, _) in enumerate(replies) if k[:2] == place]
        if not same:
            return None
        count = self._count.get(place, 0)
        self._count[place] = count + 1
        return replies[same[min(count, len(same) - 1)]]
