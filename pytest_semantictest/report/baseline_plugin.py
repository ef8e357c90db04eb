"""``--semantictest-baseline PATH``: compare this run with an earlier results file, in every report;
``--semantictest-fail-on-regression`` makes a significant fall of a pass rate fail the run (exit 1),
and, when asked (``--semantictest-fail-on-slower``, ``--semantictest-fail-on-score-drop``), a
significant latency or score change of at least the given size.

Registered on the xdist controller (or the only process) before the results writer, whose records
(this run's) it reads: per test as its teardown report arrives (JUnit's ``baseline`` and
``baseline_change`` properties, before the suite-wide correction), and for the whole run at the end
(the terminal section, the HTML summary, the results file's ``baseline``, the exit status). Under
``--semantictest-fail-on-regression`` each regression, and a baseline that could not be compared, is
also an entry of its own, failed (``<node id> (regression)``, ``report.after_the_fact``): JUnit, HTML
and the results file are red where the exit status is 1.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..json_types import JSONValue
from ..shown import printable
from .after_the_fact import ATTRIBUTE, is_entry, node_id, send
from .baseline import BaselineError, Change, Comparison, compare, load
from .results_file import files_of

if TYPE_CHECKING:
    from .results import ResultsWriter

ORDER = ("regressed", "improved", "changed", "inconclusive", "gone", "new")
GATE = "failed by the baseline gate"
"""The terminal's count of what ``--semantictest-fail-on-regression`` failed after the tests ran."""


