"""The one way the plugin makes an httpx client: proxies and ``.netrc`` from the environment are not
used (``trust_env=False``; agents are usually on loopback), and every client shares one TLS context.

Building a TLS context loads the CA bundle (~20 ms of CPU each time); a client per agent health poll,
per test run and per LLM endpoint would pay that again and again.
"""

from __future__ import annotations

import ssl
from functools import lru_cache
from typing import Any

import httpx


@lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The TLS context every client verifies servers with (httpx's default: certifi's CA bundle)."""
    return httpx.create_ssl_context(trust_env=False)


def sync_client(**options: Any) -> httpx.Client:
    return httpx.Client(trust_env=False, verify=tls_context(), **options)


def async_client(**options: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(trust_env=False, verify=tls_context(), **options)
