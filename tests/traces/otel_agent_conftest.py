"""A conftest that runs the instrumented pydantic-ai example agent for a pytester run (the docs' recipe
for an agent a conftest starts: ``api.otel_exporter_env`` points its exporter at the run's receiver),
with the agent's switches (``WEATHER_AGENT_*``) set as a test asks."""

from __future__ import annotations

from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "examples" / "agents" / "otel_agent.py"


def agent_conftest(**switches: str) -> str:
    """The conftest's text: the agent's URL in ``OTEL_AGENT_URL`` and ``COMPLIANCE_BASE_URL``."""
    return f"""
import os, subprocess, sys
from pytest_semantictest.api import otel_exporter_env

_agent = None

def pytest_sessionstart(session):
    global _agent
    env = {{**os.environ, **otel_exporter_env(session.config), **{switches!r}}}
    _agent = subprocess.Popen([sys.executable, {str(AGENT)!r}], stdout=subprocess.PIPE, text=True, env=env)
    url = _agent.stdout.readline().split()[-1]
    os.environ["OTEL_AGENT_URL"] = url
    os.environ["COMPLIANCE_BASE_URL"] = url

def pytest_sessionfinish(session):
    _agent.terminate()
    _agent.wait(timeout=30)
"""
