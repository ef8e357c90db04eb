"""The one way the plugin makes an httpx client for an agent or a test's request: proxies, ``.netrc``
and CA settings from the environment are not used (``trust_env=False``; agents are usually on
loopback), and every client shares one TLS context. The LLM client keeps the environment's proxies
and CA settings (a hosted endpoint behind a corporate proxy) with :func:`tls_context` ``(trust_env=True)``.

Building a TLS context loads the CA bundle (~20 ms of CPU each time); a client per agent health poll,
per test run and per LLM endpoint would pay that again and again.
"""

from __future__ import annotations

import ssl
from functools import lru_cache
from typing import Any

import httpx


@lru_cache(maxsize=2)
def tls_context(trust_env: bool = False) -> ssl.SSLContext:
    """The TLS context clients verify servers with: httpx's default (certifi's CA bundle), and with
    ``trust_env`` the CA file or folder that ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name (read once)."""
    return httpx.create_ssl_context(trust_env=trust_env)


def sync_client(**options: Any) -> httpx.Client:
    from .trace_context import sync_add_traceparent

    return httpx.Client(
        trust_env=False, verify=tls_context(), event_hooks={"request": [sync_add_traceparent]}, **options
    )


def async_client(**options: Any) -> httpx.AsyncClient:
    """(Requests made while an execution is traced carry its ``traceparent``: :mod:`.trace_context`.)"""
    from .trace_context import add_traceparent

    return httpx.AsyncClient(
        trust_env=False, verify=tls_context(), event_hooks={"request": [add_traceparent]}, **options
    )
