"""Fixtures for the LLM tests: a fake OpenAI-compatible server and an environment without keys."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def _no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real endpoint or key leaks into these tests from the developer's environment."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started fake server; ``fake_openai.url`` is its base URL (``http://127.0.0.1:<port>/v1``)."""
    with FakeOpenAI() as server:
        yield server
