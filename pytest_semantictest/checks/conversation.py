"""Checks on conversation turns: assertions (deterministic, script, validator agent), a turn that
did not complete, and the outcome of a simulated conversation.

``check_turn`` evaluates assertion specs on one turn (the blocks use it for checkpoints and
pipeline conversations); the Check classes wrap it for the engine (gate checks on a turn's slot).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..json_types import JSONValue
from ..model import CheckResult, Failure
from ..paths import MISSING
from .assertions import DETERMINISTIC, Outcome, evaluate, finish
from .run import llm_client

if TYPE_CHECKING:
    from ..databus import DataBus
    from .run import CheckRun
    from .specs import AssertionSpec


@dataclass
class AssertionResult:
    """One assertion on one turn: an outcome, or why it has none (error / not evaluated)."""

    spec: AssertionSpec
    outcome: Outcome | None = None
    error: str | None = None
    skipped: str | None = None
    validation: dict[str, JSONValue] | None = None

    @property
    def passed(self) -> bool:
        return self.outcome is not None and self.outcome.passed

    def record(self) -> dict[str, JSONValue]:
        """A JSON-ready summary (the transcript and the results file show it)."""
        out: dict[str, JSONValue] = {"assertion": self.spec.describe(), "type": self.spec.type}
        if self.outcome is not None:
            out["passed"] = self.outcome.passed
            if not self.outcome.passed:
                out["message"] = self.outcome.message
        if self.error:
            out["error"] = self.error
        if self.skipped:
            out["skipped"] = self.skipped
        if self.validation:
            out["validator"] = self.validation
        return out


def text_history(turns: Sequence[Mapping[str, JSONValue]]) -> list[dict[str, JSONValue]]:
    """Earlier turns as plain ``{role, content}`` messages (for validators and simulators)."""
    out: list[dict[str, JSONValue]] = []
    for turn in turns:
        for message in turn.get("sent") or []:
            content = message.get("content")
            out.append(
                {"role": message.get("role", "user"), "content": content if isinstance(content, str) else ""}
            )
        out.append({"role": "assistant", "content": turn.get("output") or ""})
    return out


async def check_turn(
    specs: Sequence[AssertionSpec],
    turn: Mapping[str, JSONValue],
    *,
    run_context: CheckRun,
    earlier: Sequence[Mapping[str, JSONValue]] = (),
    repeat: int = 0,
    base_dir: Path | None = None,
    all_or_nothing: bool = False,
) -> list[AssertionResult]:
    """Every assertion on ``turn``; validator calls run concurrently. ``all_or_nothing`` (a
    checkpoint): when a deterministic assertion fails, scripts and validators are not asked."""

    async def one(spec: AssertionSpec) -> AssertionResult:
        if spec.type == "script":
            return await run_script(spec, turn, earlier, base_dir)
        return await run_validator(spec, turn, run_context, earlier, repeat)

    quick = _deterministic_results(specs, turn)
    if all_or_nothing and not all(r.passed for r in quick.values()):
        return list(quick.values())
    slow = [i for i in range(len(specs)) if i not in quick]
    found = dict(zip(slow, await asyncio.gather(*(one(specs[i]) for i in slow))))
    return [quick[i] if i in quick else found[i] for i in range(len(specs))]


def _deterministic_results(
    specs: Sequence[AssertionSpec], turn: Mapping[str, JSONValue]
) -> dict[int, AssertionResult]:
    """The results of the assertions that need no script or LLM, by their index."""
    return {i: AssertionResult(s, evaluate(s, turn)) for i, s in enumerate(specs) if s.type in DETERMINISTIC}


async def run_validator(
    spec: AssertionSpec,
    turn: Mapping[str, JSONValue],
    run_context: CheckRun,
    earlier: Sequence[Mapping[str, JSONValue]],
    repeat: int = 0,
) -> AssertionResult:
    from ..llm.errors import LLMError
    from ..llm.validator import Validator, resolve_use

    missing = run_context.llm_unavailable(resolve_use(spec.validator_use, Validator.role)[0])
    if missing is not None:
        if missing.error:
            return AssertionResult(spec, error=str(missing))
        return AssertionResult(spec, skipped=str(missing))
    validator = Validator(llm_client(run_context))
    criteria = spec.validator_criteria
    try:
        result = await validator.validate(
            turn.get("output") or "",
            criteria,
            input=turn.get("input"),
            history=text_history(earlier),
            tool_calls=turn.get("tool_calls") or [],
            metadata=spec.validator_metadata,
            threshold=spec.validator_threshold,
            use=spec.validator_use,
            repeat=repeat,
        )
    except LLMError as exc:
        return AssertionResult(spec, error=f"LLM validator error: {exc}")
    details: dict[str, JSONValue] = {"score": _score_line(result)}
    if result.get("suggestions"):
        details["suggestions"] = "; ".join(result["suggestions"])
    outcome = Outcome(
        bool(result["passed"]),
        f"validator: {result.get('reason') or 'criteria not met'}",
        criteria,
        turn.get("output") or "",
        details,
    )
    return AssertionResult(spec, finish(spec, outcome), validation=result)


def _score_line(result: Mapping[str, JSONValue]) -> str:
    score, threshold = result["score"], result.get("threshold")  # a validator result always has a score
    if isinstance(threshold, (int, float)):
        return f"{score:g} {'>=' if score >= threshold else '<'} threshold {threshold:g}"
    return f"{score:g}"


_SCRIPTS: dict[tuple[str, str], Callable[..., object]] = {}


def load_callable(ref: str, base_dir: Path | None = None) -> Callable[..., object]:
    """``module:function``: imported normally, else ``<base_dir>/<module path>.py``. Raises ImportError."""
    module_name, _, name = ref.partition(":")
    key = (ref, str(base_dir))
    if key in _SCRIPTS:
        return _SCRIPTS[key]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        file = (base_dir / Path(*module_name.split("."))).with_suffix(".py") if base_dir else None
        if file is None or not file.is_file():
            raise ImportError(
                f"cannot import module '{module_name}'" + (f" (nor find {file})" if file else "")
            ) from None
        spec = importlib.util.spec_from_file_location(f"semantictest_script_{module_name}", file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    function: Callable[..., object] | None = getattr(module, name, None)
    if not callable(function):
        raise ImportError(f"module '{module_name}' has no function '{name}'")
    _SCRIPTS[key] = function
    return function


async def run_script(
    spec: AssertionSpec,
    turn: Mapping[str, JSONValue],
    earlier: Sequence[Mapping[str, JSONValue]],
    base_dir: Path | None,
) -> AssertionResult:
    """Call ``function(output, input, value, context)`` (as many arguments as it takes).

    It passes by returning True / ``{"pass"|"passed": True}``; returning False, a dict saying
    otherwise (``message`` explains) or raising AssertionError fails; any other exception is an error.
    """
    ref = spec.callable_ref
    try:
        function = load_callable(ref, base_dir)
    except Exception as exc:  # noqa: BLE001  an import that fails is reported, never a crash
        return AssertionResult(spec, error=f"script {ref}: {exc}")
    context = {
        "tool_calls": turn.get("tool_calls") or [],
        "history": text_history(earlier),
        "turn": turn.get("turn"),
    }
    args = [turn.get("output") or "", turn.get("input"), spec.value, context]
    try:
        count = positional_count(function, 4)
        value = function(*args[:count])
        if inspect.isawaitable(value):
            value = await value
    except AssertionError as exc:
        return AssertionResult(
            spec, finish(spec, Outcome(False, f"script {ref}: {exc or 'assertion failed'}"))
        )
    except Exception as exc:  # noqa: BLE001
        return AssertionResult(spec, error=f"script {ref} raised {type(exc).__name__}: {exc}")
    passed, message = _script_answer(value, ref)
    if not isinstance(passed, bool):
        return AssertionResult(
            spec, error=f"script {ref} must return True/False or {{passed, message}}, got {value!r}"
        )
    return AssertionResult(spec, finish(spec, Outcome(passed, message, spec.value, turn.get("output"))))


def _script_answer(value: object, ref: str) -> tuple[object, str]:
    """(passed, message) of what a script returned: a bool, or ``{passed|pass, message|reason}``."""
    if isinstance(value, Mapping):
        passed = value.get("passed", value.get("pass"))
        return passed, str(value.get("message") or value.get("reason") or f"script {ref} failed")
    return value, f"script {ref} returned {value!r}"


def positional_count(function: Callable[..., object], most: int) -> int:
    """How many of ``most`` positional arguments ``function`` takes (scripts and hooks may take fewer)."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return most
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return most
    return min(most, sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)))


