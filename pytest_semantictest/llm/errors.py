"""LLM infrastructure failures: never a verdict, always an error with the reason."""

from __future__ import annotations

REQUIRE_JUDGE_MESSAGE = (
    "LLM judge not configured and --semantictest-require-judge is set: set OPENAI_API_KEY (or "
    "--semantictest-llm-base-url for an endpoint that needs no key), or run with "
    "--semantictest-llm-cache=replay and a recorded cache"
)


class LLMError(Exception):
    """An LLM call could not produce a usable answer (unreachable, refused, unparseable, ...)."""


class ReplayMiss(LLMError):
    """``replay`` cache mode and no recorded answer for this call."""


class NotConfigured(LLMError):
    """No endpoint (API key or base URL) is configured for a role that needs the network."""
