"""Files other processes read while we write them (the LLM cache, highbar's variations, xdist state)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Write ``text`` so that readers see the old file or the new one, never half of one.

    Parent folders are created; an existing file keeps its permissions, a new one gets ``mode``
    (a temporary file would otherwise leave it 0600). Raises ``OSError``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.is_file() else mode
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:24]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class UnreadableFile(ValueError):
    """A spec file that cannot be read as text; ``str()`` says why, ``line`` where (1-based), and
    ``detail`` is the reason without the "cannot read file:" lead (for formats that add their own)."""

    def __init__(self, message: str, line: int | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.detail = detail if detail is not None else message


def read_text(path: Path, max_bytes: int) -> str:
    """The UTF-8 text of ``path`` without a leading BOM (Windows editors write one).

    Raises :class:`UnreadableFile` for a file larger than ``max_bytes``, one the OS will not read,
    or bytes that are not UTF-8 (with the line and column of the first bad byte).
    """
    try:
        if path.stat().st_size > max_bytes:
            raise UnreadableFile(f"file is larger than {max_bytes // 2**20} MB")
        raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UnreadableFile(f"cannot read file: {why}", detail=why) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        raise UnreadableFile(
            f"not UTF-8 text at line {line} column {column} (byte {exc.start}): {exc.reason}", line
        ) from None
