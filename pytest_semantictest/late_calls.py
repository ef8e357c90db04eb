"""Tool calls that arrive after a test's window closed, read while a later test runs or at the end: the
session's exit status, terminal summary and every report artefact follow highbar, which judges that
earlier test again.

pytest reports a test when it ends, so when such a call is read the test's report is written: its JUnit
entry, HTML row and results line keep the verdict it was reported with. At the end of the session each
process reads its agents once more (``AgentPool.finish``); every passed execution a late call fails is
mapped to its test, whose verdict is worked out again with that run failed (``min_pass`` per phrasing,
as highbar's gate does). A test that now fails gets an entry of its own in every artefact,
``<node id> (late call)``, failed (or errored), with why (``report.after_the_fact``): JUnit, HTML and the
results file then agree with the terminal summary ("FAILED by a late call: <node id> - now fails: ...",
and "1 failed by a late call" in the final counts line; the semantictest summary counts the test as
failed) and with the exit status, 1 (a 2, or an interrupt's status, stays). One that still passes gets
highbar's warning "a run now fails ..., and the test still passes". Under pytest-xdist each worker hands
its findings and its agents' warnings to the controller, which reports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

import pytest

from .json_types import JSONValue
from .report.summary import summary_plugin
from .spec_nodes import is_spec_item, spec_file_of, verdict_of

if TYPE_CHECKING:
    from .model import Outcome, Verdict
    from .redact import Redactor
    from .report.summary import SummaryPlugin

NAME = "semantictest-late-calls"
WORKER_KEY = "semantictest_late_calls"
STATS = {"failed": "failed by a late call", "error": "error by a late call"}
"""The terminal reporter's counts for the tests a late call turned (after their report)."""
WHAT = "late call"
"""What the entry of a test a late call turned is named for (``<node id> (late call)``)."""


class LateCallServices(Protocol):
    """What this plugin uses of the session's runtime (``runtime.Runtime``), passed in by the plugin."""

    @property
    def started(self) -> bool: ...

    @property
    def redactor(self) -> Redactor: ...

    def agents_finish(self) -> tuple[list[str], list[tuple[str, str, str]]]: ...


