"""Compile a validated SemanticTest suite to the model: file-level problems and per-test ones apart.

A problem that makes the file unusable (a bad setup step, an unknown block anywhere, two tests with
one id) is collected in :attr:`SuiteCompiler.problems` and becomes a collection error. A problem
confined to one test (a bad key in it, a ``${NAME}`` nothing defines, a bad assertion) becomes that
test's :attr:`Case.error`: it ERRORs, the file's other tests run.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from pydantic import ValidationError

from ...checks.operators import OPERATORS, validate_operand
from ...checks.path import PathCheck
from ...databus import split_path
from ...engine.inputs import is_from_as, output_slots
from ...errors import Problem, clip, did_you_mean
from ...json_types import JSONObject, JSONValue
from ...model import Case, Repetition, Step, Suite
from ...problems import place, problems_from
from ...resolve import references
from ...stats import PassRateTest
from ..jsonsource import JsonSource
from ..validation import check_node_id
from .models import PassRateSpec, StepSpec, SuiteShape, TestSpec
from .operator_names import operator_hint, suggest_operator
from .steps import Loc, compile_step, unknown_block

FORMAT = "semantictest"
ABSENCE_OPERATORS = frozenset({"isUndefined", "isDefined"})
"""Operators that may name a slot no step writes: checking absence is what they are for."""


def default_id(index: int) -> str:
    """The id of a test without one: ``test-<index>`` (0-based), as the reference runner names it."""
    return f"test-{index}"


def _operand_problem(op: str, operand: JSONValue) -> str | None:
    """``validate_operand``, also for patterns ``re`` rejects with other errors than re.error."""
    try:
        return validate_operand(op, operand)
    except (OverflowError, RecursionError, ValueError, re.error) as exc:
        why = "groups nested too deeply" if isinstance(exc, RecursionError) else exc
        return f"'{op}' has an invalid regular expression {clip(repr(operand))}: {why}"


def _ref_sites(value: JSONValue, at: Loc, sites: dict[str, Loc]) -> None:
    """Where each ``${name...}`` first appears in ``value`` (``at`` is the value's JSON path)."""
    if isinstance(value, str):
        for name in sorted(references(value)):
            sites.setdefault(name, at)
    elif isinstance(value, dict):
        for key, item in value.items():
            _ref_sites(item, at + (key,), sites)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _ref_sites(item, at + (index,), sites)


def _under(prefix: Loc, problem: Problem) -> Problem:
    """``problem`` (placed inside one test) placed in the file: ``pipeline[0]`` -> ``tests[2].pipeline[0]``."""
    head = place(prefix)
    inner = problem.place
    joined = head if not inner else head + ("" if inner.startswith("[") else ".") + inner
    return Problem(joined, problem.message, problem.line)


def test_id(raw: JSONValue, index: int) -> str | None:
    """The id a raw test names (None when it has no usable one)."""
    value = raw.get("id") if isinstance(raw, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return check_node_id(value)
    except ValueError:
        return None


def _written_by(tests: list[JSONValue]) -> dict[str, str]:
    """Which test (by id) writes each slot, read from the tests as written (the first writer)."""
    owners: dict[str, str] = {}
    for i, raw in enumerate(tests):
        pipeline = raw.get("pipeline") if isinstance(raw, dict) else None
        for step in pipeline if isinstance(pipeline, list) else []:
            if not isinstance(step, dict):
                continue
            output, name = step.get("output"), step.get("id") or step.get("block")
            if _names_slots(output, name):
                for slot in output_slots(output, str(name)):
                    owners.setdefault(slot, test_id(raw, i) or default_id(i))
    return owners


def _names_slots(output: JSONValue, name: JSONValue) -> bool:
    """A step's ``output`` as written names its slots: a name, a mapping of names, or (absent) the
    step's id or block."""
    if isinstance(output, dict):
        return all(isinstance(v, str) for v in output.values())
    return isinstance(output, str) or (output is None and isinstance(name, str))


def _is_operator_object(expected: JSONValue) -> bool:
    """``expected`` is an object of operators (``{"greaterThan": 0}``), not a value to equal."""
    return isinstance(expected, dict) and bool(expected) and any(k in OPERATORS for k in expected)


def _skip_reason(test: TestSpec) -> str | None:
    """Why the test is skipped (``skip``: its reason, or true), or None."""
    if isinstance(test.skip, str):
        return test.skip
    return "skipped in the suite file" if test.skip else None


def _slots_after(steps: list[Step], shared: set[str]) -> set[str]:
    """What a test's steps can read: ``shared``, every step's output, a Loop's iteration counts."""
    slots = set(shared)
    for step in steps:
        slots.update(output_slots(step.output, step.id))
        if step.block == "Loop" and step.config.get("target") is not None:
            slots.update(f"_loopCount:{s.id}" for s in steps)
    return slots


class SuiteCompiler:
    """Compiles one suite; :attr:`problems` are the file's, :attr:`missing_ids` the tests without id."""

    def __init__(
        self, source: JsonSource, spec: SuiteShape, path: Path, agent: JSONObject | None = None
    ) -> None:
        self.agent = agent
        """What ``${agent.*}`` reads (the suite's agent), or None."""
        self.source = source
        self.spec = spec
        self.path = path
        self.problems: list[Problem] = []
        self.missing_ids: list[int] = []
        self.test_problems: list[Problem] = []
        """Every test's own problems too (a file that fails anyway reports them all)."""
        self.written_by: dict[str, str] = {}
        """The test that writes each slot (for the hint when another test reads it)."""
        self.assumed: list[Problem] = []
        """What blocks will assume for what steps leave out (warnings at their lines)."""
        self._sink: list[Problem] = self.problems

    def file_problem(self, loc: Loc, message: str) -> None:
        self.problems.append(Problem(place(loc), message, self.source.line(loc)))

    def problem(self, loc: Loc, message: str) -> None:
        self._sink.append(Problem(place(loc), message, self.source.line(loc)))

    def suite(self) -> Suite:
        spec = self.spec
        if not spec.tests:
            self.file_problem(("tests",), "is empty: add at least one test")
        setup = [self.step(s, ("setup", i), spec.setup) for i, s in enumerate(spec.setup)]
        teardown = [self.step(s, ("teardown", i), spec.teardown) for i, s in enumerate(spec.teardown)]
        context = self.context()
        shared = set(context) | {"env"}
        before_setup = set(shared)
        for step in setup:
            shared.update(output_slots(step.output, step.id))
        self.written_by = _written_by(spec.tests)
        setup_problems: list[Problem] = []
        self._sink = (
            setup_problems  # a reference nothing defines in setup: every test's ERROR (setup runs first)
        )
        self.check_refs(setup, shared, ("setup",), before_setup)
        self._sink = self.problems
        cases = self.cases(shared, setup_problems)
        return Suite(spec.name or self.path.stem, self.path, FORMAT, cases, context, setup, teardown)

    def cases(self, shared: set[str], setup_problems: list[Problem]) -> list[Case]:
        """Every test, each with the setup's problems (it runs first) and a unique id."""
        seen: dict[str, int] = {}
        cases = []
        for i, raw in enumerate(self.spec.tests):
            case = self.case(raw, i, shared)
            if setup_problems:
                self.test_problems.extend(setup_problems)
                case.error = "\n".join(
                    [p.render(str(self.path)) for p in setup_problems] + [case.error or ""]
                ).strip()
            if case.id in seen:
                self.file_problem(
                    ("tests", i, "id"), f"duplicate test id '{clip(case.id)}' (also tests[{seen[case.id]}])"
                )
            seen[case.id] = i
            cases.append(case)
        return cases

    def context(self) -> JSONObject:
        """The suite's context: its ``context``, with ``input`` and the agent section under their names."""
        spec = self.spec
        context = dict(spec.context)
        if spec.input is not None:
            context.setdefault("input", spec.input)
        if self.agent is not None:
            if "agent" in context and spec.agent is not None:
                self.file_problem(("context", "agent"), "is also the agent section's name: rename this key")
            context.setdefault("agent", self.agent)
        return context

    def step(self, spec: StepSpec, loc: Loc, siblings: list[StepSpec]) -> Step:
        return compile_step(
            spec,
            loc,
            siblings,
            self.source,
            self.problem,
            self.file_problem,
            lambda at, message: self.assumed.append(Problem(place(at), message, self.source.line(at))),
        )

    def case(self, raw: JSONValue, i: int, shared: set[str]) -> Case:
        """One test; its own problems become its ``error``."""
        loc: Loc = ("tests", i)  # noqa: F841
        case_id = test_id(raw, i)
        if case_id is None:
            case_id = default_id(i)
            if isinstance(raw, dict) and "id" not in raw:
                self.missing_ids.append(i)
        mine: list[Problem] = []
        self._sink = mine
        try:
            case = self._case(raw, i, case_id, shared)
        finally:
            self._sink = self.problems
        if mine:
            mine.sort(key=lambda p: p.line or 0)  # (stable: a line's problems keep their order)
            self.test_problems.extend(mine)
            case.error = "\n".join(p.render(str(self.path)) for p in mine)
        return case

    def _case(self, raw: JSONValue, i: int, case_id: str, shared: set[str]) -> Case:
        loc: Loc = ("tests", i)
        bare = Case(
            id=case_id, name=case_id, steps=[], checks=[], line=self.source.line(loc), place=place(loc)
        )
        if not isinstance(raw, dict):
            self.problem(
                loc, f"a test must be an object with 'pipeline' and 'assertions', got {clip(repr(raw))}"
            )
            return bare
        try:
            test = TestSpec.model_validate(raw)
        except ValidationError as exc:
            self._invalid_test(exc, raw, loc, shared)
            name = raw.get("name")
            bare.name = name if isinstance(name, str) and name else case_id
            return bare
        steps = [self.step(s, loc + ("pipeline", j), test.pipeline) for j, s in enumerate(test.pipeline)]
        if not test.pipeline:
            self.problem(loc + ("pipeline",), "is empty: add at least one block")
        slots = _slots_after(steps, shared)
        self.check_refs(steps, slots, loc + ("pipeline",), shared)
        checks = self.assertions(test.assertions, loc + ("assertions",), slots)
        return Case(
            id=case_id,
            name=test.name or case_id,
            steps=steps,
            checks=list(checks),
            line=bare.line,
            markers=list(test.markers),
            repetition=self.repetition(test, loc),
            timeout_s=test.timeout / 1000 if test.timeout else None,
            skip=_skip_reason(test),
            place=bare.place,
        )

    def _invalid_test(self, exc: ValidationError, raw: JSONObject, loc: Loc, shared: set[str]) -> None:
        """The problems of a test the schema rejects, and of what can still be checked in it."""
        found = problems_from(exc, TestSpec, lambda at: self.source.line(loc + tuple(at)))
        self._sink.extend(_under(loc, p) for p in found)
        if not self._rest_of(raw, loc, shared):
            self._unknown_blocks(raw.get("pipeline"), loc + ("pipeline",))

    def _rest_of(self, raw: JSONObject, loc: Loc, shared: set[str]) -> bool:
        """A test the schema rejects (``asertions``): its pipeline, when every step of it parses, and its
        assertions are still checked, so that all of the test's problems are reported at once
        (``mehtod`` with ``asertions``, not after it is fixed). True when the steps were checked."""
        pipeline = raw.get("pipeline")
        if not isinstance(pipeline, list) or not pipeline:
            return False
        try:
            specs = [StepSpec.model_validate(s) for s in pipeline]
        except ValidationError:  # (its problems are among the test's already)
            return False
        steps = [self.step(spec, loc + ("pipeline", j), specs) for j, spec in enumerate(specs)]
        slots = set(shared)
        for step in steps:
            slots.update(output_slots(step.output, step.id))
        self.check_refs(steps, slots, loc + ("pipeline",), shared)
        assertions = raw.get("assertions")
        if isinstance(assertions, dict):
            self.assertions(assertions, loc + ("assertions",), slots)
        return True

    def _unknown_blocks(self, pipeline: JSONValue, loc: Loc) -> None:
        """An unknown block is the file's problem, also in a test that is otherwise invalid."""
        for j, step in enumerate(pipeline if isinstance(pipeline, list) else []):
            name = step.get("block") if isinstance(step, dict) else None
            message = unknown_block(name) if isinstance(name, str) else None
            if message:
                self.file_problem(loc + (j, "block"), message)

    def repetition(self, test: TestSpec, loc: Loc) -> Repetition:
        if test.passRate is not None:
            return self._pass_rate(test, test.passRate, loc)
        mp = test.minPass
        if mp is None:
            return Repetition(test.runs)
        if isinstance(mp, bool) or (isinstance(mp, float) and not math.isfinite(mp)) or mp <= 0:
            self.problem(loc + ("minPass",), f"must be a count >= 1 or a fraction in (0, 1], got {mp!r}")
            return Repetition(test.runs)
        count = math.ceil(mp * test.runs) if isinstance(mp, float) and mp <= 1 else int(mp)
        if count > test.runs:
            self.problem(loc + ("minPass",), f"{mp} is more than runs ({test.runs})")
        return Repetition(test.runs, count)

    def _pass_rate(self, test: TestSpec, rate: PassRateSpec, loc: Loc) -> Repetition:
        """Runs decided by a sequential test of the pass rate (without runs or minPass beside it)."""
        both = [key for key in ("runs", "minPass") if key in test.model_fields_set]
        if both:
            self.problem(
                loc + ("passRate",),
                f"decides how many runs pass and are made: leave out "
                f"{' and '.join(both)} (passRate.maxRuns is the budget)",
            )
        try:
            decision = PassRateTest(
                rate.atLeast, 1 - rate.confidence, 1 - rate.confidence, rate.margin, rate.maxRuns
            )
        except ValueError as exc:
            self.problem(loc + ("passRate",), str(exc))
            return Repetition(test.runs)
        return Repetition(rate.maxRuns, decision=decision)

    def check_refs(self, steps: list[Step], slots: set[str], loc: Loc, shared: set[str]) -> None:
        """Every reference names a slot of ``slots``; a did-you-mean offers only what the step can read
        (``shared``: context, env and setup, and the slots of earlier steps)."""
        readable = set(shared)
        for j, step in enumerate(steps):
            at = loc + (j,)
            sites: dict[str, Loc] = {}
            _ref_sites(step.input, at + ("input",), sites)
            for key, value in step.config.items():
                key_at = at + ("config", key)
                _ref_sites(value, key_at if self.source.has(key_at) else at + (key,), sites)
            if is_from_as(step.input):
                head = split_path(step.input["from"].strip().removeprefix("${").removesuffix("}"))
                if head and isinstance(head[0], str):
                    sites.setdefault(head[0], at + ("input", "from"))
            for name in sorted(set(sites) - slots):
                hint = self._elsewhere(name) or did_you_mean(name, readable)
                self.problem(
                    sites[name], f"references '{clip(name)}', which no step, setup or context provides{hint}"
                )
            readable.update(output_slots(step.output, step.id))

    def _elsewhere(self, name: str) -> str:
        """The hint for a slot that another test writes (tests never read each other's slots)."""
        owner = self.written_by.get(name)
        if owner is None:
            return ""
        return (
            f" (test '{clip(owner)}' writes '{clip(name)}', but a test reads only its own steps' slots, the "
            "file's setup and context: write it in this test, or in the setup)"
        )

    def assertions(self, spec: JSONObject, loc: Loc, slots: set[str]) -> list[PathCheck]:
        checks: list[PathCheck] = []
        for path, expected in spec.items():
            checks += self._assertion(path, expected, loc + (path,), slots)
        return checks

    def _assertion(self, path: str, expected: JSONValue, where: Loc, slots: set[str]) -> list[PathCheck]:
        """The checks of one ``"path": expected`` (none when it is a mistake): operators, or equality."""
        line = self.source.line(where)
        head = split_path(path)
        if not head or not isinstance(head[0], str):
            self.problem(where, f"'{clip(path)}' is not a DataBus path")
            return []
        if _is_operator_object(expected):
            if head[0] not in slots and not set(expected) <= ABSENCE_OPERATORS:
                self._unwritten(where, head[0], slots)
            return self._operator_checks(path, expected, where, line)
        if self._near_misses(expected, where):
            return []
        if head[0] not in slots and expected is not None:
            self._unwritten(where, head[0], slots)
        return [PathCheck(path, "equals", expected, line, plain=True)]

    def _operator_checks(
        self, path: str, expected: JSONObject, where: Loc, line: int | None
    ) -> list[PathCheck]:
        """``{"operator": operand, ...}`` on ``path``: a check for each known operator (an operand it
        cannot take is a problem too)."""
        checks = []
        for op, operand in expected.items():
            if op not in OPERATORS:
                self.problem(where + (op,), f"unknown operator '{clip(op)}'{operator_hint(op)}")
                continue
            reason = _operand_problem(op, operand)
            if reason:
                self.problem(where + (op,), reason)
            checks.append(PathCheck(path, op, operand, line))
        return checks

    def _unwritten(self, where: Loc, head: str, slots: set[str]) -> None:
        self.problem(
            where,
            f"'{clip(head)}' is not written by any step{self._elsewhere(head) or did_you_mean(head, slots)} "
            '(to check that it is absent, use {"isUndefined": true})',
        )

    def _near_misses(self, expected: JSONValue, where: Loc) -> bool:
        """An object of near-miss operator names (``{"greaterThan": 0}``) is a mistake, not equality."""
        if not isinstance(expected, dict) or not expected:
            return False
        close = [k for k in expected if did_you_mean(k, OPERATORS, cutoff=0.75)]
        if not close and all(suggest_operator(k) for k in expected):
            close = list(expected)
        if not close:
            return False
        key = close[0]
        self.problem(
            where + (key,),
            f"unknown operator '{clip(key)}'{operator_hint(key)} "
            '(to compare with an object, write {"equals": {...}})',
        )
        return True
