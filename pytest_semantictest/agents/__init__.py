"""The agent service: start, attach, stop and share agent processes; talk to them; read traces.

No pytest in here: the plugin's fixtures and the spec formats build on this API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below load on first use: importing one submodule (cleanup) stays cheap
    from .config import AgentConfig, expand_env
    from .correlate import (
        Attribution,
        Classified,
        attribute,
        classify,
        matches_correlate,
        new_test_id,
        resolve_correlate,
    )
    from .errors import AgentConfigError, AgentError, AgentStartError, SessionHookError
    from .hooks import HookContext, SessionHooks
    from .keys import agent_key
    from .local_agent import LocalAgent
    from .placeholders import PlaceholderError, Values, render
    from .process import AgentProcess
    from .protocol import TEST_HEADER, AgentReply, send
    from .shared import AgentHandle, SharedAgent, reap
    from .traces import Hello, ToolCall, TraceBatch, TraceProblem, TraceReader, TurnRecord

_HOME = {
    "AgentConfig": "config",
    "AgentConfigError": "errors",
    "AgentError": "errors",
    "AgentHandle": "shared",
    "AgentProcess": "process",
    "AgentReply": "protocol",
    "AgentStartError": "errors",
    "Attribution": "correlate",
    "Classified": "correlate",
    "Hello": "traces",
    "HookContext": "hooks",
    "LocalAgent": "local_agent",
    "PlaceholderError": "placeholders",
    "SessionHookError": "errors",
    "SessionHooks": "hooks",
    "SharedAgent": "shared",
    "TEST_HEADER": "protocol",
    "ToolCall": "traces",
    "TraceBatch": "traces",
    "TraceProblem": "traces",
    "TraceReader": "traces",
    "TurnRecord": "traces",
    "Values": "placeholders",
    "agent_key": "keys",
    "attribute": "correlate",
    "classify": "correlate",
    "expand_env": "config",
    "matches_correlate": "correlate",
    "new_test_id": "correlate",
    "reap": "shared",
    "render": "placeholders",
    "resolve_correlate": "correlate",
    "send": "protocol",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> object:
    """Load a public name's module on first use (a session without agents imports none of them)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value
