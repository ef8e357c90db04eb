"""Fixtures of the secrets tests: the report tests' backend (echoes what it is sent) and fake LLM."""

from __future__ import annotations

from tests.reports.conftest import backend, fake_openai  # noqa: F401  (fixtures)
