"""The session's services in one object: settings, environment, LLM clients, agent pool, redactor.

Built on first use (an idle session pays nothing) and kept in ``config.stash``; the pytest layer
(``plugin.py``, ``nodes.py``, the formats' pytest glue) reaches it with :func:`runtime`.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import options

if TYPE_CHECKING:
    from .engine.session import Session
    from .report.redact import Redactor


class Runtime:
    """Per-process state, created on first use so idle sessions pay nothing."""

    def __init__(self, config: pytest.Config) -> None:
        from .dotenv import environment
        from .engine.context import RunContext
        from .engine.session import Session

        rootdir = Path(str(config.rootpath))
        ctx = RunContext(options.settings(config), environment(rootdir), rootdir)
        self.llm_config = options.llm_config(config, ctx.env, rootdir)
        from .llm import build

        ctx.llm, ctx.judge = build(self.llm_config, scrub=lambda entry: self.redactor.data(entry))
        self.config = config
        self.session: Session = Session(ctx)
        self.context = ctx
        self.concurrency: int = options.value(config, "concurrency")
        self.unrunnable = False  # a file's agent could not be started or used (highbar's exit 2)
        ctx.redactor = self.redactor  # one per session: every format registers its secrets with it

    def run(self, coro: Any) -> Any:
        return self.session.run(coro)

    def acquire_agents(self, requirements: list[Any], *, for_file: bool = True) -> None:
        """Start or attach each agent a file needs (shared under xdist, kept for the next file that
        needs the same). A failure here means the file's tests could not run: exit status 2."""
        if not requirements:
            return
        try:
            self._acquire(requirements, for_file)
        except Exception:
            if for_file:
                self.unrunnable = True
            raise

    def _acquire(self, requirements: list[Any], for_file: bool) -> None:
        # values expanded from ${ENV} into an agent's config are secrets in every report (highbar's rule)
        self.redactor.add(value for req in requirements for value in getattr(req.config, "secrets", ()))
        if self.context.agents is None:
            from .agents.live import AgentPool

            shared = getattr(self.config, "workerinput", {}).get(_AGENTS_DIR)
            self.context.agents = AgentPool(Path(shared) if shared else None)
        for req in requirements:
            self.context.agents.acquire(req.config, observe=req.observe, calls_from=req.calls_from, for_file=for_file)

    def agent_client(self, mapping: dict[str, Any], observe: bool = True) -> Any:
        """An AgentClient for an agent given as highbar's ``agent:`` keys (started once per session)."""
        from .agents.client import AgentClient
        from .agents.config import AgentConfig
        from .model import AgentRequirement

        rootdir = Path(str(self.config.rootpath))
        config = AgentConfig.from_highbar(
            mapping, cwd=Path(str(self.config.invocation_params.dir)), environ=self.context.env,
            log_dir=rootdir / options.value(self.config, "agent-logs"),
        )
        calls_from = str(mapping.get("calls_from", "traces"))
        self.acquire_agents([AgentRequirement("", config, observe, calls_from)], for_file=False)
        from .agents.shared import live_key

        live = self.context.agents.get(live_key(config, calls_from))
        return AgentClient(live, lambda: self.context.http, self.run)

    def close(self) -> None:
        if self.context.agents is not None:
            self.context.agents.close()
        self.session.close()

    @cached_property
    def redactor(self) -> Redactor:
        from .report.redact import Redactor, secret_values

        return Redactor(secret_values(self.context.env, self.llm_config.secrets()))

    def differ(self, actual: Any, expected: Any) -> list[str] | None:
        for lines in self.config.hook.pytest_assertrepr_compare(
            config=self.config, op="==", left=actual, right=expected
        ):
            if lines:
                return list(lines)
        return None


_RUNTIME = pytest.StashKey[Runtime]()
_WORKER_USAGE = pytest.StashKey[dict[str, int]]()
_USAGE_KEY = "semantictest_llm_usage"
_AGENTS_DIR = "semantictest_agents_dir"
_CONTROLLER_AGENTS = pytest.StashKey[str]()


def runtime(config: pytest.Config) -> Runtime:
    state = config.stash.get(_RUNTIME, None)
    if state is None:
        state = Runtime(config)
        config.stash[_RUNTIME] = state
    return state


def llm_usage(config: pytest.Config, workers: bool = True) -> dict[str, int]:
    """LLM usage counters of this process (plus, on an xdist controller, its finished workers')."""
    worker_usage: dict[str, int] = config.stash.get(_WORKER_USAGE, {})
    totals = dict(worker_usage) if workers else {}
    state = config.stash.get(_RUNTIME, None)
    if state is not None and state.context.llm is not None:
        for name, count in state.context.llm.usage.as_dict().items():
            totals[name] = totals.get(name, 0) + count
    return totals


_COLLECT = pytest.StashKey[Any]()


def collect_context(config: pytest.Config) -> Any:
    ctx = config.stash.get(_COLLECT, None)
    if ctx is None:
        from .dotenv import environment
        from .formats.detect import CollectContext

        rootdir = Path(str(config.rootpath))
        ctx = CollectContext(
            rootdir, Path(str(config.invocation_params.dir)), environment(rootdir),
            lambda name: options.value(config, name), tuple(config.invocation_params.args),
        )
        config.stash[_COLLECT] = ctx
    return ctx
