"""Fixtures for the agent service tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_helpers import agent_command

from pytest_semantictest.agents import AgentConfig
from tests.ports import free_port


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def make_config(tmp_path: Path, port: int) -> Any:
    def make(*flags: str, managed: bool = True, **overrides: Any) -> AgentConfig:
        values: dict[str, Any] = {
            "endpoint": f"http://127.0.0.1:{port}/chat",
            "start": agent_command(port, *flags) if managed else None,
            "health": f"http://127.0.0.1:{port}/health",
            "cwd": tmp_path,
            "log_dir": tmp_path / "logs",
            "traces_dir": tmp_path / "traces",
            "startup_timeout_ms": 10000,
            "stop_grace_s": 2.0,
            "hello_timeout_s": 0.5,
            "name": "trace-agent",
        }
        values.update(overrides)
        return AgentConfig(**values)

    return make
