"""Timeouts as deadlines: a block's ``timeout`` bounds the whole exchange, connect to last byte.

httpx's own timeouts are per operation (a server that sends one byte every half second never
trips a 3 s read timeout); :class:`Deadline` puts one clock around everything a block does with
a server and says, when it runs out, what the exchange was doing and how long it was given.
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import TYPE_CHECKING

from .json_types import JSONValue
from .shown import shorten

if TYPE_CHECKING:
    import asyncio

    import httpx

MAX_TIMEOUT_MS = 24 * 3600 * 1000
"""The longest timeout a block accepts (24 h, as a SemanticTest test's ``timeout``)."""


class DeadlineExceeded(TimeoutError):
    """The exchange did not finish within its timeout; the message names what it was doing."""


def _shown(value: object) -> str:
    """A short form of a number (or anything) for a message; a huge integer as its magnitude."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return f"{'-' if value < 0 else ''}about 10**{int(abs(value).bit_length() * math.log10(2))}"
    return shorten(repr(value), 40)


def timeout_problem(value: JSONValue) -> str | None:
    """Why ``value`` is not a usable timeout in milliseconds, or None (``${...}`` is checked when it runs)."""
    if isinstance(value, str):
        if "${" in value:
            return None
        try:
            value = float(value)
        except ValueError:
            return f"timeout must be a number of milliseconds, got {_shown(value)}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"timeout must be a number of milliseconds, got {type(value).__name__} {_shown(value)}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"timeout must be a finite number of milliseconds (at most {MAX_TIMEOUT_MS}), got {value}"
    if value <= 0:
        return f"timeout must be more than 0 ms, got {_shown(value)}"
    if value > MAX_TIMEOUT_MS:
        return f"timeout {_shown(value)} ms is too long: at most {MAX_TIMEOUT_MS} ms (24 h)"
    return None


def timeout_ms(value: JSONValue, default_ms: float) -> float:
    """``value`` (ms; None or 0 means ``default_ms``) as a float; ValueError saying why it is unusable."""
    if value is None or (value == 0 and not isinstance(value, bool)):
        value = default_ms
    problem = timeout_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return float(value)


class Deadline:
    """``async with Deadline(ms, "GET http://x")``: raises :class:`DeadlineExceeded` when the time is up.

    Set ``phase`` (or call :meth:`reading`) as the exchange advances; the message says where it was.
    """

    def __init__(self, ms: float, what: str) -> None:
        self.ms = ms
        self.what = what
        self.phase = "connecting, sending the request or waiting for the response headers"
        self._response: httpx.Response | None = None
        self._timeout: asyncio.Timeout | None = None

    def reading(self, response: httpx.Response, what: str = "reading the response body") -> None:
        """The headers arrived: from now on the message counts the body bytes received so far."""
        self.phase = what
        self._response = response

    def message(self) -> str:
        phase = self.phase
        received = getattr(self._response, "num_bytes_downloaded", None)
        if isinstance(received, int):
            phase += f" ({received} bytes received)"
        return (
            f"{self.what}: timed out after {self.ms:g} ms while {phase}; the timeout is a deadline for "
            "the whole exchange, connect to last byte"
        )

    async def __aenter__(self) -> Deadline:
        import asyncio  # here, not at the top: a format that validates timeouts loads no event loop code

        self._timeout = asyncio.timeout(self.ms / 1000)
        await self._timeout.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        timeout = self._timeout
        assert timeout is not None, "a Deadline is left only after it was entered"
        try:
            await timeout.__aexit__(kind, exc, tb)  # (it suppresses nothing: returns None)
            return None
        except TimeoutError:
            raise DeadlineExceeded(self.message()) from None
