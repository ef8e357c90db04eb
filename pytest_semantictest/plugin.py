"""pytest hooks: options, collection by file kind, fixtures, session lifecycle. Thin.

This is where the process's :class:`~.runtime.Runtime` is built (``pytest_configure``) and where the
plugins that need its services are registered with them: the report plugins get callables that
read the runtime and the exit-status plugin gets the runtime, so none of them imports this module or
``runtime.py``; the look-ahead scheduler is handed to the runtime from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from . import llm_options, options
from .errors import SemanticTestWarning
from .formats.registry import FORMATS
from .runtime import Runtime, install, installed, runtime
from .xdist_share import USAGE_KEY

if TYPE_CHECKING:
    from .agents.client import AgentClient
    from .api import Runner
    from .databus import DataBus
    from .llm.fixtures import ClientFixture, JudgeFixture
    from .llm.validator import ValidatorFixture
    from .lookahead.scheduler import Lookahead
    from .model import Suite


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
    for spec_format in FORMATS:
        config.addinivalue_line("markers", f"{spec_format.name}: {spec_format.marker}")
    state = install(config, _schedule)
    options.check(config)
    llm_options.check(config)
    from .dotenv import environment
    from .start_checks import check

    check(config, environment(Path(str(config.rootpath))))  # what the run writes: before any test runs
    run_wide = options.pass_rate_test(config)
    if run_wide is not None and run_wide.shortfall() is not None:
        config.issue_config_time_warning(
            SemanticTestWarning(f"--semantictest-pass-rate-max-runs: {run_wide.shortfall()}"), stacklevel=2
        )
    from .report.logs import RedactedRecords

    records = RedactedRecords(state.current_redactor)  # captured logs: no secret in any of them
    records.install()
    config.add_cleanup(records.uninstall)
    _register_results(config, state)
    from .late_calls import NAME as LATE_NAME
    from .late_calls import LateCalls
    from .session_exit import SessionExit

    # late calls turn the exit status and reach every artefact; registered first, so its tryfirst
    # sessionfinish runs after the exit-status plugin's (pluggy calls the latest registered first)
    config.pluginmanager.register(LateCalls(config, state), LATE_NAME)
    config.pluginmanager.register(SessionExit(config, state), "semantictest-exit")  # exit status, signals
    from .formats.pytest_glue import register

    # each format's pytest glue: compliance ordering, Yao generation, xdist scheduling
    register(config, state)
    _install_reports(config, state)
    if options.value(config, "mutate"):  # docs/mutation.md
        from .mutate.pytest_glue import NAME as MUTATE_NAME
        from .mutate.pytest_glue import MutationPlugin

        config.pluginmanager.register(MutationPlugin(config, state), MUTATE_NAME)
    from .gc_freeze import GcFreeze
    from .spec_nodes import is_spec_item

    config.pluginmanager.register(GcFreeze(config, is_spec_item), "semantictest-gc")  # spec sessions only
    if config.pluginmanager.hasplugin("pytest-split"):  # a split run's jobs: each file whole in one job
        from .split_jobs import SplitByFile

        config.pluginmanager.register(SplitByFile(), "semantictest-split")


def _schedule(item: pytest.Item, state: Runtime) -> Lookahead:
    """The session's look-ahead scheduler (``lookahead/``), created with the first spec item."""
    from .lookahead.scheduler import scheduler

    return scheduler(item, state, options.value(item.config, "items-at-once"))


def _register_results(config: pytest.Config, state: Runtime) -> None:
    """With ``--semantictest-results``, ``--semantictest-baseline`` or ``--semantictest-report``: the
    results writer (one JSON object per test, written by the controller, or kept), and the baseline
    comparison and viewer that read its records."""
    results, baseline = options.value(config, "results"), options.value(config, "baseline")
    viewer = options.value(config, "report")
    if not (results or baseline or viewer):
        return
    from .report.results import ResultsWriter

    writer = ResultsWriter(config, results, state.own_usage, state.current_redactor)
    if viewer:
        from .report.viewer import ViewerPlugin

        prices = llm_options.llm_limits(config).prices
        config.pluginmanager.register(
            ViewerPlugin(config, viewer, writer, state.current_redactor, prices), "semantictest-viewer"
        )
    if baseline:  # registered first: its hooks run after the writer's (pluggy calls the latest first)
        from .report.baseline_plugin import BaselinePlugin

        config.pluginmanager.register(
            BaselinePlugin(
                config,
                baseline,
                writer,
                bool(options.value(config, "fail-on-regression")),
                options.value(config, "fail-on-slower"),
                options.value(config, "fail-on-score-drop"),
            ),
            "semantictest-baseline",
        )
    config.pluginmanager.register(writer, "semantictest-results")


