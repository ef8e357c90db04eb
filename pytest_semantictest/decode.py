"""Decoded views of a text, for the redactor: a secret is found by decoding what is printed, not by
listing the ways the secret could be encoded.

A *decoder* undoes one layer of one encoding wherever the text has it: backslash escapes (JSON's
``\\"``, ``\\/`` and ``\\uXXXX`` with surrogate pairs; Python's ``\\'``, ``\\xXX``, ``\\UXXXXXXXX``), a
bytes repr's UTF-8 sequences (``\\xc3\\xa9``, as a separate decoder: ``ascii()`` of ``Ã©`` reads the same),
percent-encoding (UTF-8 byte runs), HTML character references, and base64 runs (standard or URL-safe,
padding optional). :func:`views` applies them in every order, up to :data:`DEPTH` layers, so every
composition is decoded (JSON inside repr inside HTML, a URL-quoted value JSON-escaped, ...). Each
view remembers where each of its characters came from: :meth:`View.source` maps a range of the view
back to the range of the original text that printed it, which the redactor then masks whole.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

DEPTH = 5
"""Layers of encoding undone: a body echoed inside a JSON reply, repr-escaped in a failure message
and HTML-escaped in the report is four."""
MAX_VIEWS = 256
"""A bound on the views of one text (every order of every decoder): a pathological text stays cheap."""

Segment = tuple[int, int, int, int]
"""A decoded piece: its range in the output (start, end) and the range of input it came from."""
Piece = tuple[str, int, int]
"""What part of a match decodes to: the text, and the part's range inside the match."""

_BYTES = re.compile(r"(?:\\x[c-fC-F][0-9a-fA-F](?:\\x[89abAB][0-9a-fA-F])+)+")
"""UTF-8 sequences as a bytes repr shows them (``\\xc3\\xa9``: é; ``ascii()`` of a str reads them as Ã©)."""
_BACKSLASH = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})"
    r"|x([0-9a-fA-F]{2})|([\\/\"'abfnrtv0]))"
)
_SIMPLE = {
    "\\": "\\",
    "/": "/",
    '"': '"',
    "'": "'",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "0": "\0",
}
_PERCENT = re.compile(r"(?:%[0-9a-fA-F]{2})+")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _bytes(match: re.Match[str]) -> list[Piece]:
    return _utf8(match.group(0), 4)


def _backslash(match: re.Match[str]) -> str | None:
    high, low, four, eight, two, simple = match.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    code = four or eight or two
    if code is not None:
        number = int(code, 16)
        return chr(number) if number <= 0x10FFFF else None
    return _SIMPLE[simple]


def _percent(match: re.Match[str]) -> list[Piece]:
    return _utf8(match.group(0), 3)


def _utf8(run: str, width: int) -> list[Piece]:
    """Each character of a run of escaped bytes (``%XX``: ``width`` 3; ``\\xXX``: 4), with the bytes it
    came from (UTF-8; a byte that is not part of a character is itself, as U+FFFD)."""
    raw = bytes(int(run[i + width - 2 : i + width], 16) for i in range(0, len(run), width))
    pieces: list[Piece] = []
    i = 0
    while i < len(raw):
        size = 1 if raw[i] < 0xC0 else 2 if raw[i] < 0xE0 else 3 if raw[i] < 0xF0 else 4
        try:
            char = raw[i : i + size].decode("utf-8")
        except UnicodeDecodeError:
            char, size = "\ufffd", 1
        pieces.append((char, width * i, width * (i + size)))
        i += size
    return pieces


def _entity(match: re.Match[str]) -> str | None:
    decoded = html.unescape(match.group(0))
    return decoded if decoded != match.group(0) else None


def _base64(match: re.Match[str]) -> str | None:
    return _base64_text(match.group(0).rstrip("="))


@lru_cache(maxsize=4096)
def _base64_text(token: str) -> str | None:
    """What a base64 run says, if it is text (UTF-8 without control characters but line breaks and
    tabs): a word that happens to decode to control bytes is no encoding of anything."""
    urlsafe, standard = "-" in token or "_" in token, "+" in token or "/" in token
    if urlsafe and standard or len(token) % 4 == 1:
        return None
    try:
        raw = base64.b64decode(
            token + "=" * (-len(token) % 4), altchars=b"-_" if urlsafe else None, validate=True
        )
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return None if _CONTROL.search(text) else text


