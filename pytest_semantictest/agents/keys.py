"""The keys agents are known by: one a process (:func:`agent_key`), one a way of talking to it
(:func:`live_key`), and the requirement a spec file states under that key (:func:`requirement`)."""

from __future__ import annotations

import hashlib
import json
from urllib.parse import urlsplit

from ..model import AgentRequirement
from .config import AgentConfig


def agent_key(config: AgentConfig) -> str:
    """A file-name-safe key for "the same agent process": its address (scheme, host and port: the
    endpoint's path is a way of talking to it, not another process), start command, cwd, env."""
    parts = urlsplit(config.endpoint)
    ident = {
        "endpoint": f"{parts.scheme}://{parts.netloc}",
        "start": config.start,
        "argv": config.start_argv,
        "cwd": str(config.cwd),
        "env": config.env,
    }
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]


TURN_FIELDS = (
    "endpoint",
    "request_method",
    "request_headers",
    "request_body",
    "response_path",
    "settle_time_ms",
    "timeout_ms",
    "session_setup",
    "session_teardown",
    "correlate",
    "traces",
)
"""What a turn uses besides the process: two files that talk to one process differently each keep theirs."""


def live_key(config: AgentConfig, calls_from: str = "traces") -> str:
    """The key of one way of talking to an agent: its process (:func:`agent_key`) plus the turn settings."""
    turn = [{name: getattr(config, name) for name in TURN_FIELDS}, calls_from]
    digest = hashlib.sha256(json.dumps(turn, sort_keys=True, default=repr).encode()).hexdigest()[:8]
    return f"{agent_key(config)}-{digest}"


def requirement(
    config: AgentConfig, *, observe: bool = False, calls_from: str = "traces"
) -> AgentRequirement:
    """An agent a file needs, under its :func:`live_key` (computed here only; the look-ahead and the
    runtime read ``key``)."""
    return AgentRequirement(live_key(config, calls_from), config, observe, calls_from)
