"""End-of-run summary: per-format counts, flaky tests with k/n, each run of repeated tests (``-v``),
LLM use. Built from the test reports (their ``user_properties``), so it is right on an xdist controller.

:class:`SummaryPlugin` puts each spec test's properties (:mod:`.junit`) on the item before its first
report, and the per-run rows on its teardown report; it tallies every report it sees.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import pytest

from ..json_types import JSONValue
from ..shown import one_line
from ..spec_nodes import is_spec_item, verdict_of
from ..stats import interval_label, interval_text

if TYPE_CHECKING:
    from ..model import Verdict
    from ..redact import Redactor

NAME = "semantictest-summary"
RUNS_ATTR = "semantictest_runs"
"""Report attribute with one row a run (``[label, outcome, ms, why]``) for repeated tests."""
COUNT_ATTR = "semantictest_run_count"
"""Report attribute with a test's runs as numbers, ``[passed, total]`` (JUnit's ``runs`` property
shows them as ``k/n`` for people; nothing reads that back)."""
JUDGE_ATTR = "semantictest_judge"
"""Report attribute with a test's judge verdicts: ``[passed, failed, [line, ...]]``."""
OUTCOMES = ("passed", "failed", "error", "skipped")
DETAIL_LIMIT = 10
"""Up to this many judged tests get their scores and reasons in the summary (all with ``-v``)."""

_USAGE = pytest.StashKey[dict[str, int]]()
_DONE = pytest.StashKey[bool]()


def _clip(text: str, limit: int = 160) -> str:
    return one_line(text, limit)


def run_rows(verdict: Verdict, redactor: Redactor) -> list[list[JSONValue]]:
    """One row a run: label, outcome, milliseconds, why it did not pass (redacted, one line)."""
    from .junit import run_verdicts

    rows = []
    for label, run in run_verdicts(verdict):
        why = ""
        if run.failures:
            why = run.failures[0].headline()
        elif run.error or run.skip_reason:
            why = run.error or run.skip_reason or ""
        rows.append([label, run.outcome.value, round(run.duration_ms, 1), _clip(redactor.text(why))])
    return rows


@dataclass
class Entry:
    """One spec test as the reports tell it."""

    nodeid: str
    format: str
    outcome: str | None = None
    passed_runs: int | None = None
    total_runs: int | None = None
    anytime: bool = False
    """Its runs stopped by their outcomes: the interval shown is the confidence sequence."""
    min_pass: JSONValue = None
    rows: list[list[JSONValue]] = field(default_factory=list)
    judge: list[JSONValue] | None = None
    unstable: str | None = None
    """Its judged steps whose samples disagreed (``--semantictest-judge-samples``)."""
    llm: tuple[int, int] | None = None
    """LLM answers while it ran: (live calls, replayed from the cache)."""

    @property
    def flaky(self) -> bool:
        passed, total = self.passed_runs, self.total_runs
        return passed is not None and total is not None and total > 1 and 0 < passed < total


