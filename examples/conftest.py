"""Starts the bundled example agent server for the example specs, and replays the examples'
recorded judge answers.

The server runs in a daemon thread of each pytest process (also each xdist worker), so it
cannot outlive the run. Specs reach it through ``${env.EXAMPLE_AGENT_URL}``; set that
variable yourself to point the examples at another server.

The LLM judge's answers for the examples are in ``judge-cache/`` (see its README): unless you
choose a cache mode or directory yourself, the examples replay them offline (``replay`` mode, no API
key needed). Re-record them with a real judge:
``OPENAI_API_KEY=sk-... python -m pytest examples --semantictest-llm-cache=write``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "agents"))

collect_ignore = ["your-agent"]
"""A project of its own (its pytest.ini starts its agent): ``cd examples/your-agent && python -m pytest``
(docs/your-agent.md)."""

_server: Any = None
JUDGE_CACHE = Path(__file__).parent / "judge-cache"
_STARTED = "EXAMPLE_AGENT_URL_STARTED_HERE"
"""The URL of the server this conftest started, so that an xdist worker tells it from one you named."""


def pytest_configure(config: pytest.Config) -> None:
    from pytest_semantictest.api import set_default

    set_default(config, "llm-cache-dir", str(JUDGE_CACHE))
    set_default(config, "llm-cache", "replay")


def pytest_sessionstart(session: pytest.Session) -> None:
    global _server
    url = os.environ.get("EXAMPLE_AGENT_URL")
    if url and url != os.environ.get(_STARTED):  # yours (an xdist worker inherits its controller's: not that)
        return
    from chat_agent import start_server

    _server, url = start_server(0)
    os.environ["EXAMPLE_AGENT_URL"] = os.environ[_STARTED] = url


def pytest_sessionfinish(session: pytest.Session) -> None:
    global _server
    if _server is not None:
        _server.shutdown()
        _server = None
        os.environ.pop("EXAMPLE_AGENT_URL", None)
        os.environ.pop(_STARTED, None)
