"""``--semantictest-results=PATH.jsonl``: one JSON object per test, for every kind of test.

Each object: ``id`` (the node id), ``name``, ``file``, ``format``, ``outcome`` (passed, failed,
error, skipped, xfailed, xpassed), ``duration_s``, ``message`` (why it did not pass), and for spec
tests ``turns`` (input, output, tool calls, ...), ``checkpoints``, ``judgements`` (judged checks'
items), ``notes`` (the :class:`~pytest_semantictest.evidence.Note` records blocks and checks gave)
``llm_usage`` (this test's LLM calls, cache hits, tokens; ``prompt_tokens@MODEL`` and
``completion_tokens@MODEL`` per model; ``rate_wait_ms`` when it waited for the rate limit), ``latency_ms`` (its pipelines' time),
``steps`` (what each step sent and got, its tool calls and judge verdicts: :mod:`.trace_data`),
``score`` (the deciding judge's), ``collection_error`` (a file that did not collect: its own
record, ``outcome: error``, its problems the ``message``), for
repeated tests ``runs``, ``run_durations_ms``, ``run_scores``, ``pass_rate`` and ``runs_not_counted``
(runs that finished after the first runs had decided), ``baseline`` (the
comparison with ``--semantictest-baseline``) and ``results_version``. A worker attaches its test's data to the teardown report (pytest-
xdist carries report attributes to the controller); only the controller writes the file. Every
value passes through the redactor.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from ..json_types import JSONValue
from ..shown import Mask, shorten
from ..spec_nodes import MUTATION, is_spec_item, verdict_of

if TYPE_CHECKING:
    from ..model import Verdict
    from ..redact import Redactor

ATTRIBUTE = "semantictest_result"
VALUE_CHARS = 1000
"""A body, argument or reasoning in ``steps`` is cut after this many characters (once redacted)."""
RESULTS_VERSION = 1
"""Every record says which version of this format it is (``results_version``): the baseline
comparison reads only the versions it knows."""


def _plain(value: JSONValue) -> JSONValue:
    """JSON-ready (and execnet-ready) data."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