class Tally:
    """Spec tests by node id, from ``pytest_runtest_logreport``."""

    def __init__(self) -> None:
        self.tests: dict[str, Entry] = {}

    def add(self, report: pytest.TestReport) -> None:
        props: dict[str, JSONValue] = dict(report.user_properties)
        fmt = props.get("format")
        if not isinstance(fmt, str):
            return
        entry = self.tests.setdefault(report.nodeid, Entry(report.nodeid, fmt))
        entry.min_pass = props.get("min_pass", entry.min_pass)
        entry.unstable = props.get("unstable_judgement", entry.unstable)
        if "llm_calls" in props:
            entry.llm = (int(props["llm_calls"]), int(props.get("cache_hits", 0)))
        if report.when == "setup" and not report.passed:
            entry.outcome = "error" if report.failed else "skipped"
        elif report.when == "call":
            entry.outcome = report.outcome
        elif report.when == "teardown":
            _add_teardown(entry, report)

    def by_format(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for entry in self.tests.values():
            counts = out.setdefault(entry.format, dict.fromkeys(OUTCOMES, 0))
            if entry.outcome in counts:
                counts[entry.outcome] += 1
        return out

    def flaky(self) -> list[Entry]:
        return [e for e in self.tests.values() if e.flaky]

    def repeated(self) -> list[Entry]:
        return [e for e in self.tests.values() if len(e.rows) > 1]

    def judged(self) -> list[Entry]:
        return [e for e in self.tests.values() if e.judge]


def _add_teardown(entry: Entry, report: pytest.TestReport) -> None:
    """A teardown that failed errs a test that had passed; the teardown report carries the runs'
    rows, their tally and the judge's counts (the controller's only way to them under xdist)."""
    if report.failed and entry.outcome in (None, "passed"):
        entry.outcome = "error"
    entry.rows = getattr(report, RUNS_ATTR, None) or entry.rows
    count = getattr(report, COUNT_ATTR, None)
    if isinstance(count, (list, tuple)) and len(count) in (2, 3):
        entry.passed_runs, entry.total_runs = int(count[0]), int(count[1])
        entry.anytime = len(count) > 2 and bool(count[2])
    entry.judge = getattr(report, JUDGE_ATTR, None) or entry.judge


def counts_text(counts: Mapping[str, int]) -> str:
    shown = [f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o)]
    return ", ".join(shown) or "nothing ran"


def _runs_text(entry: Entry) -> str:
    need = f", needs {entry.min_pass}" if entry.min_pass is not None else ""
    passed, total = entry.passed_runs, entry.total_runs
    if passed is not None and total is not None and total > 1:
        llm = f"; LLM answers: {entry.llm[0]} live, {entry.llm[1]} replayed" if entry.llm else ""
        shown = f"{interval_label(entry.anytime)} {interval_text(passed, total, entry.anytime)}"
        return f"{passed}/{total} runs passed ({shown}){need}{llm}"
    return f"{passed}/{total} runs passed{need}"


def _run_line(label: JSONValue, outcome: JSONValue, ms: float, why: JSONValue) -> str:
    """One run of a repeated test: its label, outcome, time and why it did not pass."""
    return f"  {label}: {outcome} ({ms:g} ms)" + (f": {why}" if why else "")


