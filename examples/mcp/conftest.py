"""Serves the example MCP server over streamable HTTP for the MCP examples (the stdio examples need
nothing: the plugin starts the server itself).

``pytest_configure`` of a conftest in a subfolder runs when pytest first collects that folder, so the
server starts only when an MCP example runs, in each process that runs one (also each xdist worker),
and stops at the end (and with this process, however it ends). Specs reach it through ``${env.EXAMPLE_MCP_URL}``; set that variable yourself
to point them at another server.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

SERVER = Path(__file__).parent / "mcp_server.py"
_STARTED = "EXAMPLE_MCP_URL_STARTED_HERE"
_process: subprocess.Popen[bytes] | None = None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes], seconds: float = 120.0) -> None:
    """Until the server listens (it imports the MCP SDK first: ~1 s of CPU, much longer on a busy
    machine; a server that exits is said at once)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise pytest.UsageError(
                f"the example MCP server exited with status {process.returncode} before it listened"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise pytest.UsageError(f"the example MCP server did not listen on 127.0.0.1:{port} within {seconds:g} s")


_shared: list[pytest.Config] = []
"""Runs inside this one that use its server."""
_outer: list[tuple[subprocess.Popen[bytes] | None, str | None, str | None]] = []
"""What a pytest run started inside this one (a test's own run, in this process) replaced, put back at
its end: the outer run's server and variables."""


def pytest_configure(config: pytest.Config) -> None:
    global _process
    url = os.environ.get("EXAMPLE_MCP_URL")
    if url and url != os.environ.get(_STARTED):  # yours (an xdist worker inherits its controller's: not that)
        return
    if _process is not None and _process.poll() is None:  # a run inside this one (in this process) shares
        _shared.append(config)  # it: the outer run's tests still use it (and the variable) meanwhile
        return
    _outer.append((_process, url, os.environ.get(_STARTED)))
    _process = None
    port = _free_port()
    _process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", "--port", str(port), "--exit-with-parent"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(_stop)  # also when pytest_unconfigure does not reach this conftest (an xdist worker)
    try:
        _wait_for(port, _process)
    except BaseException:
        _stop()
        raise
    os.environ["EXAMPLE_MCP_URL"] = os.environ[_STARTED] = f"http://127.0.0.1:{port}/mcp"


def _stop() -> None:
    global _process
    if _process is None:
        return
    _process.terminate()
    try:
        _process.wait(10)
    except subprocess.TimeoutExpired:
        _process.kill()
        _process.wait()
    _process = None
    os.environ.pop("EXAMPLE_MCP_URL", None)
    os.environ.pop(_STARTED, None)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _process
    if config in _shared:
        _shared.remove(config)
        return
    if not _outer:
        return
    _stop()
    _process, url, started = _outer.pop()
    for name, value in (("EXAMPLE_MCP_URL", url), (_STARTED, started)):
        if value is not None:
            os.environ[name] = value
