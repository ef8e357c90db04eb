"""Compile a Yao test file (``*.jsonl``) to the internal model (nothing here runs anything).

A static case becomes one ``ChatTurn`` step a turn, its assertions the step's gate checks (a
failing turn ends the conversation); case-level assertions (or ``expected``) with ``turns`` are
checked on the last reply. A dynamic case becomes one ``SimulatedConversation`` step and a check
of its outcome. A case's ``before`` hook is a first (gated) step, its ``after`` hook a cleanup step
(see :mod:`.hooks`). A case with a problem of its own compiles to a case that ERRORs with it
(``Case.error``); a problem of the file is a SpecError (see :mod:`.cases`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from ...blocks.turn_spans import span_mode
from ...checks.conversation import ConversationOutcome, TurnCompleted, turn_assertion
from ...checks.specs import AssertionSpec, AttachmentSpec, InputSpec
from ...databus import DataBus
from ...errors import Problem, SpecError
from ...json_types import JSONObject
from ...model import Case, Check, CheckResult, Failure, Step, Suite
from ..detect import CollectContext
from .agent import AgentChoice, choose_agent
from .cases import ParsedCase, parse_file
from .hooks import hook_steps
from .models import DEFAULT_DYNAMIC_TIMEOUT_S, DEFAULT_MAX_TURNS, CaseSpec

FORMAT = "yao"


class _Turn(TypedDict):
    """One turn of a static conversation as the compiler reads it (a single-turn case: its only one)."""

    input: InputSpec | None
    assertions: list[AssertionSpec]
    options: JSONObject
    attachments: list[AttachmentSpec]


class _Fails:
    """A case that cannot run as asked (an interactive case without a person): it fails."""

    line: int | None = None

    def __init__(self, message: str, line: int | None) -> None:
        self.message, self.line = message, line

    @property
    def reads(self) -> frozenset[str]:
        return frozenset()

    def describe(self) -> str:
        return "interactive input"

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        return CheckResult(failures=[Failure("interactive", self.message, line=self.line)])


class Settings:
    """What compiling needs from the session: options and the terminal's availability."""

    def __init__(self, ctx: CollectContext) -> None:
        self.interactive = ctx.flag("interactive")
        self.on_missing = ctx.text("on-missing-input") or "skip"
        self._terminal: str | None = None
        self._terminal_checked = False
        self.env = ctx.env

    def no_terminal(self) -> str | None:
        if not self._terminal_checked:
            from ...blocks.interactive import unavailable_reason

            self._terminal, self._terminal_checked = unavailable_reason(self.env), True
        return self._terminal


def compile_file(path: Path, ctx: CollectContext) -> Suite:
    """The file's suite; a problem of the file raises SpecError, a problem of one case is its ``error``."""
    parsed, problems = parse_file(path)
    problems += [
        Problem("messages", DRAFT_SHAPE, case.line.number) for case in parsed if _draft(case.line.data)
    ]
    if problems:
        problems.sort(key=lambda p: p.line or 0)
        raise SpecError(str(path), problems)
    choice = choose_agent(path, ctx)
    settings = Settings(ctx)
    compiled = []
    for case in parsed:
        problems = case.problems or _protocol_problems(case.spec, case.line.number, choice)
        if problems or case.spec is None:
            compiled.append(_broken(case, problems, path))
        else:
            compiled.append(compile_case(case.spec, case.line.number, path, choice, settings))
    agents = [choice.requirement] if choice.requirement is not None else []
    return Suite(path.name, path, FORMAT, compiled, agents=agents)


DRAFT_SHAPE = (
    "the draft shape of Yao's test design: this case has 'messages' where a case has 'input'; rename "
    "the key to 'input' (a list of messages is the conversation so far, ending with the user's turn)"
)


def _draft(data: object) -> bool:
    """A case written in the design's draft shape (``messages``, no ``input``/``turns``/``checkpoints``)."""
    return (
        isinstance(data, dict) and "messages" in data and not data.keys() & {"input", "turns", "checkpoints"}
    )


