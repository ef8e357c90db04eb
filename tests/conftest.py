"""Shared by every test under ``tests/``."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_outer_example_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """``examples/conftest.py`` exports the example agent's URL when this session also runs the
    examples; a pytest run a test starts must start its own agent, not share (and change) that one's
    state (its job and retry counters)."""
    monkeypatch.delenv("EXAMPLE_AGENT_URL", raising=False)