def _install_reports(config: pytest.Config, state: Runtime) -> None:
    """Per-test properties (JUnit), the end-of-run summary, and pytest-html extras with ``--html``."""
    from .report.summary import NAME, SummaryPlugin

    summary = SummaryPlugin(config, lambda: state.llm_usage(workers=False), lambda: state.redactor)
    config.pluginmanager.register(summary, NAME)
    if config.getoption("htmlpath", None) and config.pluginmanager.hasplugin("html"):
        from .report.html import NAME as HTML_NAME
        from .report.html import HtmlPlugin

        html = HtmlPlugin(
            config,
            summary.tally,
            state.llm_usage,
            lambda: state.redactor,
            lambda: state.context.settings.trace_value_chars,
        )
        config.pluginmanager.register(html, HTML_NAME)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = installed(config)
    if state is not None and state.close():  # a Ctrl-C while the agents were being stopped
        exit_status = config.pluginmanager.get_plugin("semantictest-exit")
        if exit_status is not None:
            exit_status.interrupted_at_close()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: object) -> None:
    """xdist controller: give every worker the same folders to share agent processes and LLM limits through."""
    config: pytest.Config = getattr(node, "config")
    workerinput: dict[str, object] = getattr(node, "workerinput")
    runtime(config).xdist.share_agents(workerinput)
    if llm_options.llm_limits(config).active:
        runtime(config).xdist.share_llm(workerinput)
    runtime(config).span_service.share(workerinput)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker, hand this process's LLM usage to the controller; on the controller (or
    without xdist), keep each agent's last logs only (``--semantictest-agent-logs-keep``)."""
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    usage = runtime(config).own_usage()
    if workeroutput is not None and usage:
        workeroutput[USAGE_KEY] = usage
    if workeroutput is None:
        from .agents.logs import prune

        prune(
            Path(str(config.rootpath)) / options.value(config, "agent-logs"),
            options.value(config, "agent-logs-keep"),
        )


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """On the xdist controller, add up the LLM usage each worker reports."""
    usage = getattr(node, "workeroutput", {}).get(USAGE_KEY)
    config: pytest.Config = getattr(node, "config")
    if usage:
        runtime(config).xdist.add_worker_usage(usage)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """After every conftest's ``pytest_configure``: settings they may have given are in."""
    runtime(session.config).span_service.check()


