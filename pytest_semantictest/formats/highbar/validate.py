"""Read and strictly validate a highbar spec, the way highbar 0.1.0rc3 does, all problems at once.

Each problem is one path-addressed line in highbar's words, e.g.
``suites[0].tests[1].expect: unknown key 'orderd' — did you mean 'ordered'?``, with the
source line of the offending key or value. highbar stops at the first problem; this
reports every problem of the file (it stops only below a node that has the wrong type).

Where this is stricter than highbar (mostly specs highbar would accept and then misjudge or
crash on at run time): ``start`` must be a valid command line; header names
must be HTTP tokens and values ASCII; the body must be JSON (no NaN); ``{{session}}`` alone
is not a placeholder; an ``error`` matcher cannot hold ``{{``; a broken IPv6 URL is a spec
error (highbar crashes); YAML keys that are not text and tags other than the plain ones are
errors (timestamps stay text).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from ...errors import SpecError, clip
from ...files import UnreadableFile, read_text
from ...json_types import JSONValue
from ...model import MAX_RUNS
from ...problems import place as _place
from ...problems import problems_from
from ...redact import Redactor
from ..yamlsource import YamlError, YamlSource, load_yaml
from . import models
from .build import Builder, clean
from .problem import HighbarProblem
from .rules import (
    MAX_BYTES,
    TEMPLATE,
    Path_,
    dedupe,
    is_int,
    near_matcher,
    parse_template,
    redact_problem,
    shown_int,
)
from .spec import HighbarSpec, Template, resolve_min_pass
from .validate_agent import AgentChecks
from .validate_expect import ExpectChecks


def load_highbar(path: Path, environ: Mapping[str, str], runs: int | None = None) -> HighbarSpec:
    """Read, validate and build ``path``; raises :class:`SpecError` naming every problem.

    ``environ`` is where ``${NAME}`` under ``agent`` is looked up (``os.environ`` plus
    ``.env``, as the caller decides). ``runs`` (``--semantictest-highbar-runs``, highbar's ``--runs``)
    takes the place of ``defaults.runs`` when ``min_pass`` is checked against a test's runs.
    """
    path = Path(path)
    try:
        text = read_text(path, MAX_BYTES)
    except UnreadableFile as exc:  # highbar's words, without a line
        raise SpecError(str(path), [HighbarProblem("", f"cannot read: {exc.detail}")]) from None
    return load_highbar_text(text, path, environ, runs)


def load_highbar_text(
    text: str, path: Path, environ: Mapping[str, str], runs: int | None = None
) -> HighbarSpec:
    """:func:`load_highbar` for text already read (``path`` names it in messages)."""
    path = Path(path)
    try:
        source = load_yaml(text)
    except YamlError as exc:
        raise SpecError(str(path), [HighbarProblem(exc.place, str(exc), exc.line, exc.column)]) from None
    return validate_source(source, path, environ, runs)


def validate_source(
    source: YamlSource, path: Path, environ: Mapping[str, str], runs: int | None = None
) -> HighbarSpec:
    """Validate parsed YAML; raises :class:`SpecError` with every problem, else builds the spec."""
    checker = _Validator(source, environ, runs)
    checker.spec(source.data)
    problems = [HighbarProblem(p.place, p.message, p.line) for p in source.problems] + checker.problems
    if problems:
        redactor = Redactor(names=checker.env_names)  # each expanded value as its ${NAME}
        problems = [redact_problem(p, redactor) for p in problems]
        problems.sort(key=lambda p: p.line if p.line is not None else 1 << 30)
        raise SpecError(str(path), dedupe(problems))
    assert checker.agent is not None
    try:
        model = models.Spec.model_validate(clean(source.data, checker.agent))
    except ValidationError as exc:  # the checks above missed something: still a spec error, never a crash
        found = problems_from(exc, models.Spec, source.line)
        raise SpecError(str(path), [HighbarProblem(p.place, p.message, p.line) for p in found]) from None
    return Builder(source, path, checker.regexes, checker.templates, checker.env_names).build(model)


# --- the checks -----------------------------------------------------------------------------


class _Validator(AgentChecks, ExpectChecks):
    """Every check of a highbar spec; ``spec(data)`` runs them, ``problems`` has what they found."""

    # spec

    def spec(self, raw: JSONValue) -> None:
        root: Path_ = ()
        if raw is None:
            self.err(root, "the file is empty: a spec is a mapping with 'agent' and 'suites'")
            return
        if not self.need(raw, dict, root, "must be a mapping with 'agent' and 'suites'"):
            return
        self.keys(raw, "spec", root)
        if "defaults" in raw:
            self.defaults(raw["defaults"])
        if self.cli_runs is not None:
            self.default_runs = self.cli_runs
        if "agent" not in raw:
            self.err(root, "missing 'agent' (how to start and reach the agent)")
        else:
            self.agent_(raw["agent"])
        observing = self.suites(raw)
        if self.agent is not None and observing and self.needs_traces():
            self.err(
                ("agent",),
                "attach mode (no 'start') needs 'traces', the file the agent writes: "
                f"{_place(observing[0])} checks function_calls",
            )

    def defaults(self, defaults: JSONValue) -> None:
        if self.need(defaults, dict, ("defaults",), "must be a mapping"):
            self.keys(defaults, "defaults", ("defaults",))
            if "runs" in defaults and self.runs(defaults["runs"], ("defaults",), ("defaults", "runs")):
                self.default_runs = defaults["runs"]

    def suites(self, raw: Mapping[str, JSONValue]) -> list[Path_]:
        """Check the suites; returns the places of the tests that observe tool calls."""
        suites = raw.get("suites")
        observing: list[Path_] = []
        if not suites:
            self.err((), "has no tests (add a suite under 'suites')", ("suites",) if "suites" in raw else ())
        elif self.need(suites, list, ("suites",), "must be a list of suites"):
            for i, suite in enumerate(suites):
                observing += self.suite(suite, ("suites", i))
        return observing

    def needs_traces(self) -> bool:
        """The agent is attached to (not started), has no trace file, and tool calls come from traces."""
        return not self.managed and not self.has_traces and self.calls_from == "traces"

    # agent

    def suite(self, raw: JSONValue, where: Path_) -> list[Path_]:
        """Check a suite; returns the places of its tests that observe tool calls."""
        if not self.need(raw, dict, where, "a suite must be a mapping"):
            return []
        self.keys(raw, "suite", where)
        self.optional_name(raw, where)
        tests = raw.get("tests")
        if not tests:
            self.err(where, "has no tests", where + ("tests",) if "tests" in raw else where)
            return []
        if not self.need(tests, list, where, "tests must be a list", where + ("tests",)):
            return []
        return [where + ("tests", j) for j, test in enumerate(tests) if self.test(test, where + ("tests", j))]

    def optional_name(self, raw: Mapping[str, JSONValue], where: Path_) -> None:
        name = raw.get("name")
        if name is not None:
            self.need(name, str, where, "name must be a string", where + ("name",))

    def runs(self, value: JSONValue, where: Path_, at: Path_) -> bool:
        if not is_int(value) or value < 1:
            shown = shown_int(value) if is_int(value) else clip(repr(value))
            self.err(where, f"runs must be a whole number of at least 1, got {shown}", at)
            return False
        if value > MAX_RUNS:  # as a SemanticTest test's runs (highbar accepts 10**400 and never ends)
            self.err(where, f"runs must be at most {MAX_RUNS}, got {shown_int(value)}", at)
            return False
        return True

    def test(self, raw: JSONValue, where: Path_) -> bool:
        """Check a test; True when it observes tool calls."""
        if not self.need(raw, dict, where, "a test must be a mapping"):
            return False
        self.keys(raw, "test", where)
        self.optional_name(raw, where)
        observes = self.multi_turn(raw, where) if "turns" in raw else self.single_turn(raw, where)
        self.min_pass(raw, where)
        if "markers" in raw:
            self.markers(raw["markers"], where)
        if "pass_rate" in raw:
            self.pass_rate(raw, where)
        return observes

    def multi_turn(self, raw: Mapping[str, JSONValue], where: Path_) -> bool:
        """A test with ``turns``: what only a single-turn test takes is an error."""
        if "trigger" in raw:
            self.err(where, "a test has either 'trigger' or 'turns', not both", where + ("trigger",))
        if "expect" in raw:
            self.err(where, "with 'turns', each turn has its own 'expect'", where + ("expect",))
        if raw.get("variations"):
            self.err(where, "'variations' is not supported on multi-turn tests", where + ("variations",))
        return self.turns(raw["turns"], where)

    def single_turn(self, raw: Mapping[str, JSONValue], where: Path_) -> bool:
        """A test with one ``trigger`` and its ``expect`` (and ``variations``)."""
        self.trigger(raw, where, first=True)
        observes = False
        if "expect" not in raw:
            self.err(
                where,
                "asserts nothing — add an 'expect' (function_calls: [] checks that no tool is called)",
            )
        else:
            found = self.expect(raw["expect"], where + ("expect",))
            observes = bool(found and found[1])
        variations = raw.get("variations")
        if (
            variations is not None
            and self.need(
                variations,
                int,
                where,
                "variations must be a non-negative integer",
                where + ("variations",),
            )
            and variations < 0
        ):
            self.err(
                where,
                f"variations must be a non-negative integer, got {variations}",
                where + ("variations",),
            )
        return observes

    def min_pass(self, raw: Mapping[str, JSONValue], where: Path_) -> None:
        """``runs`` and ``min_pass``: a count of at least 1 or a fraction of runs, not more than the
        test's runs (its own, else the defaults' or the command line's)."""
        runs_ok = "runs" in raw and self.runs(raw["runs"], where, where + ("runs",))
        if "min_pass" not in raw:
            return
        value = raw["min_pass"]
        if not _is_min_pass(value):
            self.err(
                where,
                "min_pass must be a whole number of at least 1 or a fraction of runs (0 < f <= 1), "
                f"got {clip(repr(value))}",
                where + ("min_pass",),
            )
        elif "runs" not in raw or runs_ok:
            runs = raw["runs"] if runs_ok else self.default_runs
            count = resolve_min_pass(value, runs)
            if count > runs:
                self.err(
                    where,
                    f"min_pass {shown_int(count)} is more than its {runs} runs",
                    where + ("min_pass",),
                )

    def pass_rate(self, raw: Mapping[str, JSONValue], where: Path_) -> None:
        """Extension: ``pass_rate: {at_least, confidence, margin, max_runs}``, without runs/min_pass."""
        at = where + ("pass_rate",)
        value = raw["pass_rate"]
        if not self.need(
            value, dict, at, "pass_rate must be a mapping with at_least (and confidence, margin, max_runs)"
        ):
            return
        self.keys(value, "pass_rate", at)
        both = [key for key in ("runs", "min_pass") if key in raw]
        if both:
            self.err(
                at,
                f"pass_rate decides how many runs are made and pass: leave out {' and '.join(both)} "
                "(max_runs is the budget)",
            )
        if "at_least" not in value:
            self.err(at, "missing 'at_least' (the pass rate the test must show)")
        self.pass_rate_bounds(value, at)
        self.pass_rate_zone(value, at)

    def pass_rate_bounds(self, value: JSONValue, at: Path_) -> None:
        """Each number of ``pass_rate`` within its open interval; ``max_runs`` a count of at least 1."""
        for key, low, high in (("at_least", 0, 1), ("confidence", 0.5, 1), ("margin", 0, 0.5)):
            if (
                key in value
                and self.need(value[key], (int, float), at, f"{key} must be a number", at + (key,))
                and not low < value[key] < high
            ):
                self.err(at, f"{key} must be between {low} and {high}, got {value[key]}", at + (key,))
        if (
            "max_runs" in value
            and self.need(value["max_runs"], int, at, "max_runs must be a whole number", at + ("max_runs",))
            and value["max_runs"] < 1
        ):
            self.err(at, f"max_runs must be at least 1, got {value['max_runs']}", at + ("max_runs",))

    def pass_rate_zone(self, value: JSONValue, at: Path_) -> None:
        """The indifference zone ``at_least`` +- ``margin`` lies inside (0, 1) (when both are valid)."""
        at_least, margin = value.get("at_least"), value.get("margin", 0.05)
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (at_least, margin))
        if (
            numbers
            and 0 < at_least < 1
            and 0 < margin < 0.5
            and not 0 < at_least - margin < at_least + margin < 1
        ):
            self.err(
                at,
                f"at_least {at_least} with a margin of {margin} needs 0 < at_least - margin and "
                "at_least + margin < 1",
            )

    def markers(self, value: JSONValue, where: Path_) -> None:
        at = where + ("markers",)
        if not self.need(value, list, where, "markers must be a list of marker names", at):
            return
        for k, name in enumerate(value):
            # pytest takes identifiers that do not start with '_' as marker names
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                self.err(
                    where,
                    f"marker names must be words like 'smoke' or 'slow', got {clip(repr(name))}",
                    at + (k,),
                )

    def trigger(self, raw: Mapping[str, JSONValue], where: Path_, first: bool) -> None:
        """A non-empty text; its well-formed ``{{previous...}}`` templates are noted (none in a first turn)."""
        at = where + ("trigger",)
        if "trigger" not in raw:
            self.err(where, "missing 'trigger' (the message sent to the agent)")
            return
        trigger = raw["trigger"]
        if not self.need(trigger, str, where, "trigger must be a string", at):
            return
        if not trigger.strip():
            self.err(where, "trigger cannot be empty", at)
            return
        # Templates are resolved at run time, as highbar does: a {{...}} that is not {{previous...}} (or an
        # unclosed '{{') is sent as text, and a {{previous...}} naming nothing is that turn's error.
        found = [
            Template(m.group(0), path)
            for m in TEMPLATE.finditer(trigger)
            if not first and (path := parse_template(m.group(1))[0]) is not None
        ]
        if found:
            self.templates[where] = tuple(found)

    def turns(self, raw: JSONValue, where: Path_) -> bool:
        at = where + ("turns",)
        if not self.need(raw, list, where, "turns must be a list", at):
            return False
        if not raw:
            self.err(where, "turns cannot be empty", at)
            return False
        checked = [self.turn(turn, at + (k,), first=k == 0) for k, turn in enumerate(raw)]
        observes = any(c.observes for c in checked if c is not None)
        if not any(c.asserts for c in checked if c is not None) and None not in checked:
            self.err(where, "asserts nothing — no turn has an 'expect'", at)
        return observes

    def turn(self, turn: JSONValue, where: Path_, first: bool) -> _TurnCheck | None:
        """Check one turn; None when it is broken (not a mapping, or an ``expect`` that is not one)."""
        if not self.need(turn, dict, where, "a turn must be a mapping"):
            return None
        self.keys(turn, "turn", where)
        self.trigger(turn, where, first=first)
        self.optional_name(turn, where)
        if "expect" not in turn:
            return _TurnCheck(asserts=False, observes=False)
        found = self.expect(turn["expect"], where + ("expect",))
        return None if found is None else _TurnCheck(asserts=True, observes=bool(found[1]))


class _TurnCheck(NamedTuple):
    asserts: bool  # the turn has an expect
    observes: bool  # ... which looks at tool calls


def _is_min_pass(value: JSONValue) -> bool:
    """A whole number of passing runs (at least 1) or a fraction of the runs in (0, 1]."""
    whole = is_int(value) and value >= 1
    return whole or (isinstance(value, float) and 0 < value <= 1)


__all__ = [
    "HighbarProblem",
    "load_highbar",
    "load_highbar_text",
    "validate_source",
    "parse_template",
    "near_matcher",
]
