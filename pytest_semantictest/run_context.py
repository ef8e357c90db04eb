"""What a running pipeline can use besides its DataBus: HTTP pool, environment, settings."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .json_types import JSONObject, JSONValue
from .stats import PassRateTest

if TYPE_CHECKING:
    import httpx

    from .spans.source import SpanSource


class LLMService(Protocol):
    """The role-aware LLM client (``llm.client.LLMClient``) as the run context holds it.

    Blocks and checks that ask it for completions import the client's class themselves (this module
    is shared ground, below ``llm/``)."""

    async def aclose(self) -> None: ...

    def configured(self, role: str) -> bool:
        """Whether ``role`` can answer (an endpoint, or every answer from the replay cache)."""


class JudgeService(Protocol):
    """The LLM judge (``llm.judge.Judge``): a judge step's inputs and config in, its verdict out."""

    async def evaluate(
        self, inputs: Mapping[str, JSONValue], config: Mapping[str, JSONValue], repeat: int = 0
    ) -> JSONObject: ...


class LateCallJudging(Protocol):
    """A passed execution judged again on tool calls read after its window."""

    def __call__(self, calls: Sequence[object]) -> str | None: ...

    def suspect(self, calls: Sequence[object]) -> str | None: ...


class RunningAgentConfig(Protocol):
    """What blocks and checks read of a running agent's configuration (``agents.config.AgentConfig``)."""

    @property
    def settle_time_ms(self) -> int:
        """How long after a turn its late tool calls still count (highbar's ``settle_time``)."""


class RunningAgent(Protocol):
    """A running agent of the pool (``agents.live.LiveAgent``) as blocks and checks use it."""

    @property
    def config(self) -> RunningAgentConfig:
        """Its configuration (``agents.config.AgentConfig``)."""

    async def turn(
        self,
        client: httpx.AsyncClient,
        message: str,
        test_id: str,
        *,
        observe: bool,
        test_name: str = "",
        session: JSONObject | None = None,
        spans: SpanSource | None = None,
    ) -> JSONObject: ...

    async def open_session(self, test_id: str, test_name: str, spec_path: str) -> JSONObject: ...

    async def close_session(
        self, test_id: str, test_name: str, spec_path: str, session: JSONObject
    ) -> None: ...

    def note_undeclared(self, names: Iterable[str]) -> None: ...

    async def late_window(self, read_to: int, test_id: str) -> tuple[Sequence[object], Sequence[object]]: ...

    def judge_late_calls(self, test_id: str, judge: LateCallJudging) -> None: ...


class AgentPoolView(Protocol):
    """The session's agent pool (``agents.pool.AgentPool``) as a running pipeline reads it."""

    def get(self, key: str) -> RunningAgent: ...


class Asker(Protocol):
    """What asks a person for an interactive case's next message (``blocks.interactive.Terminal``)."""

    async def ask(self, shown: str, prompt: str, timeout_s: float | None) -> str | None: ...


class SecretRegistry(Protocol):
    """The session's redactor (``report.redact.Redactor``) as a block registers what it sends."""

    def add(self, values: Iterable[str], name: str | None = None) -> None: ...

    def learn(self, value: JSONValue) -> None: ...

    def text(self, value: str) -> str: ...


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
    inconclusive: str = "fail"
    """What a sequential decision that ran out of runs is (``--semantictest-inconclusive``): ``fail``
    (red, the default) or ``skip`` (reported as skipped, saying so)."""


HOW_TO_CONFIGURE = (
    "set OPENAI_API_KEY (or --semantictest-llm-base-url for an endpoint that needs no key), or run with "
    "--semantictest-llm-cache=replay and a recorded cache"
)


@dataclass(frozen=True)
class LLMUnavailable:
    """An LLM role this run cannot ask: the one wording of why, and whether it makes the test an ERROR.

    Under ``--semantictest-require-judge`` (``error``) a judged part that cannot be judged is an ERROR;
    otherwise it is "not evaluated" (a skip, or a skipped check): never a pass, never a failure."""

    role: str
    error: bool

    def __str__(self) -> str:
        said = f"LLM {self.role} not configured"
        return f"{said} and --semantictest-require-judge is set: {HOW_TO_CONFIGURE}" if self.error else said


def llm_unavailable(role: str, *, configured: bool, require: bool) -> LLMUnavailable | None:
    """The rule for an LLM role: None when it can answer, else why not (see :class:`LLMUnavailable`).
    The pytest fixtures, which hold a client rather than a run context, ask it directly."""
    return None if configured else LLMUnavailable(role, error=require)


@dataclass
class RunContext:
    """Shared by every pipeline of a session; one keep-alive HTTP pool for all tests.

    ``llm`` is the role-aware LLM client (``pytest_semantictest.llm.client.LLMClient``) and
    ``judge`` the LLM judge built on it; ``judge`` is None when no judge is configured.
    """

    settings: Settings = field(default_factory=Settings)
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    rootdir: Path | None = None
    judge: JudgeService | None = None
    llm: LLMService | None = None
    agents: AgentPoolView | None = None
    """The session's agent pool (``pytest_semantictest.agents.live.AgentPool``), once used."""
    secret_env: Callable[[str], bool] | None = None
    """Whether an environment variable's name says it holds a secret (the session's rule): a trace
    records such a ``${env.NAME}`` as written, never its value."""
    redactor: SecretRegistry | None = None
    """The session's one ``redact.Redactor``: a block registers the secrets it sends (headers)."""
    spans: SpanSource | None = None
    """Where a test reads the spans its agent exported (``--semantictest-otel``; None: the receiver is off)."""
    terminal: Asker | None = None
    """Who answers an interactive case (a test's double); None: the controlling terminal, if usable."""
    _http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        """The session's HTTP client, created on first use."""
        if self._http is None:
            import httpx

            from .http_clients import async_client

            # as many kept alive as may be open: 16 items at once with their runs in batches of 5 put
            # 80 requests in flight, and with 20 kept nearly every run opened a new connection (and
            # httpcore scanned the pool of those closing on each request)
            limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
            self._http = async_client(limits=limits, follow_redirects=False)
        return self._http

    def llm_unavailable(self, role: str) -> LLMUnavailable | None:
        """Whether this run can ask the LLM ``role`` (judge, validator, simulator, ...): None when it
        can, else why not and whether that is an ERROR. The judge role needs the judge built on it."""
        configured = self.llm is not None and self.llm.configured(role)
        if role == "judge":
            configured = configured and self.judge is not None
        return llm_unavailable(role, configured=configured, require=self.settings.require_judge)

    async def aclose_http(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def aclose(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()
        await self.aclose_http()
