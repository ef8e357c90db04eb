"""What a check reads of the run besides its DataBus, as Protocols.

The engine hands each check the session's run context (``run_context.RunContext``); a check
reads its settings, its LLM client and judge, and the agent pool, and nothing else. These
Protocols name that much, so the checks need import neither the run context nor the agents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..llm.client import LLMClient
    from ..run_context import RunContext


class LateCallsJudge(Protocol):
    """A passed execution judged again on tool calls read after its window (``expectations.LateJudge``)."""

    def __call__(self, calls: Sequence[object]) -> str | None: ...

    def suspect(self, calls: Sequence[object]) -> str | None: ...


class CheckedAgent(Protocol):
    """A running agent as a tool-call check uses it (``agents.live.LiveAgent``)."""

    @property
    def config(self) -> object:
        """Its configuration (``settle_time_ms`` is read from it)."""

    def note_undeclared(self, names: Iterable[str]) -> None: ...

    async def late_window(self, read_to: int, test_id: str) -> tuple[Sequence[object], Sequence[object]]: ...

    def judge_late_calls(self, test_id: str, judge: LateCallsJudge) -> None: ...


class CheckedAgents(Protocol):
    """The session's agents by key (``agents.pool.AgentPool``)."""

    def get(self, key: str) -> CheckedAgent: ...


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
    def llm(self) -> LLMClient | None: ...

    @property
    def judge(self) -> object: ...

    @property
    def agents(self) -> CheckedAgents | None: ...


if TYPE_CHECKING:

    def _conforms(run: RunContext) -> CheckRun:
        """The type checker's proof that the run context the engine passes is what checks read."""
        return run
