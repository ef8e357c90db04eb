"""How a value is shown in a message: secrets masked first, then shortened, with one end marker.

Order matters: a 300-character secret cut to 200 characters is no longer the secret, and no
redactor finds it afterwards. So every helper that shortens a value for display calls
:func:`shorten`, which masks before it cuts. The mask is the one given, else the one of the case
being run (:func:`masking`, set by the engine around each case with the session's redactor), so
checks that build their messages where no redactor is passed still mask first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Mask = Callable[[str], str]
MARK = "…"
"""The one end marker of a shortened value."""

_MASK: ContextVar[Mask | None] = ContextVar("semantictest_mask", default=None)


@contextlib.contextmanager
def masking(mask: Mask | None) -> Iterator[None]:
    """Within this block (and the tasks it starts), :func:`shorten` masks with ``mask`` by default."""
    token = _MASK.set(mask)
    try:
        yield
    finally:
        _MASK.reset(token)


def shorten(text: object, limit: int, mask: Mask | None = None, *, tell: bool = False) -> str:
    """``text`` (a string, or ``str()`` of anything) with secrets masked, then cut to ``limit``
    characters ending in :data:`MARK`; ``tell``: say how many characters were cut after the marker."""
    value = text if isinstance(text, str) else str(text)
    mask = mask or _MASK.get()
    if mask is not None:
        value = mask(value)
    if len(value) <= limit:
        return value
    if tell:
        return value[:limit] + f"{MARK} ({len(value) - limit:,} more characters)"
    return value[: max(limit - len(MARK), 0)] + MARK


def one_line(text: object, limit: int, mask: Mask | None = None) -> str:
    """:func:`shorten` of ``text`` with its whitespace runs as single spaces (a summary line)."""
    value = text if isinstance(text, str) else str(text)
    if mask is None:
        mask = _MASK.get()
    if mask is not None:
        value = mask(value)
    return shorten(" ".join(value.split()), limit, _identity)


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (escape sequences, line breaks) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _identity(text: str) -> str:
    return text
