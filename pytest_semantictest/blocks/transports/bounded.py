"""The HTTP requests of an A2A exchange: the session's client through the one HTTP layer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx

from ...agents.exchange import send_within
from ...deadline import Deadline

T = TypeVar("T")


class Bounded:
    """The session's client through the one HTTP layer (``agents.exchange.send_within``), each request
    within the case's timeout (the whole exchange has a deadline too, in TransportRequest)."""

    def __init__(self, http: httpx.AsyncClient, seconds: float) -> None:
        self.http, self.seconds = http, seconds

    async def get(self, url: str, headers: dict[str, str]) -> httpx.Response:
        """A GET read to its end (``.text``, ``.json()`` work after it)."""
        response, _ = await self.send("GET", url, headers, None, _read_all)
        return response

    async def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        read: Callable[[httpx.Response], Awaitable[T]],
    ) -> tuple[httpx.Response, T]:
        request = self.http.build_request(
            method, url, headers=headers, content=content, timeout=httpx.Timeout(self.seconds)
        )
        return await send_within(
            Deadline(self.seconds * 1000, f"{method} {url}"),
            self.http,
            request,
            read,
            follow_redirects=True,
            phase="reading the event stream",
        )


async def _read_all(response: httpx.Response) -> bytes:
    return await response.aread()
