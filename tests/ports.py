"""Free TCP ports for the agents and servers the tests start later, that nothing else takes meanwhile.

A port found by binding port 0 is free only while that socket is open: once it closes, the kernel may
hand the port to the next socket that binds port 0 (another test's server) or to an outgoing
connection. Under xdist, eight workers do both all the time, and beside ``stress-ng`` an agent once
found the port chosen for it taken by another test's server. So the ports come from below the
kernel's ephemeral range, which neither of those uses: each xdist worker has a slice of its own, each
process goes through its slice from a random place on, and each port is checked free by binding it.
"""

from __future__ import annotations

import os
import random
import socket
import threading
from pathlib import Path

LOWEST = 15000
"""Below it: the usual ports of services a machine may run."""
SLICES = 16
"""Parts of the range: one for a process outside xdist, one for each worker (``gwN``, N mod 15)."""
_lock = threading.Lock()
_next: list[int] = []


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out for port 0 and outgoing connections (Linux; else its
    default)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _slice() -> range:
    """This process's part of the ports below the ephemeral range (empty where there is no room)."""
    size = (_ephemeral_low() - LOWEST) // SLICES
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")[2:]
    index = 1 + int(worker) % (SLICES - 1) if worker.isdigit() else 0
    start = LOWEST + index * size
    return range(start, start + max(size, 0))


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port nothing listens on, for a server a test starts later; each call of a process another."""
    ports = _slice()
    with _lock:
        if not _next:
            _next.append(random.randrange(len(ports)) if ports else 0)
        for _ in range(len(ports)):
            port = ports[_next[0] % len(ports)]
            _next[0] += 1
            if _free(port):
                return port
    with socket.socket() as sock:  # no room below the ephemeral range: the kernel's choice
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
