"""The HTML report's run count and row names told as the other reports tell them.

pytest-html's "13 tests took 2 s" counts passed and failed tests only (not errors, not skips), and a
row of a test that ERRORed or was skipped before it ran is named ``<node id>::setup``. Mixed into the
HTML plugin (:mod:`.html`): the summary says how many tests there were, each by its outcome, and how
many files did not collect (pytest-html's own line is hidden), and a skipped spec test's row is named
by its node id.
"""

from __future__ import annotations

import time

import pytest

PRIORITY = ("error", "failed", "skipped", "xfailed", "xpassed", "passed")
"""A test's outcome from its phases' reports: the first of these any phase had."""


class RunCount:
    """Hooks for the HTML plugin (pytest-html must be active, as it is when the plugin is registered;
    a hook method's name starts with ``pytest_``, as pytest requires of every hook implementation)."""

    _started: float | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._started = time.monotonic()

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        """A spec test skipped before it ran is that test, not its ``::setup``."""
        spec = "format" in dict(getattr(report, "user_properties", ()))
        if spec and report.skipped and report.when == "setup" and len(cells) > 1:
            cells[1] = cells[1].replace(f"{report.nodeid}::setup<", f"{report.nodeid}<")

    @pytest.hookimpl(optionalhook=True, specname="pytest_html_results_summary")
    def pytest_html_results_summary_count(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        prefix.append(run_count(session.config, self._started))


def run_count(config: pytest.Config, started: float | None) -> str:
    """``<p>`` with every test by its outcome and the files that did not collect."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    tests, uncollected = _outcomes(getattr(reporter, "stats", {}))
    took = f" took {time.monotonic() - started:.2f} s" if started is not None else ""
    noun = "test" if len(tests) == 1 else "tests"
    return (
        "<style>.summary .run-count{display:none}</style>"
        f'<p class="st-run-count">{len(tests)} {noun}{took}: {_by_outcome(tests)}'
        f"{_uncollected_text(uncollected)}.</p>"
    )


def _outcomes(stats: dict[str, list[object]]) -> tuple[dict[str, str], set[str]]:
    """Each test's outcome (the first of ``PRIORITY`` any of its phases had), and the node ids of the
    files that did not collect, from the terminal reporter's reports by category."""
    tests: dict[str, str] = {}
    uncollected = set()
    for key, reports in stats.items():
        for report in reports:
            if isinstance(report, pytest.CollectReport) and report.failed:
                uncollected.add(report.nodeid)
            elif isinstance(report, pytest.TestReport):
                tests[report.nodeid] = _outcome_after(tests.get(report.nodeid), _phase_word(key, report))
    return tests, uncollected


def _phase_word(key: str, report: pytest.TestReport) -> str | None:
    """The outcome one phase's report says: its category, else "passed" for a call (None: no say)."""
    if key in PRIORITY:
        return key
    return "passed" if report.when == "call" else None


def _outcome_after(current: str | None, word: str | None) -> str:
    """A test's outcome once a phase said ``word``: the first in ``PRIORITY`` of the two; a test no
    phase said anything of passed."""
    if word is None:
        return current or "passed"
    if current is None or PRIORITY.index(word) < PRIORITY.index(current):
        return word
    return current


def _by_outcome(tests: dict[str, str]) -> str:
    """The tests by outcome in ``PRIORITY`` order ("2 passed, 1 failed"; outcomes no test had left out)."""
    numbers = {word: sum(1 for w in tests.values() if w == word) for word in PRIORITY}
    counts = [f"{n} {'errors' if word == 'error' and n > 1 else word}" for word, n in numbers.items() if n]
    return ", ".join(counts) or "none ran"


def _uncollected_text(uncollected: set[str]) -> str:
    """How many files did not collect ("; 2 files did not collect"), or nothing when all did."""
    if not uncollected:
        return ""
    return f"; {len(uncollected)} file{'s' if len(uncollected) != 1 else ''} did not collect"


def skip_reason(report: pytest.TestReport) -> str:
    """Why a test was skipped, without pytest's location tuple."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return report.longreprtext
