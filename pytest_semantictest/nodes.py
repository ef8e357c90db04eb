"""pytest nodes: one File per spec file, one Item per case (every format uses these)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import (  # not exported by pytest; what its own reports are made of
    ReprExceptionInfo,
    ReprFileLocation,
    ReprTracebackNative,
    TerminalRepr,
    TracebackStyle,
)

from .errors import SemanticTestWarning, SpecError, shown_paths
from .lookahead.case_runs import FILE_RUN
from .model import Case, Outcome, Suite, Verdict
from .runtime import runtime
from .spec_nodes import VERDICT, SpecFileNode, SpecItemNode, is_spec_item

_DECLARED = pytest.StashKey[set[str]]()
_FILE_FAILED = pytest.StashKey[str]()
"""Why a spec file's agents or setup could not be used: each of its tests' ERROR (``SpecFile.setup``)."""


def dry_run(config: pytest.Config) -> bool:
    """``--setup-only`` or ``--setup-plan`` (``--collect-only`` runs no setup at all): pytest runs the
    setup phase, but nothing may contact an agent, so no agent starts and no pipeline runs."""
    return bool(config.getoption("setuponly", False) or config.getoption("setupplan", False))


def _declare_marker(config: pytest.Config, name: str) -> None:
    """A spec's tags are markers (``pytest -m core``): declare them (no unknown-marker warning)."""
    declared = config.stash.setdefault(_DECLARED, set())
    if name not in declared:
        declared.add(name)
        config.addinivalue_line("markers", f"{name}: a tag of a spec file")


class SpecFailed(Exception):
    """A case's checks did not hold; rendered by ``repr_failure``."""

    def __init__(self, text: str, more: int = 0) -> None:
        super().__init__(text)
        self.text = text
        self.more = more
        """Problems after the first one of an ERROR: the short summary and JUnit say how many."""


def failure_repr(text: str, path: str, line: int, message: str | None = None) -> ReprExceptionInfo:
    """The failure text as pytest's own exception repr: its ``reprcrash`` message (by default the
    first check that did not hold, the line after the title) is what the short summary and JUnit's
    ``message`` show (as ``assert 1 == 2``), and xdist carries it to the controller intact."""
    lines = text.splitlines()
    if message is None:
        message = lines[1] if len(lines) > 1 else text
    crash = ReprFileLocation(path, line, message)
    return ReprExceptionInfo(reprtraceback=ReprTracebackNative([f"{x}\n" for x in lines]), reprcrash=crash)


def spec_error_repr(error: SpecError, path: str, root: Path) -> ReprExceptionInfo:
    """Every problem of the file, each ``relative/path:line: place: message``; the short summary and
    JUnit get the first one whole (with how many more there are)."""
    text = shown_paths(error.render(), root)
    if not error.problems:
        return failure_repr(text, path, 0, "")
    summary = text.splitlines()[0] if text else ""
    if len(error.problems) > 1:
        summary += f" (and {len(error.problems) - 1} more)"
    return failure_repr(text, path, error.problems[0].line or 0, summary)


class SpecFile(SpecFileNode):
    """A spec file of any format; ``loader`` compiles it to a Suite."""

    loader: Callable[[Path], Suite]

    @classmethod
    def for_format(
        cls, parent: pytest.Collector, file_path: Path, loader: Callable[[Path], Suite]
    ) -> SpecFile:
        node = cls.from_parent(parent, path=file_path)
        node.loader = loader
        return node

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        self.suite = self.loader(self.path)
        groups: dict[str, list[Case]] = {}
        for case in self.suite.cases:
            if case.group is None:
                yield SpecItem.build(self, case)
            elif case.group not in groups:
                groups[case.group] = [case]
                yield SpecGroup.from_parent(self, name=case.group, cases=groups[case.group])
            else:
                groups[case.group].append(case)

    def prepare(self) -> None:
        """Acquire the file's agents and create its run state; the look-ahead calls it before the file
        is reached (lookahead.py), ``setup`` when it is (again: one more acquisition, released
        with the others when the file ends)."""
        from .engine.suite import SuiteRun

        services = runtime(self.config)
        try:
            services.acquire_agents(self.suite.agents, for_file=str(self.path))
        except Exception as exc:  # AgentError, SessionHookError: every test of the file errors  # noqa: BLE001
            file = shown_paths(str(self.path), self.config.rootpath)  # as node ids and spec errors name it
            message = f"{file}: the agent could not be used: {exc}"  # a log tail may hold any secret
            raise pytest.fail.Exception(services.redactor.text(message), pytrace=False) from None
        if FILE_RUN not in self.stash:
            self.stash[FILE_RUN] = SuiteRun(self.suite, services.context)

    def setup(self) -> None:
        """Acquire the agents and run the file's setup. What fails here is each test's ERROR when the
        test is set up, after its own spec problem or skip: those say more, and need neither the agent
        nor the setup."""
        from .engine.suite import SetupFailed

        if _FILE_FAILED in self.stash:
            del self.stash[_FILE_FAILED]
        if dry_run(self.config) or all(case.error for case in self.suite.cases):
            return  # (every test ERRORs on its spec problem, a setup one included: nothing is sent)
        services = runtime(self.config)
        try:
            self.prepare()
            state = self.stash[FILE_RUN]
            services.run(state.setup())
        except SetupFailed as exc:
            self.stash[_FILE_FAILED] = shown_paths(services.redactor.text(str(exc)), self.config.rootpath)
        except pytest.fail.Exception as exc:
            self.stash[_FILE_FAILED] = str(exc.msg)

    def teardown(self) -> None:
        state = self.stash.get(FILE_RUN, None)
        if state is None:
            return
        del self.stash[FILE_RUN]
        errors = runtime(self.config).run(state.teardown())
        if errors:
            raise pytest.fail.Exception(runtime(self.config).redactor.text("\n".join(errors)), pytrace=False)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, SpecError):
            return spec_error_repr(excinfo.value, str(self.path), self.config.rootpath)
        return super().repr_failure(excinfo)


