"""pytest hooks: options, collection by file kind, fixtures, session lifecycle. Thin."""

from __future__ import annotations

from collections.abc import Generator
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


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


_ASYNCIO_SCOPE = "asyncio_default_fixture_loop_scope"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """pytest-asyncio, installed with us, warns in every run whose configuration leaves
    ``asyncio_default_fixture_loop_scope`` unset: unset (only then), it is ``function``, the value
    pytest-asyncio falls back to. pytest has no public setter; ``getini`` answers from its cache."""
    if config.pluginmanager.hasplugin("asyncio") and config.getini(_ASYNCIO_SCOPE) in (None, ""):
        config._inicache[_ASYNCIO_SCOPE] = "function"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "semantictest: a test collected from a SemanticTest JSON suite")
    config.addinivalue_line("markers", "highbar: a test collected from a highbar spec (*.highbar.yaml)")
    config.addinivalue_line("markers", "yao: a test case of a Yao agent test file (*.jsonl)")
    config.addinivalue_line("markers", "compliance: a test case of a compliance Markdown file (*.md)")
    options.check(config)
    results = options.value(config, "results")
    if results:  # one JSON object per test; written by the controller
        from .report.results import ResultsWriter

        config.pluginmanager.register(ResultsWriter(config, results, lambda: config.stash.get(_RUNTIME, None)),
                                      "semantictest-results")
    if options.value(config, "generate"):  # the LLM generator writes Yao cases at session start
        from .generation import Generation

        config.pluginmanager.register(Generation(config, runtime), "semantictest-generation")
    from .session_exit import SessionExit

    config.pluginmanager.register(SessionExit(config), "semantictest-exit")  # exit status, signals
    from .compliance_session import ComplianceSession

    config.pluginmanager.register(ComplianceSession(config), "semantictest-compliance")
    from .report.summary import install

    install(config)  # per-test properties (JUnit), the end-of-run summary, pytest-html extras with --html


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_RUNTIME, None)
    if state is not None:
        state.close()
    shared = config.stash.get(_CONTROLLER_AGENTS, None)
    if shared is not None:  # xdist controller: stop whatever a crashed or interrupted worker left
        from .agents.shared import reap_folder

        reap_folder(shared)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: give every worker the same folder to share agent processes through."""
    config = node.config
    shared = config.stash.get(_CONTROLLER_AGENTS, None)
    if shared is None:
        import tempfile

        shared = tempfile.mkdtemp(prefix="semantictest-agents-")
        config.stash[_CONTROLLER_AGENTS] = shared
        from .agents import cleanup
        from .agents.shared import reap_folder

        # SIGTERM/SIGHUP to the controller (a cancelled CI job) still stops the shared agent
        cleanup.register(lambda: reap_folder(shared))
    node.workerinput[_AGENTS_DIR] = shared


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker, hand this process's LLM usage to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    state = session.config.stash.get(_RUNTIME, None)
    if workeroutput is not None and state is not None and state.context.llm is not None:
        workeroutput[_USAGE_KEY] = state.context.llm.usage.as_dict()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist load``: a SemanticTest file with setup or teardown runs on one worker (once each)."""
    if config.getvalue("dist") != "load":
        return None
    from .xdist_scheduling import FileSetupScheduling

    return FileSetupScheduling(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the xdist controller, add up the LLM usage each worker reports."""
    usage = getattr(node, "workeroutput", {}).get(_USAGE_KEY)
    if usage:
        totals = node.config.stash.setdefault(_WORKER_USAGE, {})
        for name, count in usage.items():
            totals[name] = totals.get(name, 0) + int(count)


def llm_usage(config: pytest.Config, workers: bool = True) -> dict[str, int]:
    """LLM usage counters of this process (plus, on an xdist controller, its finished workers')."""
    worker_usage: dict[str, int] = config.stash.get(_WORKER_USAGE, {})
    totals = dict(worker_usage) if workers else {}
    state = config.stash.get(_RUNTIME, None)
    if state is not None and state.context.llm is not None:
        for name, count in state.context.llm.usage.as_dict().items():
            totals[name] = totals.get(name, 0) + count
    return totals


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Agent warnings, then the semantictest summary (per-format counts, flaky tests, LLM usage)."""
    state = config.stash.get(_RUNTIME, None)
    if state is not None and state.context.agents is not None:
        for warning in state.context.agents.warnings():
            terminalreporter.write_line(f"semantictest: warning: {warning}")
    from .report.summary import summary_plugin

    summary = summary_plugin(config)
    if summary is not None:
        summary.write(terminalreporter, llm_usage(config))


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


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    from .formats.detect import FORMATS

    for name, detect, module in FORMATS:
        needs = getattr(detect, "needs_context", None)  # only some detectors, for some paths (idle stays cheap)
        if detect(file_path, collect_context(parent.config) if needs is not None and needs(file_path) else None):
            from importlib import import_module

            from .nodes import SpecFile

            loader = import_module(f"{__package__}.formats.{module}").make_loader(collect_context(parent.config))
            node = SpecFile.for_format(parent, file_path, loader)
            node.add_marker(name)
            return node
    return None


@pytest.hookimpl(wrapper=True, specname="pytest_collect_file")
def pytest_collect_file_explained(file_path: Path, parent: pytest.Collector) -> Generator[None, list[Any], list[Any]]:
    """A file named on the command line that nothing collects: a collection error saying why it is not
    a spec file (``formats.detect.why_not_spec``), instead of pytest's bare "ERROR: not found"."""
    collected = yield
    if collected or not parent.session.isinitpath(file_path):
        return collected
    from .formats.detect import why_not_spec

    why = why_not_spec(file_path)
    if why is None:
        return collected
    from .errors import Problem, SpecError
    from .nodes import SpecFile

    def explain(path: Path) -> Any:
        raise SpecError(str(path), [Problem("", why)])

    return [SpecFile.for_format(parent, file_path, explain)]


@pytest.fixture
def databus() -> Any:
    """A fresh DataBus, as a pipeline step sees it."""
    from .engine.databus import DataBus

    return DataBus()


@pytest.fixture
def semantictest_run(request: pytest.FixtureRequest) -> Any:
    """Run a SemanticTest suite (dict, JSON text or file path) and get verdicts by test id."""
    from .api import Runner

    return Runner(runtime(request.config))


@pytest.fixture
def agent_factory(request: pytest.FixtureRequest) -> Any:
    """``agent_factory(endpoint=..., start=..., health=..., ...)`` (highbar's ``agent:`` keys) -> a
    client with ``send(message)`` returning the reply and tool calls; started once per session."""
    state = runtime(request.config)
    return lambda **agent: state.agent_client(agent)


@pytest.fixture
def agent(request: pytest.FixtureRequest, agent_factory: Any) -> Any:
    """The agent configured by ``--semantictest-agent-endpoint`` (and ``-start``, ``-health``) or ini."""
    endpoint = options.value(request.config, "agent-endpoint")
    if not endpoint:
        pytest.skip("no agent configured: set --semantictest-agent-endpoint or ini semantictest_agent_endpoint")
    keys = {"endpoint": endpoint, "settle_time": 0}
    for name in ("start", "health"):
        value = options.value(request.config, f"agent-{name}")
        if value:
            keys[name] = value
    return agent_factory(**keys)


@pytest.fixture
def llm_judge(request: pytest.FixtureRequest) -> Any:
    """``llm_judge.check(text, "expected behaviour", constraints=[...], threshold=0.8)``: fails the
    test with the judge's reasoning when the verdict does not pass (``acheck`` in async tests)."""
    from .llm.fixtures import JudgeFixture

    state = runtime(request.config)
    return JudgeFixture(state.context.judge, state.run, state.context.settings.require_judge)


@pytest.fixture
def llm_validator(request: pytest.FixtureRequest) -> Any:
    """``llm_validator.check(output, "criteria", input=..., threshold=0.8)``: fails the test with the
    validator's reason and suggestions when the output does not meet the criteria (``acheck`` in async
    tests, ``evaluate`` for the result without asserting)."""
    from .llm.validator import ValidatorFixture

    state = runtime(request.config)
    return ValidatorFixture(state.context.llm, state.run, state.context.settings.require_judge)


@pytest.fixture
def llm_client(request: pytest.FixtureRequest) -> Any:
    """The role-aware LLM client (cache, retries, concurrency bound): ``complete(role, messages)``."""
    from .llm.fixtures import ClientFixture

    state = runtime(request.config)
    return ClientFixture(state.context.llm, state.run)
