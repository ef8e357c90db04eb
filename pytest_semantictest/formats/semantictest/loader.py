"""Read a SemanticTest suite file, validate it, compile it to the internal model."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...blocks.registry import get_block, known_blocks
from ...checks.operators import OPERATORS, validate_operand
from ...checks.path import PathCheck
from ...engine.databus import split_path
from ...engine.inputs import is_from_as, output_slots
from ...engine.resolve import references
from ...errors import Problem, SpecError, clip, did_you_mean
from ...model import Case, Repetition, Step, Suite
from ..jsonsource import JsonError, JsonSource, load_json, place
from ..validation import problems_from
from .models import StepSpec, SuiteSpec, TestSpec

FORMAT = "semantictest"
_STEP_KEYS = list(StepSpec.model_fields)
MAX_BYTES = 20 * 1024 * 1024


def is_suite(data: Any) -> bool:
    """A JSON document is a SemanticTest suite when its top level has a ``tests`` array."""
    return isinstance(data, dict) and isinstance(data.get("tests"), list)


def load_file(path: Path) -> Suite:
    """Load and compile ``path``; raises SpecError naming every problem found."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise SpecError(str(path), [Problem("", f"file is larger than {MAX_BYTES // 2**20} MB")])
        raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf")  # a BOM (Windows editors) is not content
    except OSError as exc:
        raise SpecError(str(path), [Problem("", f"cannot read file: {exc.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        message = f"not UTF-8 text at line {line} column {column} (byte {exc.start}): {exc.reason}"
        raise SpecError(str(path), [Problem("", message, line)]) from None
    return load_text(text, path)


def load_text(text: str, path: Path) -> Suite:
    try:
        source = load_json(text)
    except JsonError as exc:
        raise SpecError(str(path), [Problem(exc.place, str(exc), exc.line)]) from None
    return compile_source(source, path)


def compile_source(source: JsonSource, path: Path) -> Suite:
    problems = list(source.duplicates)
    if not is_suite(source.data):
        raise SpecError(str(path), [_not_a_suite(source)])
    try:
        spec = SuiteSpec.model_validate(source.data)
    except ValidationError as exc:
        raise SpecError(str(path), problems + problems_from(exc, SuiteSpec, source.line)) from None
    compiler = _Compiler(source, spec)
    suite = compiler.suite(path)
    problems += compiler.problems
    if problems:
        raise SpecError(str(path), problems)
    return suite


def _kind(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    names = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _not_a_suite(source: JsonSource) -> Problem:
    data = source.data
    need = "a suite file needs a top-level object with a 'tests' array"
    if not isinstance(data, dict):
        return Problem("", f"{need}, got {_kind(data)}", 1)
    if "tests" in data:
        return Problem("tests", f"must be an array of tests, got {_kind(data['tests'])}", source.line(("tests",)))
    keys = [k for k in data if isinstance(k, str)]
    hint = next((f" (found '{clip(k)}' — did you mean 'tests'?)" for k in keys if did_you_mean(k, ["tests"])), "")
    return Problem("", f"{need}{hint}", 1)


def _operand_problem(op: str, operand: Any) -> str | None:
    """``validate_operand``, also for patterns ``re`` rejects with other errors than re.error."""
    try:
        return validate_operand(op, operand)
    except (OverflowError, RecursionError, ValueError, re.error) as exc:
        why = "groups nested too deeply" if isinstance(exc, RecursionError) else exc
        return f"'{op}' has an invalid regular expression {clip(repr(operand))}: {why}"


def _ref_sites(value: Any, at: tuple[str | int, ...], sites: dict[str, tuple[str | int, ...]]) -> None:
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


class _Compiler:
    def __init__(self, source: JsonSource, spec: SuiteSpec) -> None:
        self.source = source
        self.spec = spec
        self.problems: list[Problem] = []

    def problem(self, loc: tuple[str | int, ...], message: str) -> None:
        self.problems.append(Problem(place(loc), message, self.source.line(loc)))

    def suite(self, path: Path) -> Suite:
        spec = self.spec
        if not spec.tests:
            self.problem(("tests",), "is empty: add at least one test")
        setup = [self.step(s, ("setup", i), spec.setup) for i, s in enumerate(spec.setup)]
        teardown = [self.step(s, ("teardown", i), spec.teardown) for i, s in enumerate(spec.teardown)]
        shared = set(spec.context) | {"env"}
        for step in setup:
            shared.update(output_slots(step.output, step.id))
        self.check_refs(setup, shared, ("setup",))
        seen: dict[str, int] = {}
        cases = []
        for i, test in enumerate(spec.tests):
            if test.id in seen:
                self.problem(("tests", i, "id"), f"duplicate test id '{clip(test.id)}' (also tests[{seen[test.id]}])")
            seen[test.id] = i
            cases.append(self.case(test, i, shared))
        return Suite(spec.name or path.stem, path, FORMAT, cases, spec.context, setup, teardown)

    def case(self, test: TestSpec, i: int, shared: set[str]) -> Case:
        loc = ("tests", i)
        steps = [self.step(s, loc + ("pipeline", j), test.pipeline) for j, s in enumerate(test.pipeline)]
        if not test.pipeline:
            self.problem(loc + ("pipeline",), "is empty: add at least one block")
        slots = set(shared)
        for step in steps:
            slots.update(output_slots(step.output, step.id))
            if step.block == "Loop" and step.config.get("target") is not None:
                slots.update(f"_loopCount:{s.id}" for s in steps)
        self.check_refs(steps, slots, loc + ("pipeline",))
        checks = self.assertions(test.assertions, loc + ("assertions",), slots)
        skip = test.skip if isinstance(test.skip, str) else ("skipped in the suite file" if test.skip else None)
        return Case(
            id=test.id,
            name=test.name or test.id,
            steps=steps,
            checks=checks,
            line=self.source.line(loc),
            markers=list(test.markers),
            repetition=self.repetition(test, loc),
            timeout_s=test.timeout / 1000 if test.timeout else None,
            skip=skip,
            place=place(loc),
        )

    def repetition(self, test: TestSpec, loc: tuple[str | int, ...]) -> Repetition:
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

    def step(self, spec: StepSpec, loc: tuple[str | int, ...], siblings: list[StepSpec]) -> Step:
        cls = get_block(spec.block)
        config = dict(spec.config)
        extras = dict(spec.model_extra or {})
        if cls is None:
            known = known_blocks()
            self.problem(
                loc + ("block",),
                f"unknown block '{clip(spec.block)}'{did_you_mean(spec.block, known)} (known blocks: {', '.join(known)})",
            )
        else:
            allowed = cls.config_keys
            for key, value in extras.items():
                if allowed is None or key in allowed:
                    config.setdefault(key, value)
                else:
                    hint = did_you_mean(key, _STEP_KEYS + sorted(allowed))
                    self.problem(loc + (key,), f"unknown key '{clip(key)}' for block {spec.block}{hint}")
            if allowed is not None:
                for key in spec.config:
                    if key not in allowed:
                        hint = did_you_mean(key, sorted(allowed))
                        known = ", ".join(sorted(allowed)) or "none"
                        self.problem(
                            loc + ("config", key), f"unknown config key '{clip(key)}'{hint} ({spec.block} takes: {known})"
                        )
            for key, message in cls.validate_config(config):
                self.problem(loc + ("config", *split_path(key)), message)
        if spec.block == "Loop" and cls is not None:
            self.loop_target(config.get("target"), loc, siblings)
        if isinstance(spec.input, dict) and set(spec.input) <= {"from", "as"} and "from" in spec.input:
            if "as" not in spec.input:
                self.problem(loc + ("input",), "the from/as form needs both 'from' (a DataBus path) and 'as' (a name)")
            elif not isinstance(spec.input["from"], str):
                self.problem(loc + ("input", "from"), f"must be a DataBus path string, got {clip(repr(spec.input['from']))}")
            elif not isinstance(spec.input["as"], str) or not spec.input["as"]:
                self.problem(loc + ("input", "as"), f"must be an input name (a string), got {clip(repr(spec.input['as']))}")
        step_id = spec.id or spec.block
        return Step(spec.block, step_id, spec.input, config, spec.output, self.source.line(loc), place(loc))

    def loop_target(self, target: Any, loc: tuple[str | int, ...], siblings: list[StepSpec]) -> None:
        index = loc[-1]
        assert isinstance(index, int)
        earlier = [s.id or s.block for s in siblings[:index]]
        if isinstance(target, int) and not isinstance(target, bool):
            if not 0 <= target < index:
                self.problem(loc + ("config", "target"), f"index {clip(target)} is not an earlier step (0..{index - 1})")
        elif isinstance(target, str) and target not in earlier:
            self.problem(
                loc + ("config", "target"),
                f"'{clip(target)}' is not the id of an earlier step{did_you_mean(target, earlier)}",
            )

    def check_refs(self, steps: list[Step], slots: set[str], loc: tuple[str | int, ...]) -> None:
        for j, step in enumerate(steps):
            at = loc + (j,)
            sites: dict[str, tuple[str | int, ...]] = {}
            _ref_sites(step.input, at + ("input",), sites)
            for key, value in step.config.items():
                key_at = at + ("config", key)
                _ref_sites(value, key_at if key_at in self.source.lines else at + (key,), sites)
            if is_from_as(step.input):
                head = split_path(step.input["from"].strip().removeprefix("${").removesuffix("}"))
                if head and isinstance(head[0], str):
                    sites.setdefault(head[0], at + ("input", "from"))
            for name in sorted(set(sites) - slots):
                hint = did_you_mean(name, slots)
                self.problem(sites[name], f"references '{clip(name)}', which no step, setup or context provides{hint}")

    def assertions(self, spec: dict[str, Any], loc: tuple[str | int, ...], slots: set[str]) -> list[PathCheck]:
        checks: list[PathCheck] = []
        for path, expected in spec.items():
            where = loc + (path,)
            line = self.source.line(where)
            head = split_path(path)
            if not head or not isinstance(head[0], str):
                self.problem(where, f"'{clip(path)}' is not a DataBus path")
                continue
            if head[0] not in slots:
                self.problem(where, f"'{clip(head[0])}' is not written by any step{did_you_mean(head[0], slots)}")
            if isinstance(expected, dict) and expected and any(k in OPERATORS for k in expected):
                for op, operand in expected.items():
                    if op not in OPERATORS:
                        self.problem(where + (op,), f"unknown operator '{clip(op)}'{did_you_mean(op, OPERATORS)}")
                        continue
                    reason = _operand_problem(op, operand)
                    if reason:
                        self.problem(where + (op,), reason)
                    checks.append(PathCheck(path, op, operand, line))
                continue
            if isinstance(expected, dict) and expected:
                near = [k for k in expected if did_you_mean(k, OPERATORS, cutoff=0.75)]
                if near:
                    key = near[0]
                    self.problem(
                        where + (key,),
                        f"unknown operator '{clip(key)}'{did_you_mean(key, OPERATORS, cutoff=0.75)} "
                        '(to compare with an object, write {"equals": {...}})',
                    )
                    continue
            checks.append(PathCheck(path, "equals", expected, line, plain=True))
        return checks


def make_loader(ctx: object) -> object:
    """The collection entry point (see formats/detect.py)."""
    return load_file
