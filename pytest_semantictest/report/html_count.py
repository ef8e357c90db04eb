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
    stats: dict[str, list[object]] = getattr(reporter, "stats", {})
    tests: dict[str, str] = {}
    uncollected = set()
    for key, reports in stats.items():
        for report in reports:
            if isinstance(report, pytest.CollectReport) and report.failed:
                uncollected.add(report.nodeid)
            elif isinstance(report, pytest.TestReport):
                word = key if key in PRIORITY else "passed" if report.when == "call" else None
                current = tests.get(report.nodeid)
                if word is not None and (current is None or PRIORITY.index(word) < PRIORITY.index(current)):
                    tests[report.nodeid] = word
                elif current is None:
                    tests[report.nodeid] = "passed"
    numbers = {word: sum(1 for w in tests.values() if w == word) for word in PRIORITY}
    counts = [f"{n} {'errors' if word == 'error' and n > 1 else word}" for word, n in numbers.items() if n]
    took = f" took {time.monotonic() - started:.2f} s" if started is not None else ""
    files = (
        f"; {len(uncollected)} file{'s' if len(uncollected) != 1 else ''} did not collect"
        if uncollected
        else ""
    )
    noun = "test" if len(tests) == 1 else "tests"
    return (
        "<style>.summary .run-count{display:none}</style>"
        f'<p class="st-run-count">{len(tests)} {noun}{took}: {", ".join(counts) or "none ran"}{files}.</p>'
    )


def skip_reason(report: pytest.TestReport) -> str:
    """Why a test was skipped, without pytest's location tuple."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return report.longreprtext
