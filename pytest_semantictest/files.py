"""The one rule for files we read and write.

Reading: only a regular file (a FIFO, a device, a folder or a link to one is refused before a byte is
read), of bounded size; JSON of bounded depth, without ``NaN``/``Infinity``. Writing: atomically (temp
file + rename, so other processes read the old file or the new one, never half of one), never over a
file the same run reads, and a place that cannot be written is found before anything runs
(:func:`write_problem`).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .json_types import JSONValue

MAX_DEPTH = 64
"""JSON nested deeper than this in a record we read is refused (ours are a few levels deep)."""


def write_atomic(path: Path, text: str, *, mode: int = 0o644, inputs: Iterable[Path] = ()) -> None:
    """Write ``text`` so that readers see the old file or the new one, never half of one.

    Parent folders are created; an existing file keeps its permissions, a new one gets ``mode``
    (a temporary file would otherwise leave it 0600). ``inputs``: files this run reads, never
    replaced (:class:`OverwritesInput`). Raises ``OSError`` (a place that is not a regular file:
    ``IsADirectoryError``, or :class:`NotRegularFile`).
    """
    if any(same_file(path, given) for given in inputs):
        raise OverwritesInput(path)
    if path.exists() and not path.is_file():
        raise IsADirectoryError(21, "is a folder", str(path)) if path.is_dir() else NotRegularFile(path)
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
        raw = read_regular(path, max_bytes).removeprefix(b"\xef\xbb\xbf")
    except (FileNotFoundError, NotADirectoryError) as exc:
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


class NotRegularFile(OSError):
    """A path that names a FIFO, a device or a socket where a file is read or written."""

    def __init__(self, path: Path, kind: str = "") -> None:
        kind = kind or _kind(path)
        super().__init__(f"{path} is {kind}, not a regular file")
        self.strerror = f"is {kind}, not a regular file"


class OverwritesInput(OSError):
    """An output that would replace a file the same run reads."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is also read by this run: it would be replaced; write to another file")
        self.strerror = "is also read by this run: it would be replaced; write to another file"


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (through links too; a file that does not exist yet: by its path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _kind(path: Path | os.stat_result) -> str:
    try:
        mode = path.st_mode if isinstance(path, os.stat_result) else os.stat(path).st_mode
    except OSError:
        return "missing"
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file (a link to one too) of at most ``max_bytes``.

    Opened without blocking (a FIFO with no writer would hang the run) and checked before it is read
    (``/dev/zero`` would be read until memory runs out). Raises :class:`UnreadableFile`;
    ``FileNotFoundError`` and ``NotADirectoryError`` (no such file) pass through for callers to whom
    a missing file is no error.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UnreadableFile(f"cannot read file: {why}", detail=why) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            why = f"it is {_kind(info)}, not a regular file"
            raise UnreadableFile(f"cannot read file: {why}", detail=why)
        if info.st_size > max_bytes:
            raise UnreadableFile(f"file is larger than {_size(max_bytes)}")
        return _read_at_most(fd, max_bytes)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UnreadableFile(f"cannot read file: {why}", detail=why) from None
    finally:
        os.close(fd)


def _read_at_most(fd: int, max_bytes: int) -> bytes:
    """The bytes of an open regular file; raises UnreadableFile when it grew past ``max_bytes`` while
    it was read."""
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > max_bytes:
        raise UnreadableFile(f"file is larger than {_size(max_bytes)}")
    return b"".join(chunks)


def _size(count: int) -> str:
    return f"{count // 2**20} MB" if count >= 2**20 else f"{count // 1024} KB"


def _no_constant(name: str) -> JSONValue:
    raise ValueError(f"{name} is not a number JSON allows")


def json_value(text: str, max_depth: int = MAX_DEPTH) -> JSONValue:
    """``text`` parsed as JSON: no ``NaN``/``Infinity``, nested at most ``max_depth`` deep. Raises
    ``ValueError`` saying what is wrong (and where, for a syntax error)."""
    try:
        value: JSONValue = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"nested more than {max_depth} levels deep") from None
    if _depth(value) > max_depth:
        raise ValueError(f"nested more than {max_depth} levels deep")
    return value


def _depth(value: JSONValue) -> int:
    deepest = 0
    stack: list[tuple[JSONValue, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in node)
    return deepest


STATE_BYTES = 4 * 2**20
"""A state file the processes of a run share (agent users, rate-limit buckets, records) is small."""


def read_json(path: Path, max_bytes: int = STATE_BYTES, max_depth: int = MAX_DEPTH) -> JSONValue:
    """A JSON file read by the rule above (:func:`read_regular`, :func:`json_value`); raises
    ``FileNotFoundError``/``NotADirectoryError`` when there is none, ``ValueError`` (an
    :class:`UnreadableFile` too) when it cannot be used."""
    raw = read_regular(path, max_bytes)
    try:
        return json_value(raw.decode("utf-8"), max_depth)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start})") from None


def write_problem(path: Path, *, folder: bool = False) -> str | None:
    """Why ``path`` (a file, or with ``folder`` a folder we write files in) cannot be written, found
    without writing anything; None when it can. For a usage error before anything runs."""
    if path.exists():
        problem = _wrong_kind(path, folder)
        if problem is not None:
            return problem
    place, problem = _nearest_existing(path if folder else path.parent)
    if problem is not None:
        return problem
    return _cannot_make_in(place, path)


def _wrong_kind(path: Path, folder: bool) -> str | None:
    """Why an existing ``path`` is not what would be written there (a file, or with ``folder`` a folder)."""
    if folder and not path.is_dir():
        return f"{path} is {_kind(path) if not path.is_file() else 'a file'}, not a folder"
    if not folder and not path.is_file():
        return f"{path} is {_kind(path)}: give a file name"
    return None


def _nearest_existing(place: Path) -> tuple[Path, str | None]:
    """``place`` or the nearest of its parents that exists; and why it cannot be made when a link on
    the way points to nothing."""
    while not place.exists():
        if place.is_symlink():
            return place, f"{place} is a link to nothing"
        place = place.parent
    return place, None


def _cannot_make_in(place: Path, path: Path) -> str | None:
    """Why ``path`` cannot be made under ``place``, its nearest existing parent (None: it can)."""
    if not place.is_dir():
        return f"{place} is a file, so {path} cannot be made under it"
    if not os.access(place, os.W_OK | os.X_OK):
        return f"{place} cannot be written (read-only or not yours)"
    try:  # access() says yes to root on a read-only place and to anyone on /proc: try it
        fd, probe = tempfile.mkstemp(dir=place, prefix=".semantictest-probe.")
    except OSError as exc:
        return f"{place} cannot be written ({exc.strerror or exc})"
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return None
