"""``--semantictest-mutate``: the pytest side of a mutation run (``docs/mutation.md``).

Each spec test runs once against the agent while its replies are recorded (a :class:`~.tape.Tape`
at ``agents.exchange.send_within``, the realtime socket through ``blocks/transports/realtime``'s
connector). A test that passed is then run again against the recording, first as it was (a
recording that does not reproduce the pass, say a test that reads a trace file, leaves the test
unmutated), then once per mutation of each distinct reply. The test's own outcome is the normal
run's. Its mutants' record goes to the setup report (xdist carries it to the controller), to a
``Note`` (HTML extras, results ``notes``, JUnit) and to the item's stash (results ``mutation``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator, Iterator
from typing import cast
from urllib.parse import urlsplit

import pytest

from .. import options
from ..agents.exchange import set_interceptor
from ..engine.suite import SetupFailed, SuiteRun
from ..evidence import Note, SpanTimeline
from ..lookahead.case_runs import FILE_RUN
from ..model import Failure, Outcome, Verdict
from ..runtime import Runtime
from ..spec_nodes import MUTATION, SpecItemNode, is_spec_item
from . import realtime_tape
from .mutations import mutations
from .score import (
    KILLED,
    LEFT_OUT,
    SURVIVED,
    Mutant,
    MutationRecord,
    outcome,
    render,
    score_text,
    summary,
    totals,
)
from .tape import Replay, Tape

NAME = "semantictest-mutate"
ATTRIBUTE = "semantictest_mutation"
FORBID_KEYS = frozenset({"forbid", "forbidden", "forbidden_tools", "forbiddenTools", "not_called"})


class MutationPlugin:
    """Records, mutates and scores every spec test of the process; the controller (or the only
    process) prints the scores."""

    def __init__(self, config: pytest.Config, runtime: Runtime) -> None:
        self.config = config
        self.runtime = runtime
        self.tests: dict[str, MutationRecord] = {}
        self.files: dict[str, list[str]] = {}
        self.timing = {"normal": 0.0, "mutation": 0.0, "mutants": 0.0}
        self.sets_up = False
        self.setup_replies: dict[str, Tape] = {}
        """Per file, the replies its setup received (recorded in its first test's run)."""
        runtime.add_lookahead_gate(lambda item: "a mutation run records one test at a time")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        if not is_spec_item(item):
            return (yield)
        tape = Tape()
        state = item.spec_file.stash.get(FILE_RUN, None)
        self.sets_up = state is None or not state.setup_done  # this test's recording holds the file's setup
        set_interceptor(tape)
        realtime_tape.use(tape)
        started = time.perf_counter()
        try:
            result = yield
        finally:
            set_interceptor(None)
            realtime_tape.use(None)
            normal = time.perf_counter() - started
        tape = self._with_setup(item, tape)
        record = self._mutate(item, tape)
        record["normal_s"] = normal
        item.stash[MUTATION] = record
        if item.verdict is not None:
            item.verdict.evidence.append(_note(record))
        return result

    def _with_setup(self, item: SpecItemNode, tape: Tape) -> Tape:
        """The file's setup is shared by its tests: each test is replayed with the setup run again from
        the replies it got (recorded in the first test's run), so a mutated setup reply has, on every
        test of the file, the effect a real one would (a setup that fails errors them all)."""
        path = str(item.spec_file.path)
        if self.sets_up:  # which of this recording's replies the setup took
            probe = Replay(tape)
            set_interceptor(probe)
            realtime_tape.use(probe)
            try:
                self.runtime.run(SuiteRun(item.spec_file.suite, self.runtime.context).setup())
            except Exception:  # noqa: BLE001  a setup that does not replay: its replies are not marked
                pass
            finally:
                set_interceptor(None)
                realtime_tape.use(None)
            self.setup_replies[path] = Tape([tape.replies[n] for n in sorted(probe.used)])
            return tape
        shared = self.setup_replies.get(path)
        if shared is None or not shared.replies:
            return tape
        self.sets_up = True
        return Tape(shared.replies + tape.replies)

    def _mutate(self, item: SpecItemNode, tape: Tape) -> MutationRecord:
        started = time.perf_counter()
        verdict: Verdict | None = item.verdict
        if verdict is None or verdict.outcome is not Outcome.PASSED:
            record = summary([]) | {"not_mutated": "the test did not pass against the agent"}
        elif not tape.replies:
            record = summary([]) | {"not_mutated": "the test sent nothing to an agent"}
        elif _reads_spans(verdict):
            record = summary([]) | {"not_mutated": READS_SPANS}
        elif (why := self._replayed(item, Replay(tape))) is not None:
            record = summary([]) | {"not_mutated": why}
        else:
            record = summary(*self._mutants(item, tape))
            if not record["total"] and not record["left_out"]:
                record["not_mutated"] = "no mutation applies to its replies (each failed or was not 2xx)"
        record["mutation_s"] = time.perf_counter() - started
        return record

    def _mutants(self, item: SpecItemNode, tape: Tape) -> tuple[list[Mutant], dict[str, list[str]]]:
        forbidden = tuple(_forbidden(item.case))
        targets = tape.targets()
        found: list[Mutant] = []
        coverage: dict[str, list[str]] = {}
        shared = self.setup_replies.get(str(item.spec_file.path))
        setup_keys = {key for key, _ in shared.replies} if shared is not None and self.sets_up else set()
        for n, (key, reply) in enumerate(targets):
            step = "the file's setup, shared by its tests: " if key in setup_keys else ""
            where = self.runtime.redactor.text(
                f"{step}reply {n + 1} of {len(targets)}: {key[0]} {_path(key[1])}"
            )
            for mutation in mutations(reply, forbidden):
                found.append(self._mutant(item, Replay(tape, key, mutation), where, coverage))
        return found, coverage

    def _mutant(
        self, item: SpecItemNode, replay: Replay, where: str, coverage: dict[str, list[str]]
    ) -> Mutant:
        """The test against one mutated reply: the mutant's outcome and why; a killed one's mutation
        is added to the checks that caught it (``coverage``)."""
        mutation = replay.mutation
        assert mutation is not None  # (a mutant's replay always carries its mutation)
        verdict = self._run(item, replay)
        result, why = (
            outcome(verdict, replay.unrecorded, replay.judge_misses)
            if verdict
            else (LEFT_OUT, "the run raised")
        )
        if result == KILLED and verdict is not None:
            for check in {f.check for f in verdict.failures} or {f"{verdict.outcome.value}"}:
                coverage.setdefault(check, []).append(mutation.kind)
        return {
            "kind": mutation.kind,
            "change": self.runtime.redactor.text(mutation.change),
            "where": where,
            "outcome": result,
            "why": why,
        }

    def _replayed(self, item: SpecItemNode, replay: Replay) -> str | None:
        verdict = self._run(item, replay)
        if verdict is not None and outcome(verdict, replay.unrecorded, replay.judge_misses)[0] == SURVIVED:
            return None
        return (
            "replaying its recorded replies does not reproduce its pass (it reads something besides the "
            "replies, such as a trace file, or asks the judge about something not in the replay cache)"
        )

    def _run(self, item: SpecItemNode, replay: Replay) -> Verdict | None:
        """The test against ``replay``. When its recording holds the file's setup, the setup runs
        again from the replay (a fresh suite state): a mutated setup reply has the effect a real one
        has, and a setup it fails errors every test of the file (the mutant is killed)."""
        misses = self._judge_misses()
        set_interceptor(replay)
        realtime_tape.use(replay)
        state = (
            SuiteRun(item.spec_file.suite, self.runtime.context)
            if self.sets_up
            else item.spec_file.stash[FILE_RUN]
        )
        try:
            verdict: Verdict = self.runtime.run(state.run_case(item.case, self.runtime.concurrency))
            return verdict
        except SetupFailed as exc:
            return Verdict(Outcome.ERROR, [Failure("file setup (every test of the file errors)", str(exc))])
        except Exception:  # noqa: BLE001  anything else: the mutant decides nothing
            return None
        finally:
            set_interceptor(None)
            realtime_tape.use(None)
            replay.judge_misses = self._judge_misses() - misses

    def _judge_misses(self) -> int:
        """The run's LLM calls so far that the replay cache had no answer for."""
        return int(self.runtime.llm.cache.misses)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        """The file's teardown runs in its last test's teardown: its replies are recorded and each is
        mutated with the effect a real one has (a teardown step that fails errors the run); the
        mutants join that test's record."""
        if not is_spec_item(item) or FILE_RUN not in item.spec_file.stash:
            return (yield)
        state, tape = item.spec_file.stash[FILE_RUN], Tape()
        set_interceptor(tape)
        realtime_tape.use(tape)
        try:
            result = yield
        finally:
            set_interceptor(None)
            realtime_tape.use(None)
        record = cast("MutationRecord | None", item.stash.get(MUTATION, None))  # (what _mutate stashed)
        if record is None or not tape.replies or record.get("not_mutated"):
            return result
        rerun = SuiteRun(item.spec_file.suite, self.runtime.context, bus=state.bus)
        if self._teardown_errors(rerun, Replay(tape)):
            return result  # its replay does not reproduce a clean teardown: nothing to compare with
        self._mutate_teardown(record, rerun, tape)
        return result

    def _mutate_teardown(self, record: MutationRecord, rerun: SuiteRun, tape: Tape) -> None:
        """Each mutation of each teardown reply, killed when the teardown then errs, counted into the
        test's ``record`` (its score, and how many mutants were the teardown's)."""
        total = record["total"]
        for n, (key, reply) in enumerate(tape.targets()):
            where = self.runtime.redactor.text(
                f"the file's teardown: reply {n + 1}: {key[0]} {_path(key[1])}"
            )
            for mutation in mutations(reply, ()):
                killed = self._teardown_errors(rerun, Replay(tape, key, mutation))
                record["total"] += 1
                if killed:
                    record["killed"] += 1
                    record.setdefault("coverage", {}).setdefault("file teardown (the run errors)", []).append(
                        mutation.kind
                    )
                else:
                    change = self.runtime.redactor.text(mutation.change)
                    record["survived"].append(
                        {
                            "kind": mutation.kind,
                            "change": change,
                            "where": where,
                            "outcome": SURVIVED,
                            "why": "",
                        }
                    )
        record["score"] = round(record["killed"] / record["total"], 3) if record["total"] else None
        record["teardown_mutants"] = record["total"] - total

    def _teardown_errors(self, rerun: SuiteRun, replay: Replay) -> bool:
        set_interceptor(replay)
        realtime_tape.use(replay)
        try:
            return bool(self.runtime.run(rerun.teardown()))
        except Exception:  # noqa: BLE001  a teardown that raises fails the run as one that errs
            return True
        finally:
            set_interceptor(None)
            realtime_tape.use(None)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        record = item.stash.get(MUTATION, None)
        if call.when in ("setup", "teardown") and record is not None:
            setattr(report, ATTRIBUTE, record)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        found = getattr(report, ATTRIBUTE, None)
        if report.when == "teardown" and isinstance(found, dict) and report.nodeid in self.tests:
            self.tests[report.nodeid] = cast(MutationRecord, found)  # with its teardown's mutants
            self.timing["mutants"] += int(found.get("teardown_mutants", 0))
            return
        if report.when != "setup" or not isinstance(found, dict):
            return
        record = cast(MutationRecord, found)  # what makereport attached (from a worker: carried as JSON)
        self.tests[report.nodeid] = record
        self.files.setdefault(report.location[0], []).append(report.nodeid)
        self.timing["normal"] += float(record.get("normal_s", 0.0))
        self.timing["mutation"] += float(record.get("mutation_s", 0.0))
        self.timing["mutants"] += record["total"] + len(record["left_out"])

    def _lines(self) -> list[str]:
        return render(
            self.tests, self.files, self.timing, [_judge_note(options.value(self.config, "llm-cache"))]
        )

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if hasattr(self.config, "workerinput") or not self.tests:
            return
        terminalreporter.write_sep("=", "semantictest mutation scores")
        for line in self._lines():
            terminalreporter.write_line(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session | None = None
    ) -> None:
        from html import escape

        if not self.tests:
            return
        rows = [
            f"{escape(path)}: {escape(score_text(*totals(self.tests[n] for n in ids)))}"
            for path, ids in sorted(self.files.items())
        ]
        rows.append(f"the run: {escape(score_text(*totals(self.tests.values())))}")
        postfix.append("<h2>Mutation scores</h2><ul>" + "".join(f"<li>{r}</li>" for r in rows) + "</ul>")


READS_SPANS = (
    "it reads the spans its agent exported (OpenTelemetry), which replaying its recorded replies cannot "
    "reproduce: no agent runs to export them"
)


def _reads_spans(verdict: Verdict) -> bool:
    """Whether the test read its agent's spans (a step or a check recorded a :class:`SpanTimeline`): its
    replay could not pass, and would wait for spans that never come."""
    records = [*verdict.evidence, *(record for step in verdict.trace for record in step.evidence)]
    return any(isinstance(record, SpanTimeline) for record in records)


def _note(record: MutationRecord) -> Note:
    fields: dict[str, str] = {"killed": f"{record['killed']}/{record['total']}"}
    if record.get("not_mutated"):
        fields["not mutated"] = record["not_mutated"]
    for n, mutant in enumerate(record["survived"], 1):
        fields[f"survived {n}"] = f"{mutant['kind']}: {mutant['change']} ({mutant['where']})"
    for n, mutant in enumerate(record["left_out"], 1):
        fields[f"left out {n}"] = f"{mutant['kind']}: {mutant['why']}"
    return Note("Mutation score", fields)


def _judge_note(mode: str) -> str:
    if mode == "replay":
        return (
            "judged checks: asked of the replay cache only (--semantictest-llm-cache=replay): a mutant whose "
            "mutated reply the cache has no answer for is left out (listed above), never sent to an LLM"
        )
    return (
        f"judged checks: the judge was asked about each mutated reply (LLM cache mode {mode}): "
        "live calls for every reply the cache does not hold"
    )


def _path(url: str) -> str:
    return urlsplit(url).path or url


def _forbidden(value: object, depth: int = 0) -> Iterator[str]:
    """Tool names a spec forbids (highbar ``forbid``, ValidateTools' ``forbidden``, yao's negated
    ``tool_called``, ...), found in the compiled case's config."""
    if depth > 8:
        return
    value = _fields_of(value)
    if isinstance(value, dict):
        yield from _forbidden_in(value, depth)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _forbidden(item, depth + 1)


def _fields_of(value: object) -> object:
    """A dataclass instance or another object of the compiled case as the dict of its fields; anything
    else (a dict, a list, a value) as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return vars(value)
    return value


def _forbidden_in(config: dict[object, object], depth: int) -> Iterator[str]:
    """The tool names one mapping of the case's config forbids, and those forbidden below it."""
    if config.get("type") == "tool_called" and config.get("negate") and isinstance(config.get("name"), str):
        yield str(config["name"])  # yao's negated tool_called
    for key, item in config.items():
        if key in FORBID_KEYS and isinstance(item, (list, tuple)):
            yield from (str(x) for x in item if isinstance(x, str))
        else:
            yield from _forbidden(item, depth + 1)