class BaselinePlugin:
    def __init__(
        self,
        config: pytest.Config,
        path: str,
        writer: ResultsWriter,
        gate: bool,
        slower: float | None = None,
        score_drop: float | None = None,
    ) -> None:
        for name, given, least in (("slower", slower, 1.0), ("score-drop", score_drop, 0.0)):
            if given is not None and not given > least:
                raise pytest.UsageError(
                    f"pytest-semantictest: --semantictest-fail-on-{name} must be more than {least:g}"
                )
        self.slower, self.score_drop = slower, score_drop
        self.config = config
        self.path = Path(str(config.invocation_params.dir)) / path
        self.writer = writer
        self.gate = gate
        self.old: dict[str, dict[str, JSONValue]] = {}
        self.problem: str | None = None
        self.notes: list[str] = []
        self.comparison: Comparison | None = None
        try:
            self.old, self.notes = load(self.path)
        except BaselineError as exc:
            if self.path.exists():  # a file given that cannot be used: one line, before any test runs
                raise pytest.UsageError(f"pytest-semantictest: --semantictest-baseline: {exc}") from None
            self.problem = str(exc)  # none yet (a first run): not compared, and said
        writer.inputs.extend(files_of(self.path))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """After the results writer (registered later, so called earlier) has this test's record."""
        if report.when != "teardown" or self.problem is not None or hasattr(self.config, "workerinput"):
            return  # (a worker's reports reach the controller, which compares them)
        if hasattr(report, ATTRIBUTE):
            return  # an entry for a verdict reached after the tests (a late call), not a test
        record = self.writer.records.get(report.nodeid)
        if record is None:
            return
        one = compare(
            {k: v for k, v in self.old.items() if k == report.nodeid},
            {report.nodeid: record},
            str(self.path),
            (),
        ).changes[report.nodeid]
        report.user_properties.append(("baseline", one.old.text() if one.old else "none"))
        report.user_properties.append(("baseline_change", one.kind))

    @pytest.hookimpl(tryfirst=True)  # before JUnit, HTML and the results file are written
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            return
        if self.problem is not None:
            if self.gate:  # the gate could not check: not a pass
                send(self.config, node_id(self._shown, "baseline"), "failed", self.problem, GATE)
                _fail_run(session)
            return
        self.comparison = self._compare_run()
        for nodeid, change in self.comparison.changes.items():
            if nodeid in self.writer.records:
                self.writer.records[nodeid]["baseline"] = change.as_dict()
        if self.gate:
            self._send_failures(self.comparison)
            if self.comparison.failing:
                _fail_run(session)

    def _compare_run(self) -> Comparison:
        """This run's tests against the baseline's (entries sent after the tests left out on both
        sides), the baseline's notes first."""
        records = {k: r for k, r in self.writer.records.items() if not is_entry(r)}
        old = {k: r for k, r in self.old.items() if not is_entry(r)}
        ran = {str(r.get("file")) for r in records.values() if r.get("file")}
        comparison = compare(
            old, records, str(self.path), ran, slower=self.slower, score_drop=self.score_drop
        )
        comparison.notes[:0] = self.notes
        return comparison

    def _send_failures(self, comparison: Comparison) -> None:
        """Each thing that fails the run under the gate: an entry of its own in every artefact."""
        for change in comparison.regressed:
            why = f"regressed against the baseline {self.path}: {_line(change)}"
            send(self.config, node_id(change.nodeid, "regression"), "failed", why, GATE)
        for change, figure in comparison.figures():
            if figure.gates:
                why = f"{figure.direction} against the baseline {self.path}: {figure.text()}"
                send(self.config, node_id(change.nodeid, figure.name), "failed", why, GATE)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if hasattr(self.config, "workerinput"):
            return
        tr = terminalreporter
        tr.write_sep("-", "semantictest baseline")
        if self.problem is not None:
            tr.write_line(
                f"not compared: {self.problem}"
                + (" (--semantictest-fail-on-regression: exit 1)" if self.gate else "")
            )
            return
        if self.comparison is None:
            return
        self._write_changes(tr, self.comparison)
        self._write_figures(tr, self.comparison)
        if self.gate and self.comparison.failing:
            tr.write_line(
                f"--semantictest-fail-on-regression: {len(self.comparison.failing)} regression(s), exit 1"
            )

    def _write_changes(self, tr: pytest.TerminalReporter, comparison: Comparison) -> None:
        """The counts by kind, each changed test by kind, then the comparison's notes."""
        counts = {kind: len(comparison.of_kind(kind)) for kind in (*ORDER, "unchanged")}
        tr.write_line(f"compared with {self.path}: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
        for kind in ORDER:
            for change in comparison.of_kind(kind):  # ids read from a file: escaped
                tr.write_line(printable(f"{kind}: {_line(change)}"))
        for note in comparison.notes:
            tr.write_line(printable(f"note: {note}"))

    @staticmethod
    def _write_figures(tr: pytest.TerminalReporter, comparison: Comparison) -> None:
        """The latency and score changes in a section of their own, when there are any."""
        figures = comparison.figures()
        if not figures:
            return
        tr.write_sep("-", "semantictest baseline: latency and judge scores")
        for change, figure in figures:
            gate = " (gates: at least the asked change)" if figure.gates else ""
            tr.write_line(printable(f"{figure.direction}: {change.nodeid} {figure.text()}{gate}"))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        if self.problem is not None:
            prefix.append(
                f'<div class="st-baseline"><h3>Baseline</h3><p>not compared: {escape(self.problem)}</p></div>'
            )
            return
        if self.comparison is None:
            return
        rows = "".join(
            f"<tr><td>{escape(kind)}</td><td>{escape(c.nodeid)}</td><td>{escape(c.old.text() if c.old else '')}</td>"
            f"<td>{escape(c.new.text() if c.new else '')}</td><td>{escape('; '.join(c.reasons))}</td></tr>"
            for kind in ORDER
            for c in self.comparison.of_kind(kind)
        )
        figures = "".join(
            f"<tr><td>{escape(f.direction)}</td><td>{escape(c.nodeid)}</td><td>{escape(f.text())}</td>"
            f"<td>{'gates' if f.gates else 'reported'}</td></tr>"
            for c, f in self.comparison.figures()
        )
        apart = (
            "<h4>Latency and judge scores (gate only when asked)</h4>"
            '<table class="st-summary st-baseline-figures"><thead><tr><th>change</th><th>test</th>'
            f"<th>figures</th><th>gate</th></tr></thead><tbody>{figures}</tbody></table>"
            if figures
            else ""
        )
        prefix.append(
            f'<div class="st-baseline"><h3>Baseline: {escape(str(self.path))}</h3>'
            '<table class="st-summary st-baseline-table"><thead><tr><th>change</th><th>test</th>'
            f"<th>baseline</th><th>this run</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>"
            f"{apart}</div>"
        )

    @property
    def _shown(self) -> str:
        """The baseline's path as node ids are written (from the root folder, when it is under it)."""
        try:
            return self.path.relative_to(Path(str(self.config.rootpath))).as_posix()
        except ValueError:
            return str(self.path)


def _fail_run(session: pytest.Session) -> None:
    """The run's exit status is 1 (what the gate failed), unless it is already worse."""
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _line(change: Change) -> str:
    was = f"{change.old.text()} -> {change.new.text()}" if change.old and change.new else ""
    why = "; ".join(change.reasons)
    return " ".join(part for part in (change.nodeid, f"({was})" if was else "", why) if part)
