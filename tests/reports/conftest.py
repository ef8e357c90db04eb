"""Fixtures of the report tests (the shared pieces are in ``scenario.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.fake_openai import FakeOpenAI
from tests.reports.scenario import Backend


@pytest.fixture
def backend() -> Iterator[Backend]:
    server = Backend()
    yield server
    server.close()


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAI() as server:
        yield server