@dataclass(frozen=True)
class Decoder:
    """One layer of one encoding: where it may be (``pattern``) and what a match decodes to (None: not)."""

    name: str
    trigger: str
    pattern: re.Pattern[str]
    decode: Callable[[re.Match[str]], str | list[Piece] | None]
    """A match's text decoded (the whole match its source), or its pieces; None: not an encoding."""


DECODERS = (
    Decoder("backslash", "\\", _BACKSLASH, _backslash),
    Decoder("bytes", "\\x", _BYTES, _bytes),
    Decoder("percent", "%", _PERCENT, _percent),
    Decoder("html", "&", _ENTITY, _entity),
    Decoder("base64", "", _BASE64, _base64),
)


def apply(decoder: Decoder, text: str) -> tuple[str, list[Segment]] | None:
    """``text`` with one layer of ``decoder`` undone, and the pieces it decoded (None: nothing to undo)."""
    if decoder.trigger and decoder.trigger not in text:
        return None
    out: list[str] = []
    segments: list[Segment] = []
    position = length = 0
    for match in decoder.pattern.finditer(text):
        decoded = decoder.decode(match)
        if decoded is None:
            continue
        start, end = match.span()
        out.append(text[position:start])
        length += start - position
        for piece, offset, stop in [(decoded, 0, end - start)] if isinstance(decoded, str) else decoded:
            out.append(piece)
            segments.append((length, length + len(piece), start + offset, start + stop))
            length += len(piece)
        position = end
    if not segments:
        return None
    out.append(text[position:])
    return "".join(out), segments


def _back(segments: list[Segment], starts: list[int], start: int, end: int) -> tuple[int, int]:
    """The input range that printed the output range ``start:end`` of one decoding."""

    def position(p: int, closing: bool) -> int:
        probe = p - 1 if closing else p
        i = bisect_right(starts, probe) - 1
        if i >= 0:
            o_start, o_end, i_start, i_end = segments[i]
            if o_start <= probe < o_end:
                return i_end if closing else i_start
            return p - o_end + i_end
        return p

    return position(start, False), position(end, True)


@dataclass(frozen=True)
class View:
    """The text as decoded by some layers, and the decodings that made it (outermost first)."""

    text: str
    layers: tuple[tuple[list[Segment], list[int]], ...] = ()

    def source(self, start: int, end: int) -> tuple[int, int]:
        """The range of the original text that printed ``start:end`` of this view."""
        for segments, starts in reversed(self.layers):
            start, end = _back(segments, starts, start, end)
        return start, end


def views(text: str) -> Iterator[View]:
    """The text as printed, then every different text one to :data:`DEPTH` layers of decoding make
    of it (base64 undone once at most on the way), breadth first, at most :data:`MAX_VIEWS`."""
    first = View(text)
    yield first
    seen = {text}
    level: list[tuple[View, bool]] = [(first, False)]
    count = 1
    for _ in range(DEPTH):
        following: list[tuple[View, bool]] = []
        for view, used_base64 in level:
            for child in _decoded(view, used_base64, seen):
                yield child[0]
                count += 1
                if count >= MAX_VIEWS:
                    return
                following.append(child)
        level = following


def _decoded(view: View, used_base64: bool, seen: set[str]) -> Iterator[tuple[View, bool]]:
    """Each text not ``seen`` yet that one more decoding makes of ``view`` (base64 not a second time
    on one path), added to ``seen``, with whether base64 was undone on its way. Lazy: a decoder is
    applied only when the next view is asked for."""
    for decoder in DECODERS:
        if decoder.name == "base64" and used_base64:
            continue
        done = apply(decoder, view.text)
        if done is None or done[0] in seen:
            continue
        seen.add(done[0])
        segments = done[1]
        child = View(done[0], (*view.layers, (segments, [s[0] for s in segments])))
        yield child, used_base64 or decoder.name == "base64"
