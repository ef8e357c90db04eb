"""Stream parsing: the ``StreamParser`` block and its registry of stream formats."""

from __future__ import annotations

from .block import StreamParser
from .formats import get_format, known_formats, register_format, unregister_format

__all__ = ["StreamParser", "get_format", "known_formats", "register_format", "unregister_format"]