def _broken(case: ParsedCase, problems: list[Problem], path: Path) -> Case:
    """A case that cannot run as written: it ERRORs with its problems (or is skipped, as it asks)."""
    line = case.line.number
    given = case.line.data.get("name")
    name = given if isinstance(given, str) else case.id
    broken = Case(id=case.id, name=name, steps=[], checks=[], line=line, place=f"line {line}")
    broken.error = "\n".join(p.render(str(path)) for p in problems)
    broken.skip = case.skip
    return broken


def _protocol_problems(spec: CaseSpec | None, line: int, choice: AgentChoice) -> list[Problem]:
    if spec is None or choice.target is None or choice.target.protocol != "highbar":
        return []
    problems = []
    if _more_than_text(spec):
        problems.append(
            Problem(
                "input",
                "the highbar protocol sends one text message a turn: use text inputs "
                "without attachments, or protocol: openai",
                line,
            )
        )
    for key in ("user", "team"):
        if getattr(spec, key):
            problems.append(
                Problem(
                    key,
                    f"'{key}' is sent in the request body with protocol: openai; with "
                    "protocol: highbar put it in the agent file's request.body",
                    line,
                )
            )
    return problems


def _more_than_text(spec: CaseSpec) -> bool:
    """The case sends attachments or an input that is not text (messages, content parts)."""
    inputs = [spec.input] + [t.input for t in spec.turns or []]
    attached = spec.attachments or any(t.attachments for t in spec.turns or [])
    return bool(attached) or any(v is not None and not isinstance(v, str) for v in inputs)


def compile_case(spec: CaseSpec, line: int, path: Path, choice: AgentChoice, settings: Settings) -> Case:
    name = spec.name or spec.id
    case = Case(id=spec.id, name=name, steps=[], checks=[], line=line, place=f"line {line}")
    case.skip = _skip_reason(spec, choice)
    interactive = settings.interactive or bool(spec.interactive and spec.interactive.enabled)
    if interactive and not case.skip and (why := settings.no_terminal()):
        from ...blocks.interactive import skip_reason

        if settings.on_missing == "fail":
            case.checks = [_Fails(f"interactive case: needs a person at the terminal, but {why}", line)]
            return case
        case.skip = skip_reason(why)
    if not case.skip and choice.target is not None:
        _add_steps(case, spec, line, path, choice, interactive)
    return case


def _add_steps(
    case: Case, spec: CaseSpec, line: int, path: Path, choice: AgentChoice, interactive: bool
) -> None:
    """The case's steps: a simulated conversation (dynamic) or its turns, between its hooks."""
    if spec.dynamic:
        _dynamic(case, spec, path, choice, interactive)
    else:
        _static(case, spec, path, choice, interactive)
    before, after = hook_steps(spec, line, case.place, path, [str(s.output) for s in case.steps])
    case.steps = before + case.steps
    case.cleanup = after + case.cleanup


def _skip_reason(spec: CaseSpec, choice: AgentChoice) -> str | None:
    """Why the case is skipped as written (``skip``), or for want of an agent; None to run it."""
    if spec.skip:
        return spec.skip if isinstance(spec.skip, str) else "skip: true in the test case"
    return choice.missing if choice.target is None else None


def agent_options(spec: CaseSpec) -> JSONObject:
    """The case's ``options`` and, as Yao gives the agent its test user and team, ``user``/``team``
    (request body fields; the case's ``options`` win)."""
    options = dict(spec.options)
    for key in ("user", "team"):
        value = getattr(spec, key)
        if value:
            options.setdefault(key, value)
    return options


