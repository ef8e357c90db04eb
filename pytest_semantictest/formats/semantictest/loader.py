"""Read a SemanticTest suite file, validate it, compile it to the internal model."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from ...errors import Problem, SemanticTestWarning, SpecError, clip, did_you_mean
from ...json_types import JSONValue
from ...model import Suite
from ...problems import place, problems_from
from ..detect import CollectContext
from ..jsonsource import JsonError, JsonSource, load_json
from ..source import read_spec
from .agent import choose as choose_agent
from .compiler import FORMAT, SuiteCompiler, default_id
from .models import SuiteShape

__all__ = [
    "FORMAT",
    "SuiteWarning",
    "compile_source",
    "is_suite",
    "load_file",
    "load_text",
    "runs_on_one_worker",
]
MAX_BYTES = 20 * 1024 * 1024


def is_suite(data: JSONValue) -> bool:
    """A JSON document is a SemanticTest suite when its top level has a ``tests`` array."""
    return isinstance(data, dict) and isinstance(data.get("tests"), list)


def load_file(path: Path, ctx: CollectContext | None = None) -> Suite:
    """Load and compile ``path``; raises SpecError naming every problem found. With the collection's
    context, the suite's agent (its ``agent`` section or the options) is one it needs."""
    return load_text(read_spec(path, MAX_BYTES), path, ctx)


def runs_on_one_worker(path: Path) -> bool:
    """The format's scheduling hint: whether the tests of ``path`` must run on one worker.

    A suite's ``setup`` runs once before its first test and its ``teardown`` once after its last
    (``engine/suite.py``), so a suite with either keeps its tests together. Read with this loader,
    up to the suite's own keys (its tests are not compiled: the controller only schedules); a file
    that is not a readable suite is False (its tests are its collection error, nothing to group).
    """
    if path.suffix != ".json":
        return False
    try:
        source = load_json(read_spec(path, MAX_BYTES))
    except (SpecError, JsonError):
        return False
    if not is_suite(source.data):
        return False
    try:
        spec = SuiteShape.model_validate(source.data)
    except ValidationError:
        return False
    return bool(spec.setup or spec.teardown)


def load_text(text: str, path: Path, ctx: CollectContext | None = None) -> Suite:
    try:
        source = load_json(text)
    except JsonError as exc:
        raise SpecError(str(path), [Problem(exc.place, str(exc), exc.line)]) from None
    return compile_source(source, path, ctx)


class SuiteWarning(SemanticTestWarning):
    """Something a SemanticTest file does that runs, but differently from what it may mean."""


def compile_source(source: JsonSource, path: Path, ctx: CollectContext | None = None) -> Suite:
    """Compile a parsed suite; raises SpecError for the file's problems (per-test ones are ``Case.error``)."""
    if not is_suite(source.data):
        raise SpecError(str(path), [_not_a_suite(source)])
    try:
        spec = SuiteShape.model_validate(source.data)
    except ValidationError as exc:
        raise SpecError(str(path), problems_from(exc, SuiteShape, source.line)) from None
    needed, agent = choose_agent(spec.agent, path, ctx, source.line)
    compiler = SuiteCompiler(source, spec, path, agent)
    suite = compiler.suite()
    suite.agents = [needed] if needed else []
    if compiler.problems:  # the file fails: name its tests' own problems too, in file order
        problems = sorted(compiler.problems + compiler.test_problems, key=lambda p: p.line or 0)
        raise SpecError(str(path), problems)
    _warn(path, source, compiler.missing_ids, compiler.assumed)
    return suite


def _warn(path: Path, source: JsonSource, missing_ids: list[int], assumed: list[Problem]) -> None:
    """One warning per repeated key, per test without an id and per assumption a block makes for what
    a step leaves out (a request's method), at its line (pytest's warnings summary)."""
    for at, first, later in source.repeated:
        earlier = f"line {first}" if first else "an earlier line"
        message = (
            f"{place(at)}: key '{clip(at[-1])}' is on {earlier} and again on line {later}; "
            f"the value on line {later} is used, as JSON parsers do: remove one of them"
        )
        warnings.warn_explicit(message, SuiteWarning, str(path), later)
    for index in missing_ids:
        line = source.line(("tests", index)) or 1
        message = (
            f"tests[{index}] has no 'id': it runs as '{default_id(index)}' (its position); "
            "give it an id so its name does not change when tests are added before it"
        )
        warnings.warn_explicit(message, SuiteWarning, str(path), line)
    for problem in assumed:
        warnings.warn_explicit(
            f"{problem.place}: {problem.message}", SuiteWarning, str(path), problem.line or 1
        )


def _kind(value: JSONValue) -> str:
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
        return Problem(
            "tests", f"must be an array of tests, got {_kind(data['tests'])}", source.line(("tests",))
        )
    keys = [k for k in data if isinstance(k, str)]
    hint = next(
        (f" (found '{clip(k)}' — did you mean 'tests'?)" for k in keys if did_you_mean(k, ["tests"])), ""
    )
    return Problem("", f"{need}{hint}", 1)


def make_loader(ctx: CollectContext) -> Callable[[Path], Suite]:
    """The collection entry point (see formats/detect.py)."""
    return lambda path: load_file(path, ctx)