class LateCalls:
    """A pytest plugin (see the module doc), registered by the plugin with the process's runtime."""

    def __init__(self, config: pytest.Config, runtime: LateCallServices) -> None:
        self.config = config
        self.runtime = runtime
        self.warnings: list[str] = []
        # nodeid, outcome ("failed", "error", "passed"), text; name, format and file of the test
        self.findings: list[dict[str, str]] = []

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        """On the xdist controller: what a finished worker found."""
        found = getattr(node, "workeroutput", {}).get(WORKER_KEY)
        if isinstance(found, dict):
            self.warnings += [str(w) for w in found.get("warnings", [])]
            self.findings += [dict(f) for f in found.get("findings", [])]

    @pytest.hookimpl(tryfirst=True)  # before JUnit, HTML and the results file are written
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        warnings, failed = self.runtime.agents_finish()
        redact = self.runtime.redactor.text if self.runtime.started else str
        self.warnings = list(dict.fromkeys([*self.warnings, *map(redact, warnings)]))
        if failed:
            turned = {test_id: (outcome, message) for test_id, outcome, message in failed}
            self.findings += [{**f, "text": redact(f["text"])} for f in findings(session.items, turned)]
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKER_KEY] = {"warnings": self.warnings, "findings": self.findings}
            return
        self._report(summary_plugin(self.config))
        if any(f["outcome"] != "passed" for f in self.findings) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _report(self, summary: SummaryPlugin | None) -> None:
        """Each test a late call turned: an entry of its own in every artefact, and in the semantictest
        summary's tally (the terminal's and the HTML report's) the test counts with highbar's verdict."""
        from .report.after_the_fact import node_id, send

        for finding in self.findings:
            outcome = finding["outcome"]
            if outcome not in STATS:
                continue
            test = finding["nodeid"]
            record: dict[str, JSONValue] = {"late_call_of": test}
            record.update({k: finding[k] for k in ("name", "file", "format") if k in finding})
            if "name" in record:
                record["name"] = f"{record['name']} ({WHAT})"
            why = f"{test}: {finding['text']}"
            send(
                self.config,
                node_id(test, WHAT),
                "failed" if outcome == "failed" else "error",
                why,
                STATS[outcome],
                record,
            )
            entry = summary.tally.tests.get(test) if summary is not None else None
            if entry is not None:
                entry.outcome = outcome

    def write(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The agents' warnings and the tests late calls judged again (the terminal summary; their
        entries are counted under :data:`STATS` by the terminal, ``report.after_the_fact``)."""
        for warning in self.warnings:
            terminalreporter.write_line(f"semantictest: warning: {warning}")
        for finding in self.findings:
            if finding["outcome"] == "passed":
                terminalreporter.write_line(f"semantictest: warning: {finding['nodeid']}: {finding['text']}")
                continue
            stat = STATS[finding["outcome"]]
            terminalreporter.write_line(
                f"{stat.split()[0].upper()} by a late call: {finding['nodeid']} - {finding['text']}", red=True
            )


def findings(items: Iterable[pytest.Item], failed: Mapping[str, tuple[str, str]]) -> list[dict[str, str]]:
    """Each spec test with an execution in ``failed`` (test id -> its outcome now, why), judged again."""
    out = []
    for item in items:
        verdict = verdict_of(item)
        if verdict is None or not is_spec_item(item):
            continue
        judged = rejudge(verdict, item.case.repetition.required, failed)
        if judged is None:
            continue
        after, tally, detail = judged
        if after is not verdict.outcome:
            word = "now fails" if after.value == "failed" else "is now unverified"
            test = {"name": item.case.name, "file": item.nodeid.split("::", 1)[0], "format": _format(item)}
            out.append(
                {"nodeid": item.nodeid, "outcome": after.value, "text": f"{word}{tally}: {detail}", **test}
            )
        elif after.value == "passed":
            out.append(
                {
                    "nodeid": item.nodeid,
                    "outcome": "passed",
                    "text": f"a run now fails{tally}, and the test still passes: {detail}",
                }
            )
    return out


def _format(item: pytest.Item) -> str:
    spec_file = spec_file_of(item)
    return spec_file.suite.format if spec_file is not None else "python"


def rejudge(
    verdict: Verdict, required: int, failed: Mapping[str, tuple[str, str]]
) -> tuple[Outcome, str, str] | None:
    """The outcome with the runs whose execution is in ``failed`` turned, highbar's tally `` (k/n, min m)``
    (a repeated test without phrasings, else "") and what failed them; None when no run of ``verdict``
    is there."""
    from .engine.runner import combine
    from .model import Outcome

    outcomes: list[Outcome] = []
    notes: list[str] = []
    tally = ""
    for phrasing in verdict.phrasings or [verdict]:
        label = f"[{phrasing.label}] " if verdict.phrasings and phrasing.label else ""
        outcome, marked, said = _rejudge_runs(phrasing.runs or [phrasing], label, required, failed)
        outcomes.append(outcome)
        notes += said
        if len(marked) > 1 and not verdict.phrasings:
            tally = f" ({sum(r.outcome is Outcome.PASSED for r in marked)}/{len(marked)}, min {required})"
    if not notes:
        return None
    return combine(outcomes), tally, "; ".join(notes)


def _rejudge_runs(
    runs: list[Verdict], label: str, required: int, failed: Mapping[str, tuple[str, str]]
) -> tuple[Outcome, list[Verdict], list[str]]:
    """One phrasing's runs with those whose execution is in ``failed`` turned, its outcome with them
    (``min_pass`` when it repeats), and what failed them."""
    from .engine.runner import aggregate, combine
    from .model import Outcome, Verdict

    marked: list[Verdict] = []
    notes: list[str] = []
    for n, run in enumerate(runs, 1):
        hit = [failed[i] for i in _execution_ids(run) if i in failed]
        which = f" (run {n} of {len(runs)})" if len(runs) > 1 else ""
        notes += [f"{label}{message}{which}" for _, message in hit]
        now = [run.outcome, *(Outcome(outcome) for outcome, _ in hit)]
        marked.append(Verdict(combine(now)) if hit else run)
    outcome = aggregate(marked, required) if len(runs) > 1 else marked[0].outcome
    return outcome, marked, notes


def _execution_ids(run: Verdict) -> list[str]:
    """The test ids (``X-Highbar-Test``) a run's agent turns were sent with."""
    ids = []
    for trace in run.trace:
        output = trace.output
        if isinstance(output, Mapping) and isinstance(output.get("test_id"), str):
            ids.append(output["test_id"])
    return list(dict.fromkeys(ids))
