"""Process and process-group liveness and signalling (POSIX; /proc used when present).

A zombie counts as gone: the agent we started is reaped by a thread, but an orphaned
grandchild may wait for a reaper that never comes in a container. A thread-group leader that
exited while its other threads still run also shows as a zombie, yet still holds its sockets:
it counts as live until its last thread is gone (:func:`_exiting`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

_PROC = Path("/proc")


def _stat(pid: int, task: str | None = None) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` (or of its thread ``task``) after the command name, or None."""
    path = _PROC / str(pid) / "stat" if task is None else _PROC / str(pid) / "task" / task / "stat"
    try:
        raw = path.read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat(pid)
    if fields is None:  # reaped between the two looks, or no /proc here
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    return fields[0] not in ("Z", "X") or _exiting(pid)


def _exiting(pid: int) -> bool:
    """Whether a process whose leader is a zombie still has a live thread (its files stay open
    until the last one exits: another process cannot bind its port yet)."""
    try:
        tasks = [entry.name for entry in (_PROC / str(pid) / "task").iterdir()]
    except OSError:
        return False
    for tid in tasks:
        fields = _stat(pid, tid)
        if fields and fields[0] not in ("Z", "X"):
            return True
    return False


def alive_settled(pid: int, wait_s: float = 0.5) -> bool:
    """:func:`pid_alive`, after giving a process whose leader already exited ``wait_s`` to finish: a
    killed or crashed process shows a zombie leader while its other threads are still on their way
    out, and that one is not to be used again. One that still runs after ``wait_s`` (a leader that
    ended its own thread only) is live."""
    deadline = time.monotonic() + wait_s
    while (fields := _stat(pid)) is not None and fields[0] in ("Z", "X") and pid_alive(pid):
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.01)
    return pid_alive(pid)


def start_time(pid: int) -> int | None:
    """The process start time in clock ticks since boot (detects pid reuse), if known."""
    fields = _stat(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def parent(pid: int) -> int | None:
    """The parent pid of ``pid`` (from /proc), if known."""
    fields = _stat(pid)
    return int(fields[1]) if fields is not None and len(fields) > 1 else None


def group_members(pgid: int) -> list[int] | None:
    """Live (non-zombie) pids in process group ``pgid``; None without /proc."""
    if not _PROC.is_dir():
        return None
    members = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is None or fields[2] != str(pgid):
                continue
            if fields[0] not in ("Z", "X") or _exiting(int(entry.name)):
                members.append(int(entry.name))
    return members


def group_alive(pgid: int) -> bool:
    """Whether any live process remains in group ``pgid``."""
    members = group_members(pgid)
    if members is not None:
        return bool(members)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to group ``pgid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


_stopping: set[int] = set()
"""Groups a :func:`stop_group` of this process is waiting for (a signal handler kills them at once)."""
_at_once = False
"""An interrupt came while stopping: every stop from now on skips the grace period."""


def stop_group(pgid: int, grace_s: float = 5.0) -> bool:
    """SIGTERM the group, wait up to ``grace_s``, then SIGKILL. True if SIGKILL was needed.

    An interrupt while waiting (Ctrl-C, or a SIGTERM that a handler turns into an exception) kills
    the group at once, then propagates; :func:`kill_stopping` (a SIGTERM's handler) does the same
    without an exception. After either, later stops skip the grace period.
    """
    global _at_once
    if pgid <= 1 or pgid == os.getpgrp():
        raise ValueError(f"refusing to signal process group {pgid}")
    try:
        _stopping.add(pgid)
        signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + (0.0 if _at_once else grace_s)
        while time.monotonic() < deadline:
            if not group_alive(pgid):
                return False
            time.sleep(0.05)
    except BaseException:
        _at_once = True
        signal_group(pgid, signal.SIGKILL)
        raise
    finally:
        _stopping.discard(pgid)
    signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return True


def kill_stopping() -> None:
    """SIGKILL every group this process is stopping (its grace period is cut short), and stop every
    later one at once: a SIGTERM or SIGHUP that ends the process, or a Ctrl-C while it cleans up."""
    global _at_once
    _at_once = True
    for pgid in list(_stopping):
        signal_group(pgid, signal.SIGKILL)


def stopping_at_once() -> bool:
    """Whether stops skip the grace period now (:func:`kill_stopping` ran: the process is ending)."""
    return _at_once


def graceful_again() -> None:
    """Stops have their grace period again: a session's cleanup is over (an in-process pytest run
    must not hand an earlier one's hurry to the next)."""
    global _at_once
    _at_once = False
