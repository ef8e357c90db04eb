"""Server-Sent Events read as they arrive (the shared splitter, :mod:`..stream.sse`, on each
complete event), so a caller can stop at the final event and keep what came before a deadline."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ..chat_request import _EVENT_END
from ..stream.sse import SSEEvent, parse_events

if TYPE_CHECKING:
    import httpx


async def read_events(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    """The events of an httpx streaming ``response``; the last one may end without a blank line."""
    buffer = ""
    async for chunk in response.aiter_text():
        buffer += chunk
        while (end := _EVENT_END.search(buffer)) is not None:
            block, buffer = buffer[: end.end()], buffer[end.end() :]
            for event in parse_events(block)[0]:
                yield event
    if buffer.strip():
        for event in parse_events(buffer)[0]:
            yield event
