"""What a running pipeline can use besides its DataBus: HTTP pool, environment, settings."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .stats import PassRateTest

if TYPE_CHECKING:
    import httpx


@dataclass
class Settings:
    """Run settings, from ``--semantictest-*`` options and ini keys."""

    http_timeout_ms: int = 30000
    max_loop_iterations: int = 100
    trace_value_chars: int = 2000
    require_judge: bool = False
    all_runs: bool = False
    """A repeated case makes all its runs (else it stops once its outcome is decided)."""
    judge_samples: int = 1
    """How many times each judged check asks its judge (``--semantictest-judge-samples``)."""
    fail_unstable: bool = False
    """A judged check whose samples disagree fails (``--semantictest-fail-unstable``)."""
    pass_rate: PassRateTest | None = None
    """The run's sequential pass-rate test (``--semantictest-pass-rate``), for every case that does not
    ask for its own."""


@dataclass
class RunContext:
    """Shared by every pipeline of a session; one keep-alive HTTP pool for all tests.

    ``llm`` is the role-aware LLM client (``pytest_semantictest.llm.client.LLMClient``) and
    ``judge`` the LLM judge built on it; ``judge`` is None when no judge is configured.
    """

    settings: Settings = field(default_factory=Settings)
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    rootdir: Path | None = None
    judge: Any = None
    llm: Any = None
    agents: Any = None
    """The session's agent pool (``pytest_semantictest.agents.live.AgentPool``), once used."""
    secret_env: Callable[[str], bool] | None = None
    """Whether an environment variable's name says it holds a secret (the session's rule): a trace
    records such a ``${env.NAME}`` as written, never its value."""
    redactor: Any = None
    """The session's one ``redact.Redactor``: a block registers the secrets it sends (headers)."""
    _http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        """The session's HTTP client, created on first use."""
        if self._http is None:
            import httpx

            from .http_clients import async_client

            limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
            self._http = async_client(limits=limits, follow_redirects=False)
        return self._http

    async def aclose_http(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def aclose(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()
        await self.aclose_http()