class SummaryPlugin:
    """Registered by the plugin with what it reads of the session: ``usage()``, this process's LLM
    usage counters, and ``redactor()``, the session's redactor (both read when a test runs)."""

    def __init__(
        self, config: pytest.Config, usage: Callable[[], Mapping[str, int]], redactor: Callable[[], Redactor]
    ) -> None:
        self.config = config
        self.usage = usage
        self.redactor = redactor
        self.tally = Tally()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """LLM use while a spec test runs (its pipeline runs in the setup phase)."""
        if not is_spec_item(item):
            return (yield)
        before = self.usage()
        try:
            return (yield)
        finally:
            after = self.usage()
            item.stash[_USAGE] = {k: v - before.get(k, 0) for k, v in after.items()}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        if is_spec_item(item) and not item.stash.get(_DONE, False):
            from .junit import properties

            item.stash[_DONE] = True
            repetition = item.case.repetition
            required = repetition.required if repetition.runs > 1 else None
            usage: dict[str, int] = item.stash.get(_USAGE, {})
            item.user_properties.extend(
                properties(item.spec_file.suite.format, item.verdict, required, usage, self.redactor())
            )
        report = yield
        verdict = verdict_of(item)
        if call.when == "setup" and verdict is not None and is_spec_item(item):
            # a test run ahead of its turn (docs/concurrency.md) is only collected in its setup phase:
            # its duration is its pipeline's own time, not the moment it took pytest to pick it up
            report.duration = max(report.duration, verdict.duration_ms / 1000)
        if call.when == "teardown" and verdict is not None and is_spec_item(item):
            self._attach_runs(report, verdict)
        return report

    def _attach_runs(self, report: pytest.TestReport, verdict: Verdict) -> None:
        """What the controller's summary reads, on the teardown report: the runs' tally, their rows
        (a repeated test) and the judge's verdict counts with their lines (redacted)."""
        from .judge import verdict_counts
        from .junit import run_tally

        redactor = self.redactor()
        setattr(report, COUNT_ATTR, [*run_tally(verdict), int(verdict.anytime)])
        rows = run_rows(verdict, redactor)
        if len(rows) > 1:
            setattr(report, RUNS_ATTR, rows)
        passed, failed, lines = verdict_counts(verdict, redactor.text)
        if lines:
            setattr(report, JUDGE_ATTR, [passed, failed, [redactor.text(line) for line in lines]])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.tally.add(report)

    def write(
        self,
        terminalreporter: pytest.TerminalReporter,
        usage: Mapping[str, int],
        usage_lines: Sequence[str] = (),
    ) -> None:
        """The summary section (only when spec tests ran), the LLM usage line and ``usage_lines`` (each
        model's tokens and cost, the rate limit's waits)."""
        tr = terminalreporter
        if self.tally.tests:
            self._write_tests(tr)
        if usage.get("calls", 0) or usage.get("cache_hits", 0):
            tr.write_line(
                f"semantictest: {usage.get('calls', 0)} LLM calls, {usage.get('cache_hits', 0)} cache hits, "
                f"{usage.get('tokens', 0)} tokens"
            )
        for line in usage_lines:
            tr.write_line(f"semantictest: {line}")

    def _write_tests(self, tr: pytest.TerminalReporter) -> None:
        """The summary section: counts by format, flaky tests, unstable judgements, each repeated test's
        runs (with -v), the judge's verdicts."""
        tally = self.tally
        tr.write_sep("-", "semantictest summary")
        formats = tally.by_format()
        width = max(len(f) for f in formats)
        for fmt, counts in sorted(formats.items()):
            tr.write_line(f"{fmt.ljust(width)}  {counts_text(counts)}")
        for entry in tally.flaky():
            tr.write_line(f"flaky: {entry.nodeid} ({_runs_text(entry)})")
        for entry in tally.tests.values():
            if entry.unstable:
                tr.write_line(f"unstable judgement: {entry.nodeid}: {entry.unstable}")
        if self.config.getoption("verbose", 0) > 0:
            for entry in tally.repeated():
                tr.write_line(f"{entry.nodeid}: {_runs_text(entry)}")
                for row in entry.rows:
                    tr.write_line(_run_line(*row))
        self._write_judged(tr)

    def _write_judged(self, tr: pytest.TerminalReporter) -> None:
        """The judge's verdict counts; each judged test's scores and reasons (a few, or all with -v)."""
        judged = self.tally.judged()
        if not judged:
            return
        passed, failed = _judge_totals(judged)
        tr.write_line(
            f"judge verdicts: {passed} passed, {failed} not passed, in {len(judged)} judged test(s)"
        )
        verbose = self.config.getoption("verbose", 0) > 0
        if len(judged) > DETAIL_LIMIT and not verbose:
            tr.write_line("  (-v shows each judged test's scores and reasons)")
            return
        for entry in judged:
            tr.write_line(f"  {entry.nodeid}")
            for line in entry.judge[2] if entry.judge else []:
                tr.write_line(f"    {line}")


def _judge_totals(judged: list[Entry]) -> tuple[int, int]:
    """The judge's passed and not passed verdicts over the judged tests."""
    passed = sum(e.judge[0] for e in judged if e.judge)
    failed = sum(e.judge[1] for e in judged if e.judge)
    return passed, failed


def summary_plugin(config: pytest.Config) -> SummaryPlugin | None:
    return cast("SummaryPlugin | None", config.pluginmanager.get_plugin(NAME))