def known_errors(items: Iterable[pytest.Item]) -> list[tuple[SpecItemNode, str]]:
    """The collected tests that will ERROR before anything runs (a problem in their own part of the
    spec, ``Case.error``): ``--collect-only`` and ``semantictest validate`` list them."""
    return [(item, item.case.error) for item in items if is_spec_item(item) and item.case.error]


class SpecGroup(pytest.Collector):
    """A named group of cases inside a file (a highbar suite): ``file::Suite::test``."""

    def __init__(self, *, cases: list[Case], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cases = cases

    def collect(self) -> Iterator[SpecItem]:
        for case in self.cases:
            yield SpecItem.build(self, case)


class SpecItem(SpecItemNode):
    """One case. The pipeline runs in the setup phase (so infrastructure problems are
    ERRORs), the verdict is judged in the call phase (so check failures are FAILUREs)."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    @classmethod
    def build(cls, parent: pytest.Collector, case: Case) -> SpecItem:
        item = cls.from_parent(parent, name=case.id, case=case)
        for marker in case.markers:
            _declare_marker(item.config, marker)
            item.add_marker(marker)
        test = case.repetition.decision
        if test is not None and test.shortfall() is not None:
            item.warn(SemanticTestWarning(f"{case.id}: pass rate: {test.shortfall()}"))
        return item

    def setup(self) -> None:
        settled = self.case.settled()  # skipped as it asks, or its ERROR: nothing is sent
        if settled is not None:
            self._raise_settled(settled, settled.error or "error")
        if dry_run(self.config):
            return
        failed = self.spec_file.stash.get(_FILE_FAILED, None)  # (SpecFile.setup ran before)
        if failed is not None:
            raise pytest.fail.Exception(failed, pytrace=False)
        services = runtime(self.config)
        verdict = services.verdict(self)  # maybe already running (run ahead: lookahead.py)
        self.stash[VERDICT] = verdict
        from .report.sections import add_sections

        add_sections(self, verdict, services.redactor, services.context.settings.trace_value_chars)
        self._raise_settled(verdict, services.redactor.text(verdict.error or "error"))

    def _raise_settled(self, verdict: Verdict, error: str) -> None:
        """An ERROR verdict as this test's setup error (``error``: its text as shown), a SKIPPED
        one as its skip; any other returns."""
        if verdict.outcome is Outcome.ERROR:
            raise SpecFailed(self._title() + "\n" + error, more=len(error.splitlines()) - 1)
        if verdict.outcome is Outcome.SKIPPED:
            raise _skip(verdict.skip_reason or "not evaluated")

    def runtest(self) -> None:
        verdict = self.verdict
        if verdict is None or verdict.outcome is Outcome.PASSED:
            return
        from .report.failure import render_verdict

        services = runtime(self.config)
        raise SpecFailed(render_verdict(self._title(), verdict, services.redactor, services.differ))

    def _title(self) -> str:
        file = shown_paths(str(self.path), self.config.rootpath)
        where = f"{file}:{self.case.line}" if self.case.line else file
        name = f": {self.case.name}" if self.case.name != self.case.id else ""
        return f"{self.case.id}{name} ({where})"

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, SpecFailed):  # (a spec error names its file as the node id does)
            text, more = shown_paths(excinfo.value.text, self.config.rootpath), excinfo.value.more
            lines = text.splitlines()
            message = (lines[1] if len(lines) > 1 else text) + (f" (and {more} more)" if more > 0 else "")
            return failure_repr(text, str(self.path), self.case.line or 0, message)
        return super().repr_failure(excinfo)

    def _repr_failure_py(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> TerminalRepr:
        """pytest renders setup-phase failures (our ERRORs) here rather than in ``repr_failure``.
        (Private: pytest has no public hook for how a setup error is drawn.)"""
        if isinstance(excinfo.value, SpecFailed):
            shown = self.repr_failure(excinfo)
            if isinstance(shown, TerminalRepr):  # (always: a SpecFailed is drawn as pytest's own repr)
                return shown
        return super()._repr_failure_py(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.case.line - 1 if self.case.line else None
        return self.path, line, f"{self.spec_file.suite.format}: {self.case.id}"


def _skip(reason: str) -> BaseException:
    """A skip reported at the spec item's place (its file and line), not at this module's line.
    (``_use_item_location`` is private: ``pytest.skip()`` has no public way to say so.)"""
    return pytest.skip.Exception(reason, _use_item_location=True)
