"""Shared by the agent service tests: free ports, the trace agent's command, process checks."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

AGENT = Path(__file__).with_name("trace_agent.py")


def agent_command(port: int, *flags: str) -> str:
    return shlex.join([sys.executable, str(AGENT), "--port", str(port), *flags])


def alive(pid: int) -> bool:
    """Exists and is not a zombie (checked independently of the package's own helpers)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] not in "ZX"


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def python_processes_running(path: Path, *args: str) -> list[int]:
    """Pids of live ``python <path> <args...>`` processes (via /proc): leftover agents.

    ``args`` (e.g. ``--port N``) narrow it to one test's processes: others may run the suite too.
    """
    wanted = [str(path).encode(), *(a.encode() for a in args)]
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[1 : 1 + len(wanted)] == wanted and alive(int(entry.name)):
                found.append(int(entry.name))
    return found
