"""The registry of stream formats used by :class:`StreamParser`.

A format is a function ``fn(body: str) -> dict`` returning ``{text, toolCalls, chunks,
metadata}`` (missing keys are filled in by the block). Built-ins: ``sse-openai``,
``sse-vercel``, ``sse`` and ``text``. Register your own from ``conftest.py``::

    from pytest_semantictest.blocks.stream import register_format

    @register_format("my-format")
    def parse_my_format(body: str) -> dict: ...
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import overload

from ...json_types import JSONObject
from .openai import parse_openai
from .sse import parse_sse_format
from .vercel import parse_vercel

FormatFn = Callable[[str], JSONObject]

DEFAULT_FORMAT = "text"


def parse_text(body: str) -> JSONObject:
    """The ``text`` format: the body as is, no tool calls."""
    return {
        "text": body,
        "toolCalls": [],
        "chunks": [],
        "metadata": {"format": "text", "totalChunks": 0, "totalTools": 0},
    }


_VERCEL_TYPES = (
    "text-delta",
    "text-start",
    "tool-call",
    "tool-input-",
    "tool-result",
    "start-step",
    "finish",
)
_SNIFF_LINES = 20


def sniff_format(body: str) -> str:
    """The format of a body whose step names none: ``sse-openai`` or ``sse-vercel`` when its first
    events are plainly one of them (the docs' examples parse such streams without naming the format),
    else the documented default ``text``. Only the first few lines are read."""
    for line in body.lstrip("\ufeff").splitlines()[:_SNIFF_LINES]:
        line = line.strip()
        found = _sniff_data(line[5:].lstrip()) if line.startswith("data:") else _sniff_bare(line)
        if found is not None:
            return found
    return DEFAULT_FORMAT


def _sniff_bare(line: str) -> str | None:
    """``sse-vercel`` for a line of the AI SDK data-stream protocol (``0:"text"``, ``9:{tool call}``,
    ``d:{finish}``)."""
    if len(line) > 2 and line[1] == ":" and line[0] in "0239adef" and line[2] in '"{[':
        return "sse-vercel"
    return None


def _sniff_data(payload: str) -> str | None:
    """The format a ``data:`` line's JSON object plainly belongs to, by the keys at its start."""
    if not payload.startswith("{"):
        return None
    head = payload[:200]
    if '"choices"' in head or '"chat.completion.chunk"' in head:
        return "sse-openai"
    if '"type"' in head and any(f'"{t}' in head for t in _VERCEL_TYPES):
        return "sse-vercel"
    return None


_FORMATS: dict[str, FormatFn] = {
    "sse-openai": parse_openai,
    "sse-vercel": parse_vercel,
    "sse": parse_sse_format,
    "text": parse_text,
}


@overload
def register_format(name: str, fn: FormatFn) -> FormatFn: ...
@overload
def register_format(name: str, fn: None = None) -> Callable[[FormatFn], FormatFn]: ...


def register_format(name: str, fn: FormatFn | None = None) -> FormatFn | Callable[[FormatFn], FormatFn]:
    """Register ``fn`` as the parser of format ``name`` (replacing any earlier one).

    Without ``fn`` it returns a decorator.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a stream format name must be a non-empty string, got {name!r}")
    if fn is None:
        return lambda f: register_format(name, f)
    if not callable(fn):
        raise TypeError(f"parser for stream format {name!r} must be callable, got {fn!r}")
    _FORMATS[name] = fn
    return fn


def unregister_format(name: str) -> None:
    """Remove a registered format (no error when it is unknown)."""
    _FORMATS.pop(name, None)


def known_formats() -> list[str]:
    """The names of all registered formats, sorted."""
    return sorted(_FORMATS)


def unknown_format_message(name: object) -> str:
    """``Unknown stream format 'x'. Did you mean 'y'? Known formats: ...``."""
    known = known_formats()
    message = f"Unknown stream format {name!r}."
    if isinstance(name, str):
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        if close:
            message += f" Did you mean {close[0]!r}?"
    return f"{message} Known formats: {', '.join(known)}"


def get_format(name: str) -> FormatFn:
    """The parser for format ``name``; KeyError (with a did-you-mean) when unknown."""
    try:
        return _FORMATS[name]
    except (KeyError, TypeError):
        raise KeyError(unknown_format_message(name)) from None