def to_check_result(results: Sequence[AssertionResult], label: str, line: int | None) -> CheckResult:
    """Failures, errors and not-evaluated reasons of assertion results, for the engine."""
    out = CheckResult()
    errors = [r.error for r in results if r.error]
    skipped = [r.skipped for r in results if r.skipped]
    out.failures.extend(_failures(results, label, line))
    out.error = "\n".join(f"{label}: {e}" for e in errors) or None
    out.skipped = "; ".join(dict.fromkeys(skipped)) or None
    return out


def _failures(results: Sequence[AssertionResult], label: str, line: int | None) -> list[Failure]:
    """A failure for each assertion that did not hold."""
    failures = []
    for r in results:
        if r.outcome is not None and not r.outcome.passed:
            o = r.outcome
            failures.append(
                Failure(
                    f"{label}: {r.spec.describe()}",
                    o.message,
                    o.expected,
                    o.actual,
                    r.spec.type,
                    line,
                    dict(o.details),
                )
            )
    return failures


@dataclass(slots=True)
class _SlotCheck:
    """A check on one slot that needs nothing asynchronous (the engine calls ``evaluate_sync``)."""

    slot: str

    @property
    def reads(self) -> frozenset[str]:
        return frozenset([self.slot])

    async def evaluate(self, bus: DataBus, ctx: CheckRun) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        raise NotImplementedError


