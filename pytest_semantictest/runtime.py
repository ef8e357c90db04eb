"""The session's services in one object: settings, environment, LLM clients, agent pool, redactor,
the event loop, the look-ahead scheduler; what it shares with the run's other xdist processes is
:mod:`.xdist_share`'s.

``plugin.py`` builds one :class:`Runtime` a process in ``pytest_configure`` and passes it, or
callables that read it, to the plugins it registers (the reports, the exit status); the services
start on first use, so an idle session pays nothing. The pytest layer (``nodes.py``, the formats'
pytest glue) reads it from its config with :func:`runtime`. Nothing below the pytest layer imports
this module: the engine, blocks, checks, reports, formats and agents get what they need passed in.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from . import llm_options, options
from .agent_options import start_dirs
from .xdist_share import XdistShare

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from .agents.client import AgentClient
    from .agents.pool import AgentPool
    from .engine.loop import EventLoopRunner
    from .formats.detect import CollectContext
    from .json_types import JSONObject
    from .llm.client import LLMClient
    from .llm.judge import Judge
    from .lookahead.scheduler import Lookahead
    from .model import AgentRequirement, Verdict
    from .redact import Redactor
    from .run_context import RunContext

T = TypeVar("T")


class Runtime:
    """Per-process services; built at configure, each started on first use (see the module doc).

    ``schedule(item, runtime)`` returns the session's scheduler (``lookahead.scheduler.scheduler``,
    passed in by ``plugin.py``: this module does not import the engine's pytest-facing parts).
    """

    def __init__(self, config: pytest.Config, schedule: Callable[[pytest.Item, Runtime], Lookahead]) -> None:
        self.config = config
        self.unrunnable = False  # a file's agent could not be started or used (highbar's exit 2)
        self.xdist = XdistShare(config)
        """What this process shares with the run's other xdist processes (folders, LLM usage)."""
        self._schedule = schedule
        self._context: RunContext | None = None
        self._collect: CollectContext | None = None
        self._services: tuple[Redactor, EventLoopRunner, LLMClient, Judge | None]
        self._pool: AgentPool | None = None  # once an agent was acquired (also the run context's agents)
        from .span_service import SpanService

        self.span_service = SpanService(config)
        self.lookahead_gates: list[Callable[[pytest.Item], str | None]] = []
        """What a format's glue says about an item before it may run ahead: why not yet, or None
        (``add_lookahead_gate``; the look-ahead asks each before it starts an item early)."""

    def add_lookahead_gate(self, gate: Callable[[pytest.Item], str | None]) -> None:
        self.lookahead_gates.append(gate)

    # -- the services, started on first use ---------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the services were started (an idle session never starts them)."""
        return self._context is not None

    @property
    def context(self) -> RunContext:
        """The run context every pipeline runs with (settings, env, LLM clients, agent pool, redactor)."""
        if self._context is None:
            self._start()
        assert self._context is not None  # _start sets it
        return self._context

    def _start(self) -> None:
        from .dotenv import environment
        from .engine.loop import EventLoopRunner
        from .llm import build
        from .run_context import RunContext

        rootdir = Path(str(self.config.rootpath))
        ctx = RunContext(options.settings(self.config), environment(rootdir), rootdir)
        llm_config = llm_options.llm_config(self.config, ctx.env, rootdir)
        redactor = self._declared(ctx.env, llm_config.secrets())
        ctx.llm, ctx.judge = llm, judge = build(llm_config, redactor)
        self._limit(llm)
        ctx.redactor = redactor  # one per session: every format registers its secrets with it
        from .redact import secret_name

        declared = options.value(self.config, "secret-env")
        ctx.secret_env = lambda name: secret_name(name, declared)  # traces keep ${env.NAME} of these
        ctx.spans = self.span_service.source()  # (before any agent starts: they export to it)
        self._services = (redactor, EventLoopRunner(ctx), llm, judge)
        self._context = ctx

    def _running(self) -> tuple[Redactor, EventLoopRunner, LLMClient, Judge | None]:
        if self._context is None:
            self._start()
        return self._services

    @property
    def redactor(self) -> Redactor:
        """The session's one redactor: every value a report shows passes through it."""
        return self._running()[0]

    def _declared(self, env: Mapping[str, str], extra: list[str]) -> Redactor:
        """A redactor of the declared secrets: the environment's (by name, ``secret-env``), ``extra``."""
        from .redact import Redactor, secret_values

        return Redactor(
            secret_values(env, extra, options.value(self.config, "secret-env")),
            headers=options.value(self.config, "secret-header"),
        )

    @cached_property
    def _early_redactor(self) -> Redactor:
        return self._declared(self.collect_context.env, [])

    def current_redactor(self) -> Redactor:
        """The session's redactor once the services started; before, one of the environment's declared
        secrets (a log line or a results record written before any service started; starts nothing)."""
        return self.redactor if self.started else self._early_redactor

    @property
    def loop_runner(self) -> EventLoopRunner:
        """The process's event loop (one for the whole session: keep-alive HTTP across tests)."""
        return self._running()[1]

    @property
    def llm(self) -> LLMClient:
        """The session's role-aware LLM client (the run context's ``llm``)."""
        return self._running()[2]

    @property
    def judge(self) -> Judge | None:
        """The session's LLM judge, None when none is configured (the run context's ``judge``)."""
        return self._running()[3]

    @property
    def agent_pool(self) -> AgentPool | None:
        """The session's agent pool once an agent was acquired (the run context's ``agents``)."""
        return self._pool

    @cached_property
    def concurrency(self) -> int:
        """How many cases of one file run at once (``--semantictest-runs-at-once``)."""
        return int(options.value(self.config, "runs-at-once"))

    @property
    def collect_context(self) -> CollectContext:
        """What the format detectors and loaders read at collection (its own small start-up)."""
        if self._collect is None:
            from .dotenv import environment
            from .formats.detect import CollectContext

            config = self.config
            rootdir = Path(str(config.rootpath))
            self._collect = CollectContext(
                rootdir,
                Path(str(config.invocation_params.dir)),
                environment(rootdir),
                lambda name: options.value(config, name),
                tuple(config.invocation_params.args),
                start_dirs(config),
            )
        return self._collect

    def option_agent_users(self) -> list[str]:
        """The files collected so far that took their agent from the ``agent-*`` options."""
        return [] if self._collect is None else list(self._collect.option_agent_users)

    def run(self, coro: Awaitable[T]) -> T:
        return self.loop_runner.run(coro)

    def verdict(self, item: pytest.Item) -> Verdict:
        """Run (or finish waiting for) a spec item's pipeline: its verdict."""
        return self._schedule(item, self).verdict(item)

    def differ(self, actual: object, expected: object) -> list[str] | None:
        for lines in self.config.hook.pytest_assertrepr_compare(
            config=self.config, op="==", left=actual, right=expected
        ):
            if lines:
                return list(lines)
        return None

    # -- agents -------------------------------------------------------------------------------

    def acquire_agents(self, requirements: list[AgentRequirement], *, for_file: str | None) -> None:
        """Start or attach each agent the file ``for_file`` (its path) needs, held until that file ends
        (shared under xdist, kept for the next file that needs the same); None: for the session. A
        failure for a file means its tests could not run: exit status 2."""
        if not requirements:
            return
        try:
            self._acquire(requirements, for_file)
        except Exception:
            if for_file is not None:
                self.unrunnable = True
            raise

    def _acquire(self, requirements: list[AgentRequirement], for_file: str | None) -> None:
        # values expanded from ${ENV} into an agent's config are secrets in every report (highbar's rule)
        self.redactor.add(value for req in requirements for value in getattr(req.config, "secrets", ()))
        self.redactor.learn(
            [{"headers": getattr(req.config, "request_headers", None)} for req in requirements]
        )
        from .agents.config import AgentConfig
        from .agents.pool import AgentPool

        configs = [req.config for req in requirements if isinstance(req.config, AgentConfig)]
        if len(configs) != len(requirements):
            raise TypeError("an agent requirement's config is not an agents.config.AgentConfig")
        pool = self._pool
        if pool is None:
            shared = self.xdist.agents_dir
            pool = self._pool = self.context.agents = AgentPool(Path(shared) if shared else None)
        for req, config in zip(requirements, configs):
            pool.acquire(config, observe=req.observe, calls_from=req.calls_from, for_file=for_file)

    def agent_client(self, mapping: JSONObject, observe: bool = True) -> AgentClient:
        """An AgentClient for an agent given as highbar's ``agent:`` keys (started once per session)."""
        from .agents.client import AgentClient
        from .agents.config import AgentConfig
        from .agents.keys import requirement

        rootdir = Path(str(self.config.rootpath))
        config = AgentConfig.from_highbar(
            mapping,
            cwd=Path(str(self.config.invocation_params.dir)),
            environ=self.context.env,
            log_dir=rootdir / options.value(self.config, "agent-logs"),
        )
        calls_from = str(mapping.get("calls_from", "traces"))
        needed = requirement(config, observe=observe, calls_from=calls_from)
        self.acquire_agents([needed], for_file=None)
        assert self._pool is not None  # acquire_agents made it
        live = self._pool.get(needed.key)
        return AgentClient(live, lambda: self.context.http, self.run)

    def idle_file(self, file: str) -> None:
        """The spec file ``file`` (its path) ended: the agents it alone held may be replaced by the next file's."""
        if self.started and self._pool is not None:
            self._pool.idle_file(file)

    def agent_warnings(self) -> list[str]:
        return self.agents_finish()[0]

    def agents_finish(self) -> tuple[list[str], list[tuple[str, str, str]]]:
        """The agents' last read (once, at the end): warnings to tell, and (test id, outcome, message) of each
        passed execution a late tool call failed (``AgentPool.finish``)."""
        if self.started and self._pool is not None:
            return self._pool.finish()
        return [], []

    def _limit(self, client: LLMClient) -> None:
        """Give the LLM client the run's shared limiter when a rate limit or budget is set."""
        limits = llm_options.llm_limits(self.config)
        if not limits.active:
            return
        from .llm.limits import SharedLimiter

        client.limiter = SharedLimiter(
            limits,
            Path(self.xdist.limits_dir()),
            lambda seconds, why: client.usage.waited(seconds, why),  # (its usage may be swapped)
            self._show_wait,
        )

    def _show_wait(self, seconds: float, why: str) -> None:
        """A long wait for the LLM rate limit, shown as it starts: on the terminal reporter's line, or
        from an xdist worker on its stderr (the terminal; its own reporter's output is not shown)."""
        import sys
        from contextlib import nullcontext

        line = f"semantictest: waiting {seconds:.1f} s for the LLM rate limit ({why})"
        plugins = self.config.pluginmanager
        capture = plugins.get_plugin("capturemanager")
        reporter = plugins.get_plugin("terminalreporter")
        workerinput = getattr(self.config, "workerinput", None)
        with capture.global_and_fixture_disabled() if capture is not None else nullcontext():
            if workerinput is None and reporter is not None:
                reporter.ensure_newline()
                reporter.write_line(line)
            else:
                sys.stderr.write(f"[{workerinput['workerid'] if workerinput else 'semantictest'}] {line}\n")
                sys.stderr.flush()

    def close(self) -> bool:
        """Stop this process's agents and loop; on an xdist controller, whatever a crashed or
        interrupted worker left in the shared folder. A Ctrl-C meanwhile stops what is left at once
        (no grace period) and raises nothing: True if one came."""
        steps: list[Callable[[], None]] = []
        if self.started:
            if self._pool is not None:
                steps.append(self._pool.close)
            steps.append(self.loop_runner.close)
        steps.append(self.span_service.close)
        steps += self.xdist.cleanup_steps()
        interrupted = False
        for step in steps:
            while True:
                try:
                    step()
                    break
                except KeyboardInterrupt:  # each step can be run again: it goes on where it stopped
                    from .agents import procs

                    procs.kill_stopping()
                    interrupted = True
        if self.xdist.controller_agents is not None or (self.started and self._pool is not None):
            from .agents import procs

            procs.graceful_again()  # (an in-process run's hurry is not the next one's)
        return interrupted

    # -- LLM usage ----------------------------------------------------------------------------

    def own_usage(self) -> dict[str, int]:
        """This process's LLM usage counters ({} before any LLM client exists)."""
        return self.llm.usage.as_dict() if self.started else {}

    def llm_usage_lines(self, usage: dict[str, int]) -> list[str]:
        """The summary's per-model tokens and cost, and the rate limit's waits."""
        from .llm.usage import usage_lines

        return usage_lines(usage, llm_options.llm_limits(self.config).prices)

    def llm_usage(self, workers: bool = True) -> dict[str, int]:
        """LLM usage counters of this process (plus, on an xdist controller, its finished workers')."""
        totals = dict(self.xdist.worker_usage) if workers else {}
        for name, count in self.own_usage().items():
            totals[name] = totals.get(name, 0) + count
        return totals


_RUNTIME = pytest.StashKey[Runtime]()


def install(config: pytest.Config, schedule: Callable[[pytest.Item, Runtime], Lookahead]) -> Runtime:
    """Build the process's runtime (``plugin.py``, in ``pytest_configure``)."""
    state = config.stash[_RUNTIME] = Runtime(config, schedule)
    return state


def runtime(config: pytest.Config) -> Runtime:
    """The process's runtime, for the pytest layer (``plugin.py`` installed it at configure)."""
    return config.stash[_RUNTIME]


def installed(config: pytest.Config) -> Runtime | None:
    """The runtime, or None when ``pytest_configure`` did not get as far as building it."""
    return config.stash.get(_RUNTIME, None)
