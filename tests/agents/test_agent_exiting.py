"""A process whose main thread has exited while another thread still serves its port is not gone.

Linux shows such a thread-group leader as a zombie, yet its sockets stay open until the last thread
exits: a worker that stopped another worker's agent and took the zombie for "gone" started the next
agent on a port that still answered ("port ... is already in use").
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_semantictest.agents import procs
from pytest_semantictest.agents.net import port_open

LEADER_EXITS = """
import ctypes, socket, sys, threading, time
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
def serve():
    while True:
        conn, _ = server.accept()
        conn.close()
threading.Thread(target=serve).start()
ctypes.CDLL(None).pthread_exit(None)  # the main thread (the group leader) exits; the process goes on
"""


def _zombie_leader(pid: int) -> bool:
    """Whether the process shows its group leader as a zombie within 5 s."""
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_zombie_leader_with_a_live_thread_is_alive() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", LEADER_EXITS], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        assert _zombie_leader(child.pid)
        assert port_open("127.0.0.1", port)  # it still listens
        assert procs.pid_alive(child.pid)
        assert procs.group_alive(child.pid)
    finally:
        os.killpg(child.pid, 9)
        child.wait(timeout=5)
    assert not procs.group_alive(child.pid)


DYING = """
import ctypes, threading, time
threading.Thread(target=time.sleep, args=(0.3,)).start()  # the last thread, about to end
ctypes.CDLL(None).pthread_exit(None)
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_dying_process_is_not_alive_once_settled_a_serving_one_is() -> None:
    """A recorded agent is reused only if it is alive once settled: a killed agent shows a zombie
    leader while its threads exit (a shared agent was reused that way, then answered nothing)."""
    dying = subprocess.Popen([sys.executable, "-c", DYING])
    serving = subprocess.Popen(
        [sys.executable, "-c", LEADER_EXITS], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert serving.stdout is not None
        serving.stdout.readline()
        assert _zombie_leader(dying.pid) and procs.pid_alive(dying.pid)  # still exiting
        assert not procs.alive_settled(dying.pid, wait_s=5)
        assert _zombie_leader(serving.pid)
        started = time.monotonic()
        assert procs.alive_settled(serving.pid, wait_s=0.2)
        assert time.monotonic() - started >= 0.2
    finally:
        dying.wait(timeout=5)
        os.killpg(serving.pid, 9)
        serving.wait(timeout=5)
