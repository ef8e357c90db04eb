"""LLM infrastructure failures: never a verdict, always an error with the reason."""

from __future__ import annotations


class LLMError(Exception):
    """An LLM call could not produce a usable answer (unreachable, refused, unparseable, ...)."""


class ReplayMiss(LLMError):
    """``replay`` cache mode and no recorded answer for this call."""


class NotConfigured(LLMError):
    """No endpoint (API key or base URL) is configured for a role that needs the network."""