def _dynamic(case: Case, spec: CaseSpec, path: Path, choice: AgentChoice, interactive: bool) -> None:
    from ...blocks.simulated_conversation import DynamicPlan
    from ...checks.specs import InteractiveSpec, SimulatorSpec

    shown = spec.interactive or InteractiveSpec(enabled=interactive)
    plan = DynamicPlan(
        choice.target,
        list(spec.checkpoints or []),
        spec.simulator or SimulatorSpec(),
        spec.input,
        list(spec.attachments),
        spec.max_turns or DEFAULT_MAX_TURNS,
        spec.timeout or DEFAULT_DYNAMIC_TIMEOUT_S,
        agent_options(spec),
        shown.model_copy(update={"enabled": interactive}),
        path.parent,
        case.name,
        str(path),
    )
    step = Step(
        "SimulatedConversation",
        "conversation",
        None,
        {},
        "conversation",
        case.line,
        case.place,
        compiled=plan,
    )
    case.steps = [step]
    case.checks = [ConversationOutcome("conversation", case.line)]
    _close_session(case, choice, path, "conversation")


def _turns(spec: CaseSpec) -> tuple[list[_Turn], list[AssertionSpec]]:
    """The turns to send, and the assertions on the final reply (a single-turn case's are its turn's)."""
    final: list[AssertionSpec] = list(spec.assertions)
    if spec.has_expected:
        final = [AssertionSpec(type="equals", value=spec.expected)]
    if spec.turns is None:
        return [
            {"input": spec.input, "assertions": final, "options": {}, "attachments": spec.attachments}
        ], []
    items: list[_Turn] = [
        {"input": t.input, "assertions": t.assertions, "options": t.options, "attachments": t.attachments}
        for t in spec.turns
    ]
    return items, final


def _static(case: Case, spec: CaseSpec, path: Path, choice: AgentChoice, interactive: bool) -> None:
    from ...blocks.conversation import merged_options

    single = spec.turns is None
    items, final = _turns(spec)
    target = choice.target
    timeout = spec.timeout
    slots: list[str] = []
    for number, item in enumerate(items, 1):
        slot = f"turn{number}"
        label = "reply" if single else f"turn {number}"
        config = {
            "input": item["input"],
            "attachments": list(item["attachments"]),
            "options": merged_options(agent_options(spec), item["options"]),
            "previous": list(slots),
            "number": number,
            "timeout": timeout,
            "base_dir": path.parent,
            "test_name": case.name,
            "spec": str(path),
            "interactive": {
                "enabled": interactive,
                "last": number == len(items),
                "timeout": spec.interactive.timeout if spec.interactive else 300.0,
            },
        }
        last_checks = final if number == len(items) else []
        if (spans := span_mode(choice.spans, [*item["assertions"], *last_checks])) is not None:
            config["calls_from"] = spans  # tool calls read from the agent's spans (docs/traces.md)
        checks: list[Check] = [TurnCompleted(slot, label, case.line)]
        if item["assertions"]:
            checks.append(
                turn_assertion(slot, list(item["assertions"]), label, case.line, tuple(slots), path.parent)
            )
        place = case.place if single else f"{case.place} turns[{number - 1}]"
        case.steps.append(
            Step("ChatTurn", slot, None, config, slot, case.line, place, checks, compiled=target)
        )
        slots.append(slot)
    if final:
        case.checks = [
            turn_assertion(slots[-1], final, "final reply", case.line, tuple(slots[:-1]), path.parent)
        ]
    _close_session(case, choice, path, "turn1")


def _close_session(case: Case, choice: AgentChoice, path: Path, first: str) -> None:
    """highbar: the cleanup step that runs ``session.teardown`` for the session the conversation opened
    (kept as ``session`` in the output in slot ``first``); it runs also when the conversation failed."""
    target = choice.target
    if target is not None and target.protocol == "highbar" and target.key is not None:
        case.cleanup = [
            Step(
                "AgentSessionEnd",
                "session-end",
                None,
                {"agent": target.key, "first_turn": first, "test_name": case.name, "spec": str(path)},
                "_session_end",
            )
        ]


def make_loader(ctx: CollectContext) -> Callable[[Path], Suite]:
    """The collection entry point (see formats/detect.py)."""
    return lambda path: compile_file(path, ctx)
