"""The state of a simulated conversation (SimulatedConversation): its plan, the run so far
(turns, checkpoints reached with their turn, the verdict and the output it gives), reaching
checkpoints after a reply, and the check of the checkpoints' ``after`` order."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..checks.specs import CheckpointSpec, InteractiveSpec, SimulatorSpec
from ..json_types import JSONObject, JSONValue

if TYPE_CHECKING:
    from ..agents.chat import Attachment, ChatTarget
    from ..checks.conversation import AssertionResult
    from ..step import StepContext

DEFAULT_MAX_TURNS = 20
DEFAULT_TIMEOUT_S = 300.0


@dataclass
class DynamicPlan:
    """Everything one simulated conversation needs (the Yao compiler builds it directly)."""

    target: ChatTarget | None
    checkpoints: list[CheckpointSpec]
    simulator: SimulatorSpec = field(default_factory=SimulatorSpec)
    input: JSONValue = None
    attachments: Sequence[Attachment] = field(default_factory=list)
    max_turns: int = DEFAULT_MAX_TURNS
    timeout: float = DEFAULT_TIMEOUT_S
    options: JSONObject = field(default_factory=dict)
    interactive: InteractiveSpec | None = None
    base_dir: Path | None = None
    test_name: str = ""
    spec: str = ""
    """The test file (for highbar session hooks)."""


class ConversationRun:
    """The conversation so far: turns, checkpoints reached (with their turn), the verdict."""

    def __init__(self, plan: DynamicPlan) -> None:
        self.plan = plan
        self.turns: list[JSONObject] = []
        self.reached: dict[str, int] = {}
        self.early: dict[str, list[int]] = {}
        self.last: dict[str, str] = {}
        self.phase = "starting"
        self.number = 0
        self.in_flight: tuple[list[JSONObject], str] | None = None
        self.status = "running"
        self.reason = ""
        self.goal: JSONObject | None = None
        self.session: JSONObject | None = None

    def missing(self) -> list[str]:
        return [cp.id for cp in self.plan.checkpoints if cp.required and cp.id not in self.reached]

    def missing_text(self) -> str:
        parts = []
        for cp in self.plan.checkpoints:
            if cp.id in self.missing():
                why = f" ({cp.description})" if cp.description else ""
                early = self.early.get(cp.id)
                if early:
                    waits = ", ".join(
                        f"'{a}'" for a in cp.after if a not in self.reached or self.reached[a] > early[0]
                    )
                    why += f" [its assertion held at turn {early[0]}, before {waits or 'its after checkpoints'} was reached]"
                parts.append(cp.id + why)
        return ", ".join(parts)

    def finish(self, passed: bool, reason: str) -> None:
        self.status = "passed" if passed else "failed"
        self.reason = reason

    def timeline(self) -> list[JSONObject]:
        out = []
        for cp in self.plan.checkpoints:
            entry: JSONObject = {
                "id": cp.id,
                "required": cp.required,
                "reached": cp.id in self.reached,
                "turn": self.reached.get(cp.id),
            }
            if cp.description:
                entry["description"] = cp.description
            if cp.after:
                entry["after"] = list(cp.after)
            if self.early.get(cp.id):
                entry["held_early"] = self.early[cp.id]
            if cp.id not in self.reached and cp.id in self.last:
                entry["last"] = self.last[cp.id]
            out.append(entry)
        return out

    def output(self) -> JSONObject:
        out = {
            "passed": self.status == "passed",
            "status": self.status,
            "reason": self.reason,
            "turns": self.turns,
            "checkpoints": self.timeline(),
            "missing": self.missing(),
            "goalAchieved": self.goal,
        }
        if self.status == "failed":  # fails the test unless an assertion reads this output
            out["error"] = self.reason
        if self.session is not None:  # the highbar session, for the cleanup step that closes it
            out["session"] = self.session
        return out

    def raise_(self, kind: type[Exception], message: str) -> NoReturn:
        self.status, self.reason = "error", message
        exc = kind(message)
        exc.output = self.output()  # type: ignore[attr-defined]
        raise exc


async def reach_checkpoints(run: ConversationRun, ctx: StepContext, turn: JSONObject, number: int) -> None:
    """Reach every pending checkpoint whose ``after`` ones are reached and whose assertions hold."""
    from ..checks.conversation import check_turn

    plan = run.plan
    earlier = run.turns[:-1]
    evaluated: set[str] = set()
    while ready := _ready(run, evaluated):
        evaluated |= {cp.id for cp in ready}
        outcomes = await asyncio.gather(
            *(
                check_turn(
                    cp.assertion,
                    turn,
                    run_context=ctx.run_context,
                    earlier=earlier,
                    repeat=ctx.repeat,
                    base_dir=plan.base_dir,
                    all_or_nothing=True,
                )
                for cp in ready
            )
        )
        for cp, results in zip(ready, outcomes):
            _take_outcome(run, cp, results, turn, number)
    _note_early_holds(run, turn, number, evaluated)


def _ready(run: ConversationRun, evaluated: set[str]) -> list[CheckpointSpec]:
    """The checkpoints not reached nor checked on this turn yet whose ``after`` ones are all reached."""
    return [
        cp
        for cp in run.plan.checkpoints
        if cp.id not in run.reached and cp.id not in evaluated and all(a in run.reached for a in cp.after)
    ]


def _take_outcome(
    run: ConversationRun, cp: CheckpointSpec, results: list[AssertionResult], turn: JSONObject, number: int
) -> None:
    """Record what a checkpoint's assertions said of this turn: reached, or why not; a judge that
    failed or is missing ends the conversation."""
    turn.setdefault("assertions", []).extend(  # what validators said, for the reports
        {**r.record(), "checkpoint": cp.id} for r in results if r.validation
    )
    _stop_unless_judged(run, cp, results, number)
    failed = [r for r in results if not r.passed]
    if failed:
        run.last[cp.id] = f"turn {number}: {failed[0].outcome.message if failed[0].outcome else ''}"
    else:
        run.reached[cp.id] = number
        turn.setdefault("checkpoints", []).append(cp.id)


def _stop_unless_judged(
    run: ConversationRun, cp: CheckpointSpec, results: list[AssertionResult], number: int
) -> None:
    """A validator that failed ends the conversation as an error, a missing one as not evaluated."""
    from ..step import JudgeError, JudgeUnavailable

    errors = [r.error for r in results if r.error]
    if errors:
        run.raise_(JudgeError, f"checkpoint '{cp.id}' at turn {number}: {'; '.join(errors)}")
    skipped = [r.skipped for r in results if r.skipped]
    if skipped:
        run.raise_(JudgeUnavailable, skipped[0])


def _note_early_holds(run: ConversationRun, turn: JSONObject, number: int, evaluated: set[str]) -> None:
    """Diagnostics: a checkpoint whose deterministic assertions held before its ``after`` ones were
    reached (the report says so when it is missing at the end)."""
    from ..checks.assertions import DETERMINISTIC, evaluate

    for cp in run.plan.checkpoints:
        if cp.id in run.reached or cp.id in evaluated:
            continue
        if not all(s.type in DETERMINISTIC for s in cp.assertion):
            continue
        if all(evaluate(s, turn).passed for s in cp.assertion):
            run.early.setdefault(cp.id, []).append(number)


def order_problems(checkpoints: list[CheckpointSpec]) -> list[tuple[int, str]]:
    """Unknown ``after`` ids (with a did-you-mean), a checkpoint after itself, cycles, duplicate ids."""
    problems = _id_problems(checkpoints)
    cycle = _first_cycle(checkpoints)
    if cycle is not None:
        problems.append(cycle)
    return problems


def _id_problems(checkpoints: list[CheckpointSpec]) -> list[tuple[int, str]]:
    """Duplicate ids, and ``after`` ids naming the checkpoint itself or no checkpoint."""
    from ..errors import did_you_mean

    ids = [cp.id for cp in checkpoints]
    problems: list[tuple[int, str]] = []
    seen: set[str] = set()
    for i, cp in enumerate(checkpoints):
        if cp.id in seen:
            problems.append((i, f"duplicate checkpoint id '{cp.id}'"))
        seen.add(cp.id)
        for name in cp.after:
            if name == cp.id:
                problems.append((i, f"checkpoint '{cp.id}' cannot come after itself"))
            elif name not in ids:
                problems.append((i, f"unknown checkpoint '{name}'{did_you_mean(name, ids)}"))
    return problems


def _first_cycle(checkpoints: list[CheckpointSpec]) -> tuple[int, str] | None:
    """The first cycle of the ``after`` order (a depth-first search from each checkpoint in turn)."""
    ids = [cp.id for cp in checkpoints]
    after = {cp.id: [a for a in cp.after if a in ids and a != cp.id] for cp in checkpoints}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in after.get(node, []):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if state.get(nxt) is None:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = 2
        return None

    for i, cp in enumerate(checkpoints):
        if state.get(cp.id) is None:
            cycle = visit(cp.id, [])
            if cycle:
                start = cycle.index(cycle[-1])
                return i, "the after order has a cycle: " + " -> ".join(cycle[start:])
    return None
