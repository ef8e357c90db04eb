"""A watchdog that stops an agent's process group once the pytest process that started it is gone.

Whatever ends pytest (SIGKILL too, or the out-of-memory killer), the agent it started must not run on.
A parent-death signal (Linux's ``PR_SET_PDEATHSIG``) reaches only the agent itself, not the children
in its group, fires when the *thread* that started it ends, and exists on Linux only. So each started
agent gets a watchdog instead: a small process (this file, run as a script, standard library only) in
a session of its own (a terminal's Ctrl-C or a kill of pytest's process group does not reach it),
whose stdin is the read end of a pipe whose write end only the pytest process holds (not inherited
by anything it starts). It does nothing until that pipe closes: pytest let go of the agent (a normal
stop closes the pipe after the group is gone) or died. Then it stops the agent's group the way pytest
would (SIGTERM, the agent's grace period, SIGKILL) if the group is still the agent's: the leader is
the agent (same start time), or the leader is gone and members remain (a group id is not reused
while it has members).

An agent shared by xdist workers (``users``: its state file) is stopped only once no worker that uses
it is alive; and at once when the run's controller (``controller`` in the state folder) is gone.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import time
from pathlib import Path

if __package__:
    from . import procs
else:  # run as a script: procs.py is beside this file (and uses the standard library only)
    import procs  # type: ignore[no-redef, import-not-found]
# (subprocess, weakref and json are imported where used: every watchdog's start would pay for them)

POLL_S = 0.5
"""How often a watchdog whose pytest is gone looks at the agent's other users and the controller."""
CONTROLLER_FILE = "controller"
"""In an xdist run's agent folder: the controller's pid and start time (``record_controller``)."""


class Watchdog:
    """The pytest side: the watchdog process (reaped by a helper thread when it exits) and the write
    end of its pipe. ``release()`` closes the pipe: the watchdog exits if the group is gone, else
    watches the agent's other users. Idempotent."""

    def __init__(
        self, pgid: int, grace_s: float, users: Path | None = None, traces: Path | None = None
    ) -> None:
        import subprocess
        import weakref

        from ..threads import start_daemon  # (the package is not there when this file runs as a script)

        read, write = os.pipe()  # (neither end is inherited by what pytest starts later)
        argv = [
            sys.executable,
            "-E",
            "-S",
            str(Path(__file__).resolve()),
            str(pgid),
            str(procs.start_time(pgid) or ""),
            str(grace_s),
            str(users or ""),
            str(traces or ""),
        ]
        try:
            popen = subprocess.Popen(
                argv,
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,
            )
        except OSError:
            os.close(write)
            raise
        finally:
            os.close(read)
        # Closed once (a signal handler's stop may run inside the main thread's), also when this object
        # is dropped unreleased (an agent process forgotten, as one stopped through its xdist record).
        self.release = weakref.finalize(self, os.close, write)
        # (not when it is released: that may be in a signal handler, which must not start a thread)
        start_daemon(popen.wait, f"reap-watchdog-{popen.pid}")


def guard(
    pgid: int, grace_s: float, users: Path | None = None, traces: Path | None = None
) -> Watchdog | None:
    """A watchdog for the group ``pgid`` (``traces``: the trace file it removes after stopping it);
    None where none can be started (no interpreter path)."""
    if not sys.executable:
        return None
    try:
        return Watchdog(pgid, grace_s, users, traces)
    except OSError:
        return None


def record_controller(folder: str | Path) -> None:
    """An xdist controller: write its pid and start time into the run's agent folder."""
    pid = os.getpid()
    from ..files import write_atomic

    write_atomic(Path(folder, CONTROLLER_FILE), f"{pid} {procs.start_time(pid) or ''}")


def _alive(pid: int, started: str) -> bool:
    """``pid`` runs and (where known) started at ``started``: the same process, not a reused pid."""
    return procs.pid_alive(pid) and (not started or str(procs.start_time(pid) or started) == started)


def _ours(pgid: int, started: str) -> bool:
    """The group is still the agent's (module doc) and has a live member."""
    if procs.pid_alive(pgid):
        return _alive(pgid, started)
    return procs.group_alive(pgid)


def _controller_gone(users: Path | None) -> bool:
    if users is None:
        return False
    try:
        pid, _, started = (users.parent / CONTROLLER_FILE).read_text().partition(" ")
        return not _alive(int(pid), started.strip())
    except (OSError, ValueError):
        return False


def _other_users(users: Path | None, agent: int) -> bool:
    """Whether a live process still uses the agent (its state file names it, and the process)."""
    import json  # (run as a script: the standard library only, so not ``files.read_json``)

    if users is None:
        return False
    try:
        state = json.loads(users.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(state, dict) or state.get("pid") != agent:
        return False
    return any(isinstance(pid, int) and procs.pid_alive(pid) for pid in state.get("users", []))


def watch(pgid: int, started: str, grace_s: float, users: Path | None, traces: Path | None = None) -> None:
    """Wait for the pipe on stdin to close, then stop the group (and remove ``traces``) unless it is
    gone or still used."""
    pytest_gone = False
    while not pytest_gone:
        ready, _, _ = select.select([0], [], [], POLL_S if users is not None else None)
        if ready:
            pytest_gone = not os.read(0, 512)
        if _controller_gone(users):
            break
    while _ours(pgid, started) and _other_users(users, pgid) and not _controller_gone(users):
        time.sleep(POLL_S)
    if _ours(pgid, started):
        procs.stop_group(pgid, grace_s)
        if traces is not None:
            with contextlib.suppress(OSError):
                traces.unlink()


def main(argv: list[str]) -> int:
    pgid, started, grace, users, traces = argv
    watch(int(pgid), started, float(grace), Path(users) if users else None, Path(traces) if traces else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
