"""The realtime transport's WebSocket, recorded and replayed like an HTTP reply: the server events a
session received are kept as one event stream (``data: <event>`` blocks), so the same mutations
apply (text deltas, tool-call events, truncation before ``response.done``); the events the case
sends are not looked at when replaying."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..blocks.transports import realtime
from .mutations import Recorded
from .tape import Replay, Tape

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

STREAM = (("content-type", "text/event-stream"),)


def use(tape: Tape | Replay | None) -> None:
    """Open the realtime transport's sockets through ``tape`` (None: the real client)."""
    if tape is None:
        realtime.OPENERS.clear()
    elif isinstance(tape, Tape):
        realtime.OPENERS[:] = [_recording(tape)]
    else:
        realtime.OPENERS[:] = [_replaying(tape)]


def _key(url: str) -> tuple[str, str, bytes]:
    return "WEBSOCKET", url, b""


def _recording(tape: Tape) -> Callable[..., Awaitable[_Recorder]]:
    async def opener(url: str, **kwargs: Any) -> _Recorder:  # (kwargs: websockets' own, passed on)
        from websockets.asyncio.client import connect

        return _Recorder(await connect(url, **kwargs), tape, url)

    return opener


def _replaying(replay: Replay) -> Callable[..., Awaitable[_Player]]:
    async def opener(url: str, **kwargs: object) -> _Player:
        found = replay._take(_key(url))
        if found is None:
            replay.unrecorded.append(f"WEBSOCKET {url}")
            raise OSError("mutation run: no recorded session for this socket (not opened)")
        key, reply = found
        if replay.mutation is not None and key == replay.target:
            reply = replay.mutation.reply
        if reply.slow:
            raise TimeoutError("mutation slow_reply: no reply before the timeout")
        if reply.status != 101:
            from websockets.datastructures import Headers
            from websockets.exceptions import InvalidStatus
            from websockets.http11 import Response

            raise InvalidStatus(Response(reply.status, "mutated", Headers()))
        return _Player(_events(reply.body))

    return opener


def _events(body: bytes) -> list[str]:
    blocks = body.decode("utf-8", errors="replace").split("\n\n")
    return [
        "\n".join(line[5:].lstrip() for line in b.split("\n") if line.startswith("data:"))
        for b in blocks
        if b.strip()
    ]


def _shown(message: str | bytes) -> str:
    text = message.decode("utf-8", errors="replace") if isinstance(message, bytes) else str(message)
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        return text.replace("\n", " ")


class _Recorder:
    """The real socket; every message received is kept, the session recorded when it closes."""

    def __init__(self, socket: ClientConnection, tape: Tape, url: str) -> None:
        self.socket, self.tape, self.url = socket, tape, url
        self.received: list[str] = []

    async def __aenter__(self) -> _Recorder:
        await self.socket.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        body = "".join(f"data: {m}\n\n" for m in self.received).encode()
        self.tape.replies.append((_key(self.url), Recorded(101, STREAM, body)))
        await self.socket.__aexit__(kind, exc, traceback)

    async def send(self, message: str | bytes) -> None:
        await self.socket.send(message)

    async def recv(self) -> str | bytes:
        message = await self.socket.recv()
        self.received.append(_shown(message))
        return message


class _Player:
    """A socket that gives the recorded events in order and ignores what is sent."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def __aenter__(self) -> _Player:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def send(self, message: str | bytes) -> None:
        return None

    async def recv(self) -> str:
        if not self.events:
            from websockets.exceptions import ConnectionClosed

            raise ConnectionClosed(None, None)
        return self.events.pop(0)
