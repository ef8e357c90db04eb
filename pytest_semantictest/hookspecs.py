"""Hooks pytest-semantictest adds (registered through ``pytest_addhooks``); implement them in a
``conftest.py`` or a plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .formats.compliance.models import Setup


def pytest_semantictest_compliance_setup(config: pytest.Config, setup: Setup) -> object:
    """Called once per compliance file (per process), before its first test case runs.

    ``setup`` is the file's ``## Setup`` as structured data: ``agents`` (name, instructions,
    tools, handoffs, skills, extra), ``tool_definitions``, ``environment``, ``base_url`` (where
    the requests go) and ``document`` (the front matter name). Create the agents on the server
    under test here. An exception makes every case of the file an error naming it.
    """
