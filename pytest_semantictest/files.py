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
