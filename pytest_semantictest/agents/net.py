"""Where an endpoint listens, whether something answers there, and who."""

from __future__ import annotations

import shutil
import socket
import subprocess
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # httpx is imported on the first probe: collecting a spec file needs none
    import httpx


def endpoint_address(url: str) -> tuple[str, int]:
    """Host and port of a URL; the port defaults by scheme (80, 443)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "localhost", port


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """Whether anything accepts a TCP connection on ``host:port`` (every resolved address)."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return False
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(timeout)
            try:
                sock.connect(address)
            except OSError:
                continue
            return True
    return False


def health_status(url: str, timeout: float, client: httpx.Client | None = None) -> int | None:
    """The status code of ``GET url``, or None when nothing answered in time (``client``: one that
    a readiness wait keeps for all its probes)."""
    import httpx

    from ..http_clients import sync_client

    if client is None:
        with sync_client(timeout=timeout) as own:
            return health_status(url, timeout, own)
    try:
        return client.get(url, timeout=timeout).status_code
    except httpx.HTTPError:
        return None


def listener(port: int) -> str | None:
    """``"<command> (pid N)"`` for whatever listens on ``port``, if ``lsof`` can tell."""
    lsof = shutil.which("lsof")
    if lsof is None:
        return None
    try:
        output = subprocess.run(
            [lsof, "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-Fpc"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    pid = command = None
    for line in output.splitlines():
        if line.startswith("p") and pid is None:
            pid = line[1:]
        elif line.startswith("c") and command is None:
            command = line[1:]
    if pid is None:
        return None
    return f"{command} (pid {pid})" if command else f"pid {pid}"