def pytest_collection_finish(session: pytest.Session) -> None:
    """``--collect-only``: the tests that would ERROR on a problem in their spec are listed (as
    ``semantictest validate`` lists them), not only counted as collected. An ``agent-*`` option that no
    test takes its agent from is a warning naming it."""
    from .agent_options import warn_unused

    warn_unused(session.config, runtime(session.config).option_agent_users(), session.items)
    if session.config.option.collectonly and session.items:
        from .nodes import known_errors

        errors = known_errors(session.items)
        if errors:
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.section("tests that will ERROR (a problem in their spec)", sep="-", yellow=True)
                for item, error in errors:
                    reporter.write_line(f"{item.nodeid}: {error}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Agent warnings, then the semantictest summary (per-format counts, flaky tests, LLM usage)."""
    state = runtime(config)
    from .late_calls import NAME as LATE_NAME
    from .report.summary import summary_plugin

    summary = summary_plugin(config)
    late = config.pluginmanager.get_plugin(LATE_NAME)
    if late is not None:  # agent warnings (every worker's), tests a late call failed
        late.write(terminalreporter)
    if summary is not None:
        usage = state.llm_usage()
        summary.write(terminalreporter, usage, state.llm_usage_lines(usage))


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """A verdict reached after its test was reported (a late call) is counted under its own word."""
    from .report.after_the_fact import teststatus

    return teststatus(report)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    from .formats.detect import spec_format

    found = spec_format(file_path, lambda: runtime(parent.config).collect_context)
    if found is None:
        return None
    from importlib import import_module

    from .nodes import SpecFile

    name, module = found

    def loader(path: Path) -> Suite:
        """The format's modules are imported when the file is collected, not when pytest offers it
        (pytest offers every file of a folder whose other test file is run)."""
        suite: Suite = import_module(f"{__package__}.formats.{module}").make_loader(
            runtime(parent.config).collect_context
        )(path)
        return suite

    node = SpecFile.for_format(parent, file_path, loader)
    node.add_marker(name)
    return node


@pytest.hookimpl(wrapper=True, specname="pytest_collect_file")
def pytest_collect_file_explained(
    file_path: Path, parent: pytest.Collector
) -> Generator[None, list[pytest.Collector], list[pytest.Collector]]:
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

    def explain(path: Path) -> Suite:
        raise SpecError(str(path), [Problem("", why)])

    return [SpecFile.for_format(parent, file_path, explain)]


@pytest.fixture
def databus() -> DataBus:
    """A fresh DataBus, as a pipeline step sees it."""
    from .databus import DataBus

    return DataBus()


@pytest.fixture
def semantictest_run(request: pytest.FixtureRequest) -> Runner:
    """Run a SemanticTest suite (dict, JSON text or file path) and get verdicts by test id."""
    from .api import Runner

    return Runner(runtime(request.config))


@pytest.fixture
def agent_factory(request: pytest.FixtureRequest) -> Callable[..., AgentClient]:
    """``agent_factory(endpoint=..., start=..., health=..., ...)`` (highbar's ``agent:`` keys) -> a
    client with ``send(message)`` returning the reply and tool calls; started once per session."""
    state = runtime(request.config)
    return lambda **agent: state.agent_client(agent)


@pytest.fixture
def agent(request: pytest.FixtureRequest, agent_factory: Callable[..., AgentClient]) -> AgentClient:
    """The agent configured by ``--semantictest-agent-endpoint`` (and ``-start``, ``-health``) or ini."""
    endpoint = options.value(request.config, "agent-endpoint")
    if not endpoint:
        pytest.skip(
            "no agent configured: set --semantictest-agent-endpoint or ini semantictest_agent_endpoint"
        )
    keys = {"endpoint": endpoint, "settle_time": 0}
    for name in ("start", "health"):
        value = options.value(request.config, f"agent-{name}")
        if value:
            keys[name] = value
    return agent_factory(**keys)


@pytest.fixture
def llm_judge(request: pytest.FixtureRequest) -> JudgeFixture:
    """``llm_judge.check(text, "expected behaviour", constraints=[...], threshold=0.8)``: fails the
    test with the judge's reasoning when the verdict does not pass (``acheck`` in async tests)."""
    from .llm.fixtures import JudgeFixture

    state = runtime(request.config)
    return JudgeFixture(state.judge, state.run, state.context.settings.require_judge)


@pytest.fixture
def llm_validator(request: pytest.FixtureRequest) -> ValidatorFixture:
    """``llm_validator.check(output, "criteria", input=..., threshold=0.8)``: fails the test with the
    validator's reason and suggestions when the output does not meet the criteria (``acheck`` in async
    tests, ``evaluate`` for the result without asserting)."""
    from .llm.validator import ValidatorFixture

    state = runtime(request.config)
    return ValidatorFixture(state.llm, state.run, state.context.settings.require_judge)


@pytest.fixture
def llm_client(request: pytest.FixtureRequest) -> ClientFixture:
    """The role-aware LLM client (cache, retries, concurrency bound): ``complete(role, messages)``."""
    from .llm.fixtures import ClientFixture

    state = runtime(request.config)
    return ClientFixture(state.llm, state.run)