@dataclass(slots=True)
class TurnCompleted(_SlotCheck):
    """A conversation turn got an answer; its error (agent unreachable, timeout) is a failure."""

    label: str
    line: int | None = None

    def describe(self) -> str:
        return f"{self.label} completed"

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        turn = bus.get(self.slot)
        if turn is MISSING or not isinstance(turn, Mapping) or not turn.get("error"):
            return CheckResult()
        return CheckResult(failures=[Failure(self.label, str(turn["error"]), line=self.line)])


@dataclass(slots=True)
class TurnAssertion:
    """Assertions on one turn's slot; script and validator assertions make it asynchronous."""

    slot: str
    specs: list[AssertionSpec]
    label: str
    line: int | None = None
    earlier: tuple[str, ...] = ()
    base_dir: Path | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset([self.slot, *self.earlier])

    def describe(self) -> str:
        return f"{self.label}: " + ", ".join(s.describe() for s in self.specs)

    async def evaluate(self, bus: DataBus, ctx: CheckRun) -> CheckResult:
        turn = bus.get(self.slot)
        if turn is MISSING or not isinstance(turn, Mapping) or turn.get("error"):
            return CheckResult()  # the turn did not run or failed: TurnCompleted reports it
        earlier = [t for t in (bus.get(s) for s in self.earlier) if isinstance(t, Mapping)]
        results = await check_turn(self.specs, turn, run_context=ctx, earlier=earlier, base_dir=self.base_dir)
        return to_check_result(results, self.label, self.line)


@dataclass(slots=True)
class DeterministicTurnAssertion(TurnAssertion):
    """Only deterministic assertions: evaluated synchronously."""

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        turn = bus.get(self.slot)
        if turn is MISSING or not isinstance(turn, Mapping) or turn.get("error"):
            return CheckResult()
        return to_check_result(
            [AssertionResult(s, evaluate(s, turn)) for s in self.specs], self.label, self.line
        )


def turn_assertion(
    slot: str,
    specs: list[AssertionSpec],
    label: str,
    line: int | None = None,
    earlier: tuple[str, ...] = (),
    base_dir: Path | None = None,
) -> TurnAssertion:
    cls = DeterministicTurnAssertion if all(s.type in DETERMINISTIC for s in specs) else TurnAssertion
    return cls(slot, specs, label, line, earlier, base_dir)


@dataclass(slots=True)
class ConversationOutcome(_SlotCheck):
    """A simulated conversation's verdict: its checkpoints reached in time, or why not."""

    line: int | None = None
    label: str = "conversation"
    extra: dict[str, JSONValue] = field(default_factory=dict)

    def describe(self) -> str:
        return f"{self.label} reaches its checkpoints"

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        out = bus.get(self.slot)
        if out is MISSING or not isinstance(out, Mapping):
            return CheckResult()
        if out.get("error") and "passed" not in out:
            return CheckResult(failures=[Failure(self.label, str(out["error"]), line=self.line)])
        if out.get("passed"):
            return CheckResult()
        return CheckResult(
            failures=[Failure(self.label, str(out.get("reason") or "did not pass"), line=self.line)]
        )
