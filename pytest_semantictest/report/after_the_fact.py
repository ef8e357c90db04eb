"""Verdicts reached after a test was reported (a late tool call fails a test that passed, a regression
against the baseline fails the gate): each becomes a test report of its own, sent through
``pytest_runtest_logreport`` like any test's, so every artefact that reads reports (JUnit XML, the
HTML report, ``--semantictest-results``, pytest-reportlog, ...) records it as failed or errored.

A test's own report is never rewritten: pytest wrote it when the test ended (JUnit and HTML already
hold it), and a second entry under the same id would be a duplicate row to most readers. The new
entry has its own id, the test's id with what judged it again in brackets (``<node id> (late call)``),
so the artefacts agree with the exit status and the terminal: the test as reported, and one more
entry that failed. In the terminal it is counted under its own word (``1 failed by a late call``,
:func:`teststatus`) and printed by the plugin that found it, not as a progress letter after 100%.

Sent once, by the xdist controller or the only process, during ``pytest_sessionfinish`` before the
artefacts are written (JUnit's and the results file's writers run after ``tryfirst`` hooks,
pytest-html's is ``trylast``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pytest

from ..json_types import JSONValue

Phase = Literal["setup", "call", "teardown"]
ATTRIBUTE = "semantictest_after_the_fact"
"""The report attribute that holds the terminal category (``failed by a late call``)."""
RECORD_KEY = "judged_again_by"
"""The results record's key naming the category: such a record is no test of its own to compare with
a baseline (``is_entry``)."""


def node_id(nodeid: str, what: str) -> str:
    """The id of the entry for ``nodeid`` judged again by ``what`` (``late call``)."""
    return f"{nodeid} ({what})"


def send(
    config: pytest.Config,
    nodeid: str,
    outcome: Literal["failed", "error"],
    message: str,
    category: str,
    record: dict[str, JSONValue] | None = None,
) -> None:
    """Report ``nodeid`` (an id from :func:`node_id`) as ``outcome`` because of ``message``: a
    failure in its call phase, an error in its setup phase, as pytest reports a test's own.
    ``category``: the terminal's word for it; ``record``: what the results file records of it."""
    from .results import ATTRIBUTE as RESULTS

    path = nodeid.split("::", 1)[0]
    location = (path, None, nodeid.split("::", 1)[-1])
    failed_in: Phase = "call" if outcome == "failed" else "setup"
    phases: tuple[Phase, ...] = (
        ("setup", "call", "teardown") if failed_in == "call" else ("setup", "teardown")
    )
    session = _session(config)
    shouldfail = session.shouldfail if session is not None else False
    for when in phases:
        report = pytest.TestReport(
            nodeid,
            location,
            {nodeid: 1},
            "failed" if when == failed_in else "passed",
            message if when == failed_in else None,
            when,
            user_properties=[(RECORD_KEY, category)],
        )
        setattr(report, ATTRIBUTE, category)
        if when == "teardown":
            setattr(report, RESULTS, {**(record or {}), RECORD_KEY: category})
        config.hook.pytest_runtest_logreport(report=report)
    if session is not None:  # -x/--maxfail: the run is over already, no "stopping after" line for it
        session.shouldfail = shouldfail


def is_entry(record: Mapping[str, JSONValue]) -> bool:
    """Whether a results record is an entry :func:`send` made (not a test a baseline compares)."""
    return RECORD_KEY in record


def teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """The terminal's (category, letter, word) of an entry :func:`send` made: counted under its
    category, printed as nothing (it comes after the progress line's 100%)."""
    category = getattr(report, ATTRIBUTE, None)
    if not isinstance(category, str):
        return None
    return (category, "", "") if report.when == "call" or report.failed else ("", "", "")


def _session(config: pytest.Config) -> pytest.Session | None:
    """The session whose ``shouldfail`` a failed report sets (pytest keeps it on the config's
    collection, which it does not expose otherwise)."""
    found = config.pluginmanager.get_plugin("session")
    return found if isinstance(found, pytest.Session) else None
