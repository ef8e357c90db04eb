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

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "agents"))

collect_ignore = ["your-agent"]
"""A project of its own (its pytest.ini starts its agent): ``cd examples/your-agent && python -m pytest``
(docs/your-agent.md)."""

_server: Any = None


def _free_ports(count: int) -> tuple[str, ...]:
    import socket

    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return tuple(str(sock.getsockname()[1]) for sock in sockets)
    finally:
        for sock in sockets:
            sock.close()


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


JUDGE_CACHE = Path(__file__).parent / "judge-cache"
_STARTED = "EXAMPLE_AGENT_URL_STARTED_HERE"
"""The URL of the server this conftest started, so that an xdist worker tells it from one you named."""


def pytest_configure(config: pytest.Config) -> None:
    from pytest_semantictest.api import set_default

    set_default(config, "llm-cache-dir", str(JUDGE_CACHE))
    set_default(config, "llm-cache", "replay")
    set_default(config, "otel", True)  # the traces examples read the spans their agent exports
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # (a worker keeps its controller's: one agent for all)
        # the MCP examples' agents listen on ports of this run's own (two runs at once must not share)
        os.environ["MCP_EXAMPLE_PORT"], os.environ["MCP_EXAMPLE_YAO_PORT"] = _free_ports(2)


OTEL_MISSING = next(
    (
        name
        for name in ("pydantic_ai", "opentelemetry.sdk", "opentelemetry.exporter.otlp")
        if not _importable(name)
    ),
    None,
)
"""A package the instrumented agent of ``examples/traces/`` needs and this environment lacks."""
_otel_agent: subprocess.Popen[str] | None = None
_otel_owner: pytest.Config | None = None
"""The run that started it (a run started inside that one, in this process, leaves it alone)."""
_missing: list[str] = []
"""A module the traces agent could not import when it started (its tests are skipped, saying so)."""
_OTEL_STARTED = "OTEL_AGENT_URL_STARTED_HERE"
"""The URL of the traces agent a run of these examples started (a pytest run started inside it, which
inherits the variable, starts its own: that agent exports to the outer run's receiver)."""


def _start_otel_agent(config: pytest.Config) -> None:
    """The pydantic-ai weather agent of ``examples/traces/``, exporting its spans to this run's OTLP
    receiver (``api.otel_exporter_env``): ``${env.OTEL_AGENT_URL}`` in the specs."""
    global _otel_agent, _otel_owner
    from pytest_semantictest.api import otel_exporter_env

    _otel_owner = config

    env = {**os.environ, **otel_exporter_env(config), "PYTHONUNBUFFERED": "1"}
    agent = Path(__file__).parent / "agents" / "otel_agent.py"
    _otel_agent = subprocess.Popen(
        [sys.executable, str(agent)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    assert _otel_agent.stdout is not None
    line = _otel_agent.stdout.readline()  # "listening on http://127.0.0.1:PORT", or why it could not start
    if not line.startswith("listening on "):
        said = line + _otel_agent.stdout.read()
        _otel_agent.kill()
        _otel_agent.wait()
        _otel_agent = None
        missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", said)
        if missing is None:
            raise pytest.UsageError(f"examples: the traces example agent did not start: {said}")
        _missing.append(missing.group(1))  # an optional dependency the agent needs: its tests are skipped
        os.environ["OTEL_AGENT_URL"] = "http://127.0.0.1:9"
        return
    os.environ["OTEL_AGENT_URL"] = os.environ[_OTEL_STARTED] = line.split()[-1]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> None:
    """The traces examples' agent starts when one of their files is collected (their specs name its URL)."""
    if file_path.parent != Path(__file__).parent / "traces" or _otel_agent is not None:
        return
    given = os.environ.get("OTEL_AGENT_URL")
    if given and given != os.environ.get(_OTEL_STARTED):  # yours; not one an outer run started here
        return
    if OTEL_MISSING is not None:  # the files still collect; their tests are skipped (below)
        os.environ["OTEL_AGENT_URL"] = "http://127.0.0.1:9"
    else:
        _start_otel_agent(parent.config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = OTEL_MISSING or next(iter(_missing), None)
    if missing is None:
        return
    reason = f"the traces example agent needs {missing}, which is not installed: pip install -e '.[examples]'"
    for item in items:
        if Path(str(item.path)).parent == Path(__file__).parent / "traces":
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_sessionstart(session: pytest.Session) -> None:
    global _server
    url = os.environ.get("EXAMPLE_AGENT_URL")
    if url and url != os.environ.get(_STARTED):  # yours (an xdist worker inherits its controller's: not that)
        return
    from chat_agent import start_server

    _server, url = start_server(0)
    os.environ["EXAMPLE_AGENT_URL"] = os.environ[_STARTED] = url


def pytest_sessionfinish(session: pytest.Session) -> None:
    global _server, _otel_agent
    if _otel_agent is not None and session.config is _otel_owner:
        _otel_agent.terminate()
        try:
            _otel_agent.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _otel_agent.kill()
            _otel_agent.wait()
        _otel_agent = None
        os.environ.pop("OTEL_AGENT_URL", None)
        os.environ.pop(_OTEL_STARTED, None)
    if _server is not None:
        _server.shutdown()
        _server = None
        os.environ.pop("EXAMPLE_AGENT_URL", None)
        os.environ.pop(_STARTED, None)
