"""The agent service: start, attach, stop and share agent processes; talk to them; read traces.

No pytest in here: the plugin's fixtures and the spec formats build on this API.
"""

from __future__ import annotations

from .config import AgentConfig, expand_env, mask
from .correlate import Attribution, Classified, attribute, classify, matches_correlate, new_test_id, resolve_correlate
from .errors import AgentConfigError, AgentError, AgentStartError, SessionHookError
from .hooks import HookContext, SessionHooks
from .placeholders import PlaceholderError, Values, render
from .process import AgentProcess
from .protocol import TEST_HEADER, AgentReply, send
from .shared import AgentHandle, LocalAgent, SharedAgent, agent_key, reap
from .traces import Hello, ToolCall, TraceBatch, TraceProblem, TraceReader, TurnRecord

__all__ = [
    "TEST_HEADER", "AgentConfig", "AgentConfigError", "AgentError", "AgentHandle", "AgentProcess",
    "AgentReply", "AgentStartError", "Attribution", "Classified", "Hello", "HookContext", "LocalAgent",
    "PlaceholderError", "SessionHookError", "SessionHooks", "SharedAgent", "ToolCall", "TraceBatch",
    "TraceProblem", "TraceReader", "TurnRecord", "Values", "agent_key", "attribute", "classify",
    "expand_env", "mask", "matches_correlate", "new_test_id", "reap", "render", "resolve_correlate", "send",
]
