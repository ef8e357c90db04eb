"""What every spec source shares: paths into a document, their lines, and read errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path as FilePath

from ..errors import Problem, SpecError
from ..files import UnreadableFile, read_text
from ..paths import Path as Path  # a place in a document: the keys and indexes leading to it


class SourceError(ValueError):
    """Text that cannot be read; ``line``/``column`` (1-based) and ``place`` say where."""

    def __init__(
        self, message: str, line: int | None = None, column: int | None = None, place: str = ""
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.place = place


class LineMap:
    """Mixin for parsed documents that keep ``lines``: path -> the line where its value starts."""

    lines: dict[Path, int]

    def line(self, path: Sequence[str | int]) -> int | None:
        """Line of ``path`` or of its nearest ancestor that has one."""
        return nearest_line(self.lines, path)


def nearest_line(lines: dict[Path, int], path: Sequence[str | int], root: int | None = None) -> int:
    """The line of ``path`` in ``lines``, or of its nearest ancestor there; else ``root`` (by default the
    document's own line, or 1)."""
    key = tuple(path)
    while key:
        if key in lines:
            return lines[key]
        key = key[:-1]
    return root if root is not None else lines.get((), 1)


def read_spec(path: FilePath, max_bytes: int) -> str:
    """The text of the spec file ``path`` (:func:`~pytest_semantictest.files.read_text`); a
    :class:`SpecError` naming the file, and the line of a byte that is not UTF-8, when unreadable."""
    try:
        return read_text(path, max_bytes)
    except UnreadableFile as exc:
        raise SpecError(str(path), [Problem("", str(exc), exc.line)]) from None
