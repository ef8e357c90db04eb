"""SimulatedConversation: a simulated user talks to the agent until its checkpoints are reached.

Turn 1 sends ``input`` (or the simulator's first message); every later user message comes from
the LLM ``simulator`` role, given persona, goal, the conversation, the turn number, the turn limit
and the reached and pending checkpoints. After every reply each pending checkpoint whose ``after``
checkpoints are all reached (earlier, or in this same reply) is checked on that reply and its tool
calls, and recorded with its turn. The conversation ends:

- all required checkpoints reached -> passed;
- the simulator says the goal is achieved, or the agent ends the conversation (its reply says
  ``awaiting_input: false``), with required checkpoints missing -> failed, naming them;
- ``max_turns`` or ``timeout`` reached (the timeout also interrupts a turn in flight) -> failed;
- a simulator or validator that errors or answers garbage -> ERROR (never a pass); one that is not
  configured -> skipped.

Config (pipelines): ``agent`` (see Conversation), ``input``, ``attachments``, ``simulator``
``{use, options: {metadata: {persona, goal}}}``, ``checkpoints`` ``[{id, description, assertion
(alias assert), after, required}]``, ``maxTurns`` (default 20), ``timeout`` (default "5m"),
``options``, ``interactive`` ``{enabled, timeout}``. The Yao format passes a ready
:class:`DynamicPlan` instead (``Step.compiled``).
Output: ``passed``, ``status``, ``reason``, ``turns``, ``checkpoints`` (the timeline: ``{id,
required, after, reached, turn, held_early, last}``), ``missing``, ``goalAchieved``; ``error`` (the
reason) when it failed, so the test fails unless an assertion reads the output; ``session`` with the
highbar protocol when the agent is in the session's pool: one session (``session.setup``) for the whole
conversation, every turn carries it, the case's ``AgentSessionEnd`` cleanup step closes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from pydantic import AliasChoices, Field

from ..checks.specs import (
    AttachmentSpec,
    CheckpointSpec,
    Duration,
    InputSpec,
    InteractiveSpec,
    SimulatorSpec,
)
from ..model import StepTrace
from .base import Block
from .conversation import PipelineAgent, _Spec, config_problems
from .turn_evidence import conversation_evidence

DEFAULT_MAX_TURNS = 20
DEFAULT_TIMEOUT_S = 300.0


class SimulatedConfig(_Spec):
    agent: PipelineAgent
    input: InputSpec | None = None
    attachments: list[AttachmentSpec] = Field(default_factory=list)
    simulator: SimulatorSpec = Field(default_factory=SimulatorSpec)
    checkpoints: list[CheckpointSpec] = Field(min_length=1)
    maxTurns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, validation_alias=AliasChoices("maxTurns", "max_turns"))
    timeout: Duration = DEFAULT_TIMEOUT_S
    options: dict[str, Any] = Field(default_factory=dict)
    interactive: InteractiveSpec | None = None


@dataclass
class DynamicPlan:
    """Everything one simulated conversation needs (the Yao compiler builds it directly)."""

    target: Any
    checkpoints: list[CheckpointSpec]
    simulator: SimulatorSpec = field(default_factory=SimulatorSpec)
    input: Any = None
    attachments: list[Any] = field(default_factory=list)
    max_turns: int = DEFAULT_MAX_TURNS
    timeout: float = DEFAULT_TIMEOUT_S
    options: dict[str, Any] = field(default_factory=dict)
    interactive: InteractiveSpec | None = None
    base_dir: Path | None = None
    test_name: str = ""
    spec: str = ""
    """The test file (for highbar session hooks)."""


class _Run:
    """The conversation so far: turns, checkpoints reached (with their turn), the verdict."""

    def __init__(self, plan: DynamicPlan) -> None:
        self.plan = plan
        self.turns: list[dict[str, Any]] = []
        self.reached: dict[str, int] = {}
        self.early: dict[str, list[int]] = {}
        self.last: dict[str, str] = {}
        self.phase = "starting"
        self.number = 0
        self.in_flight: tuple[list[dict[str, Any]], str] | None = None
        self.status = "running"
        self.reason = ""
        self.goal: dict[str, Any] | None = None
        self.session: dict[str, Any] | None = None

    def missing(self) -> list[str]:
        return [cp.id for cp in self.plan.checkpoints if cp.required and cp.id not in self.reached]

    def missing_text(self) -> str:
        parts = []
        for cp in self.plan.checkpoints:
            if cp.id in self.missing():
                why = f" ({cp.description})" if cp.description else ""
                early = self.early.get(cp.id)
                if early:
                    waits = ", ".join(f"'{a}'" for a in cp.after if a not in self.reached or self.reached[a] > early[0])
                    why += f" [its assertion held at turn {early[0]}, before {waits or 'its after checkpoints'} was reached]"
                parts.append(cp.id + why)
        return ", ".join(parts)

    def finish(self, passed: bool, reason: str) -> None:
        self.status = "passed" if passed else "failed"
        self.reason = reason

    def timeline(self) -> list[dict[str, Any]]:
        out = []
        for cp in self.plan.checkpoints:
            entry: dict[str, Any] = {"id": cp.id, "required": cp.required, "reached": cp.id in self.reached,
                                     "turn": self.reached.get(cp.id)}
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

    def output(self) -> dict[str, Any]:
        out = {
            "passed": self.status == "passed", "status": self.status, "reason": self.reason, "turns": self.turns,
            "checkpoints": self.timeline(), "missing": self.missing(), "goalAchieved": self.goal,
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


class SimulatedConversation(Block):
    name = "SimulatedConversation"
    concurrency_safe = True
    reads_agent_traces = True  # through take_turn: a highbar-protocol agent's trace records
    config_keys = frozenset({
        "agent", "input", "attachments", "simulator", "checkpoints", "maxTurns", "timeout", "options", "interactive",
    })
    outputs = ("passed", "status", "reason", "turns", "checkpoints", "missing", "goalAchieved")
    whole_story = True

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Any]:
        return conversation_evidence(trace)  # turns, tool calls, validators, checkpoint timeline, why it ended

    @classmethod
    def validate_config(cls, config: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = config_problems(SimulatedConfig, config)
        if not problems:
            checkpoints = [CheckpointSpec.model_validate(c) for c in config.get("checkpoints") or []]
            problems = [(f"checkpoints[{i}].after", m) for i, m in order_problems(checkpoints)]
        return problems

    def _plan(self, ctx: Any) -> DynamicPlan:
        if isinstance(self.compiled, DynamicPlan):  # the Yao compiler's (Step.compiled)
            return self.compiled
        spec = SimulatedConfig.model_validate(dict(self.config))
        return DynamicPlan(
            spec.agent.target(), spec.checkpoints, spec.simulator, spec.input, spec.attachments, spec.maxTurns,
            spec.timeout, spec.options, spec.interactive, Path(getattr(ctx.session, "rootdir", None) or Path.cwd()),
        )

    _run: _Run | None = None

    async def process(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        from .chat_turn import open_session

        plan = self._plan(ctx)
        run = self._run = _Run(plan)
        # one highbar session for the whole conversation, opened before turn 1 (outside the conversation's
        # timeout: the hook has its own), closed by the case's cleanup step (see chat_turn.open_session)
        run.session = await open_session(ctx, plan.target, plan.test_name, plan.spec)
        try:
            async with asyncio.timeout(plan.timeout) as deadline:
                await self._converse(run, ctx, deadline)
        except TimeoutError:
            reason = f"timeout after {plan.timeout:g}s (turn {run.number}: {run.phase})"
            if run.in_flight is not None:  # the turn the timeout interrupted, for the transcript
                from .chat_turn import turn_record

                run.turns.append(turn_record(run.number, run.in_flight[0], run.in_flight[1], error=reason))
            run.finish(False, f"{reason}; required checkpoints not reached: {run.missing_text()}")
        return run.output()

    def error_output(self, inputs: dict[str, Any], message: str) -> dict[str, Any]:
        out: dict[str, Any] = {"error": message}
        if self._run is not None and self._run.session is not None:  # still closed by the cleanup step
            out["session"] = self._run.session
        return out

    async def _converse(self, run: _Run, ctx: Any, deadline: Any) -> None:
        from ..agents.chat import message_specs, user_message
        from ..agents.errors import AgentError
        from .chat_turn import take_turn, turn_record

        plan = run.plan
        sent = message_specs(plan.input, plan.attachments) if plan.input is not None else None
        source, note = "input", None
        number = 0
        while True:
            number += 1
            run.number = number
            if sent is None:
                run.phase = "waiting for the simulator"
                answer = await self._simulate(run, ctx, number)
                if answer.goal_achieved:
                    run.goal = {"after_turn": number - 1, "reasoning": answer.reasoning}
                    run.finish(False, f"the simulator says the goal is achieved after turn {number - 1}, but "
                                      f"required checkpoints were not reached: {run.missing_text()}")
                    return
                sent, source, note = [user_message(answer.message)], "simulator", {"reasoning": answer.reasoning}
            run.phase, run.in_flight = "waiting for the agent", (sent, source)
            try:
                turn = await take_turn(ctx, plan.target, run.turns, sent, plan.options, number=number, source=source,
                                       base_dir=plan.base_dir, test_name=plan.test_name, session=run.session)
            except AgentError as exc:
                run.in_flight = None
                run.turns.append(turn_record(number, sent, source, error=f"agent error: {exc}"))
                run.finish(False, f"agent error at turn {number}: {exc}")
                return
            run.in_flight = None
            if note:
                turn["simulator"] = note
            run.turns.append(turn)
            run.phase = "checking checkpoints"
            await self._checkpoints(run, ctx, turn, number)
            if not run.missing():
                run.finish(True, f"all required checkpoints reached by turn {number}")
                return
            if turn.get("awaiting_input") is False:
                run.finish(False, f"the agent ended the conversation at turn {number} (awaiting_input: false) "
                                  f"with required checkpoints not reached: {run.missing_text()}")
                return
            if number >= plan.max_turns:
                run.finish(False, f"max turns ({plan.max_turns}) reached with required checkpoints not reached: "
                                  f"{run.missing_text()}")
                return
            sent, note = None, None
            if plan.interactive is not None and plan.interactive.enabled and turn.get("awaiting_input") is True:
                answer_text = await self._ask_person(run, ctx, turn, deadline)
                if answer_text is not None:
                    if not answer_text:
                        run.finish(False, f"the person ended the conversation after turn {number} with required "
                                          f"checkpoints not reached: {run.missing_text()}")
                        return
                    sent, source = [user_message(answer_text)], "person"

    async def _ask_person(self, run: _Run, ctx: Any, turn: dict[str, Any], deadline: Any) -> str | None:
        """The person's message ("" ends), or None (no terminal: the simulator answers)."""
        import time

        from .interactive import ask_person, terminal_of

        terminal = terminal_of(ctx.session)
        if terminal is None:
            return None
        run.phase = "waiting for the person"
        started = time.monotonic()
        answer = await ask_person(terminal, turn, run.plan.interactive.timeout if run.plan.interactive else None)
        when = deadline.when()
        if when is not None:  # a person's thinking time does not count against the timeout
            deadline.reschedule(when + time.monotonic() - started)
        return answer or ""

    async def _simulate(self, run: _Run, ctx: Any, number: int) -> Any:
        from ..checks.conversation import text_history
        from ..engine.runner import JudgeError, JudgeUnavailable
        from ..llm.errors import LLMError
        from ..llm.simulator import simulate
        from ..llm.validator import resolve_use

        plan = run.plan
        llm = getattr(ctx.session, "llm", None)
        role, _ = resolve_use(plan.simulator.model_use, "simulator")
        if llm is None or not llm.config.configured(role):
            if getattr(ctx.settings, "require_judge", False):
                run.raise_(JudgeError, "LLM simulator not configured and --semantictest-require-judge is set")
            run.raise_(JudgeUnavailable, "LLM simulator not configured")
        described = {cp.id: {"id": cp.id, "description": cp.description or ""} for cp in plan.checkpoints}
        try:
            return await simulate(
                llm, use=plan.simulator.model_use, metadata=plan.simulator.metadata,
                conversation=text_history(run.turns), turn_number=number, max_turns=plan.max_turns,
                reached=[described[i] for i in described if i in run.reached],
                pending=[described[i] for i in described if i not in run.reached],
                repeat=getattr(ctx, "repeat", 0),
            )
        except LLMError as exc:
            run.raise_(JudgeError, f"simulator error at turn {number}: {exc}")

    async def _checkpoints(self, run: _Run, ctx: Any, turn: dict[str, Any], number: int) -> None:
        """Reach every pending checkpoint whose ``after`` ones are reached and whose assertions hold."""
        from ..checks.assertions import DETERMINISTIC, evaluate
        from ..checks.conversation import check_turn
        from ..engine.runner import JudgeError, JudgeUnavailable

        plan = run.plan
        earlier = run.turns[:-1]
        evaluated: set[str] = set()
        while True:
            ready = [cp for cp in plan.checkpoints if cp.id not in run.reached and cp.id not in evaluated
                     and all(a in run.reached for a in cp.after)]
            if not ready:
                break
            evaluated |= {cp.id for cp in ready}
            outcomes = await asyncio.gather(*(
                check_turn(cp.assertion, turn, session=ctx.session, earlier=earlier, repeat=getattr(ctx, "repeat", 0),
                           base_dir=plan.base_dir, all_or_nothing=True) for cp in ready
            ))
            for cp, results in zip(ready, outcomes):
                turn.setdefault("assertions", []).extend(  # what validators said, for the reports
                    {**r.record(), "checkpoint": cp.id} for r in results if r.validation)
                errors = [r.error for r in results if r.error]
                if errors:
                    run.raise_(JudgeError, f"checkpoint '{cp.id}' at turn {number}: {'; '.join(errors)}")
                skipped = [r.skipped for r in results if r.skipped]
                if skipped:
                    run.raise_(JudgeUnavailable, skipped[0])
                failed = [r for r in results if not r.passed]
                if failed:
                    run.last[cp.id] = f"turn {number}: {failed[0].outcome.message if failed[0].outcome else ''}"
                else:
                    run.reached[cp.id] = number
                    turn.setdefault("checkpoints", []).append(cp.id)
        for cp in plan.checkpoints:  # diagnostics: held before its `after` checkpoints were reached
            if cp.id in run.reached or cp.id in evaluated or not all(s.type in DETERMINISTIC for s in cp.assertion):
                continue
            if all(evaluate(s, turn).passed for s in cp.assertion):
                run.early.setdefault(cp.id, []).append(number)


def order_problems(checkpoints: list[CheckpointSpec]) -> list[tuple[int, str]]:
    """Unknown ``after`` ids (with a did-you-mean), a checkpoint after itself, cycles, duplicate ids."""
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
                problems.append((i, "the after order has a cycle: " + " -> ".join(cycle[start:])))
                break
    return problems
