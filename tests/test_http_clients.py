"""One TLS context per kind of client (pytest_semantictest/http_clients.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import certifi
import pytest

from pytest_semantictest.http_clients import async_client, sync_client, tls_context


@pytest.fixture(autouse=True)
def _fresh_contexts() -> Iterator[None]:
    tls_context.cache_clear()
    yield
    tls_context.cache_clear()


def _one_ca(tmp_path: Path) -> Path:
    bundle = Path(certifi.where()).read_text()
    end = "-----END CERTIFICATE-----"
    first = bundle[bundle.index("-----BEGIN CERTIFICATE-----") : bundle.index(end) + len(end)]
    path = tmp_path / "one-ca.pem"
    path.write_text(first + "\n")
    return path


def test_the_llm_context_honours_ssl_cert_file_and_the_agents_context_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(_one_ca(tmp_path)))
    assert tls_context(trust_env=True).cert_store_stats()["x509_ca"] == 1  # the CA the environment names
    assert tls_context().cert_store_stats()["x509_ca"] > 1  # certifi's bundle, whatever the environment


def test_clients_share_one_context() -> None:
    with sync_client() as first, sync_client(timeout=1) as second:
        assert tls_context.cache_info().misses == 1 and tls_context.cache_info().hits >= 1
        assert first is not second
    asyncio.run(async_client().aclose())
    assert tls_context.cache_info().misses == 1
