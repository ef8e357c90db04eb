"""When a process may read its agents for the last time (``AgentPool.finish``): a late tool call of one
of its tests can still arrive while another pytest-xdist worker's test runs on the same agent, as it can
while the next test runs in one process. So the last read waits until no other worker actively uses the
agent (every other user idle or gone: its files that need the agent are done), within a bound."""

from __future__ import annotations

import os
import time

from ..files import read_json
from . import procs

POLL_S = 0.2
BOUND_S = 300.0
"""The longest a process waits for the other workers' tests on its agents (a hung worker)."""


def others_active(owner: object) -> bool:
    """Whether another live process uses ``owner``'s agent and is not idle (a ``SharedAgent``'s state
    file; one process, or an attached agent: never)."""
    path = getattr(owner, "state_path", None)
    if path is None or not getattr(getattr(owner, "config", None), "managed", False):
        return False
    try:
        state = read_json(path)
    except (OSError, ValueError):
        return False
    idle = set(state.get("idle", [])) if isinstance(state, dict) else set()
    users = state.get("users", []) if isinstance(state, dict) else []
    return any(u != os.getpid() and u not in idle and procs.pid_alive(u) for u in users if isinstance(u, int))


def wait_for_others(owner: object, bound_s: float = BOUND_S) -> None:
    deadline = time.monotonic() + bound_s
    while others_active(owner) and time.monotonic() < deadline:
        time.sleep(POLL_S)
