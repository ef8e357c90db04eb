"""The agent service's exceptions: one base, split by when they happen."""

from __future__ import annotations


class AgentError(Exception):
    """Something about the agent went wrong; the message says what, secrets masked."""


class AgentConfigError(AgentError):
    """The agent configuration cannot be used (a ``${VAR}`` that is not set, a bad command)."""


class AgentStartError(AgentError):
    """The agent could not be started or reached: nothing can run against it."""


class SessionHookError(AgentError):
    """A ``session.setup`` / ``session.teardown`` hook failed or cannot be loaded."""