class ResultsWriter:
    """Registered as a plugin when the option is given; see the module docstring. ``usage()``: this
    process's LLM usage counters; ``redactor()``: the session's redactor (before its services
    started: one of the environment's secrets)."""

    def __init__(
        self,
        config: pytest.Config,
        path: str | None,
        usage: Callable[[], dict[str, int]],
        redactor: Callable[[], Redactor],
    ) -> None:
        self.config = config
        self.path = Path(str(config.invocation_params.dir)) / path if path else None
        self._usage = usage
        self._redactor = redactor
        self.records: dict[str, dict[str, JSONValue]] = {}
        self.inputs: list[Path] = []
        """Files this run reads (the baseline's): the results file never replaces one."""
        self.problem: str | None = None
        self._before: dict[str, int] = {}

    # -- every process: what one test did ---------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._before = self._usage()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "teardown":
            try:
                setattr(report, ATTRIBUTE, _plain(self._redactor().data(self.describe(item))))
            except Exception as exc:  # noqa: BLE001  a results file must never break a test run
                setattr(report, ATTRIBUTE, {"results_error": f"{type(exc).__name__}: {exc}"})
        return report

    def describe(self, item: pytest.Item) -> dict[str, JSONValue]:
        """One test's record as this process knows it (the controller adds the outcome)."""
        case = item.case if is_spec_item(item) else None
        record: dict[str, JSONValue] = {"name": (case.name if case is not None else "") or item.name}
        record["file"] = self._file_of(item)
        record["format"] = item.spec_file.suite.format if is_spec_item(item) else "python"
        mutation = item.stash.get(MUTATION, None)  # --semantictest-mutate: killed, total, score, survivors
        if mutation is not None:
            record["mutation"] = cast(JSONValue, dict(mutation))
        verdict = verdict_of(item)
        if verdict is not None:
            record.update(_verdict_fields(verdict, case, self._redactor()))
        used = _usage_delta(self._before, self._usage())
        if used or case is not None:
            record["llm_usage"] = _usage_record(used)
        return record

    def _file_of(self, item: pytest.Item) -> str:
        """The test's file relative to the rootdir (as it is, outside the rootdir)."""
        try:
            return str(Path(str(item.path)).relative_to(Path(str(self.config.rootpath))))
        except ValueError:
            return str(item.path)

    # -- the controller (or the only process): collect and write ----------------------------

    @pytest.hookimpl(tryfirst=True)  # (before the baseline comparison, which reads the record)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = self.records.setdefault(
            report.nodeid,
            {"id": report.nodeid, "outcome": "passed", "duration_s": 0.0, "results_version": RESULTS_VERSION},
        )
        record["duration_s"] = round(record["duration_s"] + float(report.duration or 0.0), 6)
        outcome = _outcome(report)
        if outcome is not None and (record["outcome"] in ("passed", "xpassed") or outcome == "failed"):
            record["outcome"] = outcome
            message = _message(report, self._redactor().text)  # masked, then shortened
            if message:
                record["message"] = message
        data = getattr(report, ATTRIBUTE, None)
        if isinstance(data, dict):
            record.update(data)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A file that did not collect (a broken spec file) is an error of the run: a record of its own,
        so the results file is not green where the run is not (its problems are the message)."""
        if not report.failed or hasattr(self.config, "workerinput"):
            return
        self.records[report.nodeid] = {
            "id": report.nodeid,
            "name": report.nodeid.rsplit("/", 1)[-1],
            "file": report.nodeid.split("::", 1)[0],
            "outcome": "error",
            "duration_s": 0.0,
            "results_version": RESULTS_VERSION,
            "message": _message(report, self._redactor().text),
            "collection_error": True,
        }

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            return
        if self.path is None:  # kept for the baseline comparison only
            return
        from ..files import write_atomic

        text = "".join(_line(record) for record in self.records.values())
        try:  # checked writable before the run (start_checks.py); a disk that filled since is said
            write_atomic(self.path, text, inputs=self.inputs)
        except OSError as exc:
            self.problem = f"results NOT written to {self.path}: {exc.strerror or exc}"
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not hasattr(self.config, "workerinput") and self.path is not None:
            if self.problem is not None:
                terminalreporter.write_line(f"semantictest: {self.problem}", red=True)
            else:
                terminalreporter.write_line(
                    f"semantictest: results of {len(self.records)} tests in {self.path}"
                )


def _verdict_fields(verdict: Verdict, case: object, redactor: Redactor) -> dict[str, JSONValue]:
    """What a spec test's pipeline did: turns and checkpoints, its time, the deciding score, its runs,
    judged items, notes and steps (each left out when there is none)."""
    from .conversation import conversation_data
    from .judge import judged_items
    from .junit import deciding_judgement
    from .notes import note_records
    from .trace_data import steps_data

    record: dict[str, JSONValue] = {}
    turns, checkpoints = conversation_data(verdict.trace)
    if turns:
        record["turns"] = turns
    if checkpoints is not None:
        record["checkpoints"] = checkpoints
    record["latency_ms"] = round(verdict.duration_ms, 1)  # the pipeline's own time, not pytest's
    judged_by = deciding_judgement(verdict)
    if judged_by is not None and isinstance(judged_by.score, (int, float)):
        record["score"] = judged_by.score
    if verdict.runs:
        record.update(_runs(verdict, case))
    lists: dict[str, JSONValue] = {
        "judgements": [j.as_dict() for j in judged_items(verdict)],  # a step's too, as every report shows
        "notes": note_records(verdict),
        "steps": steps_data(verdict, redactor, VALUE_CHARS),
    }
    record.update((key, value) for key, value in lists.items() if value)
    return record


def _usage_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The usage counters that grew during the test, by how much."""
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def _usage_record(used: dict[str, int]) -> dict[str, JSONValue]:
    """``llm_usage``: calls, cache hits and tokens always; per-model tokens and the rate-limit wait
    when there were any."""
    record: dict[str, JSONValue] = {k: used.get(k, 0) for k in ("calls", "cache_hits", "tokens")}
    record.update({k: v for k, v in used.items() if "@" in k or k == "rate_wait_ms"})
    return record


