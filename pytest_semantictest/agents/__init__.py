"""The agent service: start, attach, stop and share agent processes; talk to them; read traces.

No pytest in here: the plugin's fixtures and the spec formats build on this API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below load on first use: importing one submodule (cleanup) stays cheap
    from .config import AgentConfig as AgentConfig
    from .config import expand_env as expand_env
    from .correlate import Attribution as Attribution
    from .correlate import Classified as Classified
    from .correlate import attribute as attribute
    from .correlate import classify as classify
    from .correlate import matches_correlate as matches_correlate
    from .correlate import new_test_id as new_test_id
    from .correlate import resolve_correlate as resolve_correlate
    from .errors import AgentConfigError as AgentConfigError
    from .errors import AgentError as AgentError
    from .errors import AgentStartError as AgentStartError
    from .errors import SessionHookError as SessionHookError
    from .hooks import HookContext as HookContext
    from .hooks import SessionHooks as SessionHooks
    from .keys import agent_key as agent_key
    from .local_agent import LocalAgent as LocalAgent
    from .placeholders import PlaceholderError as PlaceholderError
    from .placeholders import Values as Values
    from .placeholders import render as render
    from .process import AgentProcess as AgentProcess
    from .protocol import TEST_HEADER as TEST_HEADER
    from .protocol import AgentReply as AgentReply
    from .protocol import send as send
    from .shared import AgentHandle as AgentHandle
    from .shared import SharedAgent as SharedAgent
    from .shared import reap as reap
    from .traces import Hello as Hello
    from .traces import ToolCall as ToolCall
    from .traces import TraceBatch as TraceBatch
    from .traces import TraceProblem as TraceProblem
    from .traces import TraceReader as TraceReader
    from .traces import TurnRecord as TurnRecord

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
