"""pytest hooks: options, collection by file kind, fixtures, session lifecycle. Thin."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from . import options
from .runtime import (
    _AGENTS_DIR, _CONTROLLER_AGENTS, _RUNTIME, _USAGE_KEY, _WORKER_USAGE, collect_context, llm_usage, runtime,
)

__all__ = ["runtime", "llm_usage", "collect_context"]


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
    from .session_exit import SessionExit

    config.pluginmanager.register(SessionExit(config), "semantictest-exit")  # exit status, signals
    from .formats.glue import register

    register(config)  # each format's pytest glue: compliance ordering, Yao generation, xdist scheduling
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
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the xdist controller, add up the LLM usage each worker reports."""
    usage = getattr(node, "workeroutput", {}).get(_USAGE_KEY)
    if usage:
        totals = node.config.stash.setdefault(_WORKER_USAGE, {})
        for name, count in usage.items():
            totals[name] = totals.get(name, 0) + int(count)


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
