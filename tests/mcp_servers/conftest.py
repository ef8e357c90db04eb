"""Fixtures for the MCP tests: the example server's path, processes found by tag in /proc, the 1.x SDK's
Python (a separate venv, ``SEMANTICTEST_PARTNER_PYTHON``), a server served over streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ports import free_port
from tests.shared import REPO

SERVER = REPO / "examples" / "mcp" / "mcp_server.py"
ENV = ("COMPLIANCE_MCP_URL", "COMPLIANCE_MCP_COMMAND", "OPENAI_API_KEY", "OPENAI_BASE_URL", "EXAMPLE_MCP_URL")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def alive(tag: str) -> list[int]:
    """Processes still running whose command line holds ``tag`` (zombies excluded)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture
def tag() -> str:
    return f"mcp-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def partner_python() -> str:
    """The Python of the venv with the 1.x SDK (servers in the wild still run it). (Module-scoped so
    that a module-scoped server of that SDK can use it; it only reads the environment.)"""
    path = os.environ.get("SEMANTICTEST_PARTNER_PYTHON")
    if not path or not Path(path).exists():
        pytest.skip(
            "SEMANTICTEST_PARTNER_PYTHON is not set (or names no file): the MCP 1.x SDK server needs the "
            "partner venv that .ci/run creates"
        )
    return path


def serve_http(python: str, *args: str) -> Iterator[str]:
    """The example server over streamable HTTP on a free port; stopped after."""
    port = free_port()
    process = subprocess.Popen(
        [python, str(SERVER), "--http", "--port", str(port), "--exit-with-parent", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=str(SERVER.parent),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"the MCP server exited with {process.returncode}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the MCP server did not listen within 60 s"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The 2.x SDK's example server over HTTP, one for the module's tests (each server start costs ~0.9 s
    of CPU): its tools are pure functions and each client's session is its own, so no test sees state
    another left."""
    yield from serve_http(sys.executable)
