"""What a check reads of the run besides its DataBus, as Protocols.

The engine hands each check the session's run context (``run_context.RunContext``); a check
reads its settings, its LLM client and judge, and the agent pool (``run_context.AgentPoolView``),
and nothing else. These Protocols name that much, so the checks need not import the agents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..llm.client import LLMClient
    from ..run_context import AgentPoolView, JudgeService, LLMService, LLMUnavailable, RunContext


class CheckSettings(Protocol):
    """The run settings a check obeys (``run_context.Settings``)."""

    @property
    def require_judge(self) -> bool: ...

    @property
    def judge_samples(self) -> int: ...

    @property
    def fail_unstable(self) -> bool: ...


class CheckRun(Protocol):
    """The run context as a check sees it (``run_context.RunContext``)."""

    @property
    def settings(self) -> CheckSettings: ...

    @property
    def llm(self) -> LLMService | None:
        """The LLM client (``llm.client.LLMClient``; a judged check reads it as that)."""

    @property
    def judge(self) -> JudgeService | None: ...

    @property
    def agents(self) -> AgentPoolView | None: ...

    def llm_unavailable(self, role: str) -> LLMUnavailable | None:
        """Why the LLM ``role`` cannot answer in this run, None when it can (``RunContext``'s rule)."""


def llm_client(run: CheckRun) -> LLMClient:
    """The run's LLM client, once :meth:`CheckRun.llm_unavailable` said the role can answer (the run
    context holds it as a Protocol because it sits below ``llm/``)."""
    from ..llm.client import LLMClient

    llm = run.llm
    if not isinstance(llm, LLMClient):
        raise TypeError(f"the run's LLM client is a {type(llm).__name__}, not an LLMClient")
    return llm


if TYPE_CHECKING:

    def _conforms(run: RunContext) -> CheckRun:
        """The type checker's proof that the run context the engine passes is what checks read."""
        return run
