"""The exit status says what highbar's would, and an interrupted run ends every process quickly.

=================================================  =======  ==========================
what happened                                      highbar  pytest (this plugin)
=================================================  =======  ==========================
every test passed                                  0        0
a test failed or errored                           1        1
a file's agent could not start or be used (start   2        2 (its tests ERROR; the
failure, port busy, no hello, missing attach                other files still run)
trace file, unimportable session hook)
a spec error                                       2        2 (pytest's collection error; also
                                                            under xdist, whose workers run the
                                                            files that collected; 1 with
                                                            --continue-on-collection-errors)
Ctrl-C                                             130      130
SIGTERM / SIGHUP                                   143/129  143/129
=================================================  =======  ==========================

A signal while the agents are stopped at the end (a Ctrl-C too) stops them at once and gives the same
codes, without a traceback (``pytest_unconfigure`` here, ``agents.cleanup.finish_on_signals``).
Only sessions that collected a spec file (any format) get these, from the end of collection on;
other pytest runs keep pytest's own codes and signal handling. SIGTERM/SIGHUP unwind the session like Ctrl-C (``agents.cleanup.Terminated``). Under
pytest-xdist each worker records its pid in the run's agent folder and the controller forwards
an interrupt to its workers, so a reply in flight does not hold the run up.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Generator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import pytest

from .spec_nodes import spec_file_of

if TYPE_CHECKING:
    from .runtime import Runtime

UNRUNNABLE = 2
INTERRUPTED = 130
_UNRUNNABLE_KEY = "semantictest_unrunnable"


class SessionExit:
    """A pytest plugin: exit status, signal handling and worker interrupts (see the module doc).
    Registered by the plugin with the process's runtime (its agents, agent folder and
    ``unrunnable`` flag)."""

    def __init__(self, config: pytest.Config, runtime: Runtime) -> None:
        self.config = config
        self.runtime = runtime
        self.worker = hasattr(config, "workerinput")
        self.code: int | None = None
        self.unrunnable = False
        self.spec_session = False
        self.spec_collection_error = False
        self._collect_errors: dict[tuple[str, str], object] = {}
        self.session: pytest.Session | None = None
        self.closing_interrupted = False
        self._sigint_before: Callable[[int, FrameType | None], object] | int | signal.Handlers | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def interrupted_at_close(self) -> None:
        """A Ctrl-C came while the agents were being stopped (``pytest_unconfigure``): they were stopped
        at once; the run ends as an interrupted one, without a traceback."""
        self.closing_interrupted = True

    def _on_sigint_at_the_end(self, signum: int, frame: FrameType | None) -> None:
        """An xdist controller's Ctrl-C once its session is over (it waits for its workers to stop their
        agents): raising would be a traceback out of xdist's teardown. The workers (a terminal sent it to
        them too; it is forwarded to this process's own) stop their agents at once, and so does this one."""
        from .agents import procs

        procs.kill_stopping()
        self.closing_interrupted = True
        self._interrupt_workers()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """After the agents were stopped: the exit status of a signal that came while they were."""
        if self._sigint_before is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGINT, self._sigint_before)
        late = None
        if self.spec_session:
            from .agents import cleanup

            late = cleanup.finish_on_signals(False)
        if self.session is None or (not self.closing_interrupted and late is None):
            return
        what = "interrupted" if late is None else f"terminated by {signal.Signals(late).name}"
        if not self.spec_session:
            self.session.exitstatus = pytest.ExitCode.INTERRUPTED
        else:
            self.session.exitstatus = INTERRUPTED if late is None else 128 + late
        if not self.worker:
            with contextlib.suppress(Exception):
                config.get_terminal_writer().line(
                    f"semantictest: {what} at the end of the run: the agents were stopped at once", red=True
                )

    def _spec_found(self) -> None:
        """A spec file is in this session: from now on interrupts follow highbar (module doc)."""
        if self.spec_session:
            return
        self.spec_session = True
        from .agents import cleanup

        cleanup.unwind_on_signals(True, sigint_once=self.worker)
        if self.worker and self.runtime.xdist.agents_dir:
            with contextlib.suppress(OSError):
                Path(self.runtime.xdist.agents_dir, f"worker-{os.getpid()}").write_text("")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if any(spec_file_of(item) is not None for item in session.items):
            self._spec_found()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        if not self.spec_session and _any_spec(self.config, ids, self.runtime):
            self._spec_found()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A spec file that did not collect makes the run's status 2, also where xdist ran the other
        files (unless ``--continue-on-collection-errors`` asks for pytest's 1)."""
        if (
            report.failed
            and not self.spec_collection_error
            and not self.config.option.continue_on_collection_errors
        ):
            self.spec_collection_error = _any_spec(self.config, [report.nodeid], self.runtime)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(
        self, config: pytest.Config, data: dict[str, object]
    ) -> Generator[None, object, object]:
        """One collection error of a file, however many xdist workers report it: xdist drops a
        worker's report whose ``longrepr`` it has seen, which a rebuilt ``ReprExceptionInfo`` never
        is (it compares by identity), so the same file's error is given the same object."""
        report = yield
        if isinstance(report, pytest.CollectReport) and report.failed and report.longrepr is not None:
            key = (report.nodeid, str(report.longrepr))
            report.longrepr = self._collect_errors.setdefault(key, report.longrepr)  # type: ignore[assignment]
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        if getattr(node, "workeroutput", {}).get(_UNRUNNABLE_KEY):
            self.unrunnable = True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, None, None]:
        """When a spec file's last test is torn down, its agents may be replaced by the next file's."""
        try:
            return (yield)
        finally:
            spec_file = spec_file_of(item)
            if spec_file is not None and (nextitem is None or spec_file not in nextitem.listchain()):
                self.runtime.idle_file(str(spec_file.path))

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        value = excinfo.value
        if (
            self.spec_session or isinstance(value, pytest.Session.Interrupted)
        ) and not self.config.option.fulltrace:
            _keep_only_the_crash_entry(excinfo)
        stop = _a_stop_not_a_ctrl_c(value)
        self._keep_code(value, stop)
        if isinstance(value, KeyboardInterrupt) and stop is None and self._shares_agents():
            self._interrupt_workers()

    def _keep_code(self, value: BaseException, stop: str | None) -> None:
        """The exit status an interrupt asks for: a signal's own, highbar's 1 when ``-x`` stopped a spec
        run, 2 for a Ctrl-C."""
        from .agents.cleanup import Terminated

        if isinstance(value, Terminated):
            self.code = value.code
        elif stop == "failures":
            self.code = pytest.ExitCode.TESTS_FAILED if self.spec_session else None
        elif isinstance(value, KeyboardInterrupt) and stop is None:
            self.code = INTERRUPTED

    def _shares_agents(self) -> bool:
        """Whether this is the controller of a spec run whose xdist workers share its agents."""
        return bool(self.spec_session and not self.worker and self.runtime.xdist.agents_dir)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.spec_session:
            self._cleanup_on_signals()
        unrunnable = self.unrunnable or self.runtime.unrunnable
        if self.worker:
            self.config.workeroutput[_UNRUNNABLE_KEY] = unrunnable  # type: ignore[attr-defined]  # xdist sets it
            return
        if self.spec_collection_error and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.INTERRUPTED  # (2, as without xdist)
        if self.spec_session:
            self._spec_exit_status(session, exitstatus, unrunnable)

    def _spec_exit_status(self, session: pytest.Session, exitstatus: int, unrunnable: bool) -> None:
        """A spec run's exit status: the one an interrupt asked for, or that of a run an agent could
        not serve (when nothing worse happened)."""
        if self.code is not None and exitstatus == pytest.ExitCode.INTERRUPTED:
            session.exitstatus = self.code
        elif unrunnable and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = UNRUNNABLE

    def _cleanup_on_signals(self) -> None:
        """From here on a signal finishes the cleanup instead of unwinding it; the controller of
        workers that share agents handles a Ctrl-C at the end itself."""
        from .agents import cleanup  # only then: a session without spec files never imports agents

        cleanup.unwind_on_signals(False)  # what follows (xdist's teardown, unconfigure) is cleanup
        cleanup.finish_on_signals(True)
        if self._shares_agents():
            with contextlib.suppress(ValueError, OSError):  # (not the main thread: left as it is)
                self._sigint_before = signal.signal(signal.SIGINT, self._on_sigint_at_the_end)

    def _interrupt_workers(self) -> None:
        """SIGINT to this controller's workers (a worker ignores it if a terminal already sent one)."""
        from .agents import procs

        for marker in Path(str(self.runtime.xdist.agents_dir)).glob("worker-*"):
            pid = int(marker.name.removeprefix("worker-"))
            if procs.pid_alive(pid) and procs.parent(pid) == os.getpid():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGINT)