def _runs(verdict: Verdict, case: object) -> dict[str, JSONValue]:
    """A repeated test's runs: outcomes, durations, scores, its pass rate with the interval the
    reports print and the threshold it is held to, and the runs not counted."""
    record: dict[str, JSONValue] = {
        "runs": [r.outcome.value for r in verdict.runs],
        "run_durations_ms": [round(r.duration_ms, 1) for r in verdict.runs],
    }
    scores = _run_scores(verdict)
    if scores is not None:
        record["run_scores"] = scores
    record["pass_rate"] = _pass_rate(verdict, case)
    beyond = [r.outcome.value for part in (verdict.phrasings or [verdict]) for r in part.beyond]
    if beyond:  # finished after the first runs had decided: reported, not counted
        record["runs_not_counted"] = beyond
    return record


def _run_scores(verdict: Verdict) -> list[JSONValue] | None:
    """Each run's deciding judge score; None unless every run has one."""
    from .junit import deciding_judgement

    scores: list[JSONValue] = [
        j.score
        for j in map(deciding_judgement, verdict.runs)
        if j is not None and isinstance(j.score, (int, float))
    ]
    return scores if len(scores) == len(verdict.runs) else None


def _pass_rate(verdict: Verdict, case: object) -> dict[str, JSONValue]:
    """The runs' pass rate with its interval, the sequential decision and the threshold."""
    from ..stats import rate_interval
    from .junit import run_tally

    passed, total = run_tally(verdict)
    low, high = rate_interval(passed, total, verdict.anytime)
    rate: dict[str, JSONValue] = {
        "passed": passed,
        "runs": total,
        "rate": round(passed / total, 4),
        "low": round(low, 4),
        "high": round(high, 4),
        "interval": "confidence sequence" if verdict.anytime else "Wilson",
    }
    if verdict.decision:
        rate["decision"] = verdict.decision
    threshold = _threshold(case)
    if threshold is not None:  # the bar the viewer draws the interval against
        rate["threshold"] = threshold
    return rate


def _threshold(case: object) -> float | None:
    """The pass rate a repeated case must reach: its sequential test's, else ``minPass / runs``."""
    from ..model import Case

    repetition = case.repetition if isinstance(case, Case) else None
    if repetition is None or not repetition.runs:
        return None
    decision = repetition.decision
    return decision.threshold if decision else round(repetition.required / repetition.runs, 4)


def _outcome(report: pytest.TestReport) -> str | None:
    """This phase's effect on the test's outcome (None: nothing to change)."""
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed" if report.when == "call" else None
    if report.failed:
        return "failed" if report.when == "call" else "error"
    if report.skipped:
        return "skipped"
    return None


_ORDER = ("id", "name", "file", "format", "outcome", "duration_s", "message")
"""The fields a results line starts with (a reader sees what it is first); the others follow."""


def _line(record: dict[str, JSONValue]) -> str:
    """One results-file line: the record's fields, those of ``_ORDER`` first."""
    ordered = {k: record[k] for k in _ORDER if k in record}
    ordered.update({k: v for k, v in record.items() if k not in ordered})
    return json.dumps(ordered, ensure_ascii=False, default=str) + "\n"


_WORKER_LINE = re.compile(r"\A\[gw\d+\] [^\n]* -- Python [^\n]*\n")
"""The line xdist puts before a worker's failure text: which worker ran a test is no part of why it failed
(and would make a split run's records differ from a whole run's)."""


def _message(report: pytest.TestReport | pytest.CollectReport, mask: Mask) -> str:
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return mask(str(report.longrepr[2]).removeprefix("Skipped: "))
    text = _WORKER_LINE.sub("", report.longreprtext or "")
    return shorten(text, 4000, mask)