def _a_stop_not_a_ctrl_c(value: BaseException) -> str | None:
    """pytest and xdist end a session by raising a ``KeyboardInterrupt`` subclass that is no Ctrl-C:
    pytest's ``Interrupted`` after a collection error ("collection"), xdist's ``Interrupted`` once
    ``-x``/``--maxfail`` is reached ("failures", highbar's and pytest's 1; unless a worker got the
    Ctrl-C). None: an interrupt."""
    if isinstance(value, pytest.Session.Interrupted):
        return "collection"
    kind = type(value)
    if (
        kind.__name__ == "Interrupted"
        and kind.__module__.startswith("xdist")
        and "keyboard-interrupt" not in str(value)
    ):
        return "failures"
    return None


def _keep_only_the_crash_entry(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """pytest renders the whole traceback of an interrupt (reading and parsing the source file of
    every frame: up to half a second of CPU per process under the event loop's deep stacks), then
    prints only the line where it happened unless ``--full-trace``: keep that line's entry alone. Also
    in a session without a spec file for pytest's own ``Interrupted`` (a collection error stops it):
    its traceback is pytest's."""
    entries = excinfo.traceback
    for i in range(len(entries) - 1, -1, -1):
        if not entries[i].ishidden(excinfo):
            excinfo.traceback = entries[i:]
            return


def _any_spec(config: pytest.Config, ids: list[str], runtime: Runtime) -> bool:
    """Whether any collected node id is in a spec file (the xdist controller collects nothing)."""
    from .formats.detect import spec_format

    root = Path(str(config.rootpath))
    paths = (root / path for path in dict.fromkeys(node_id.split("::", 1)[0] for node_id in ids))
    return any(
        path.suffix != ".py" and spec_format(path, lambda: runtime.collect_context) is not None
        for path in paths
    )
