"""The one internal representation every file format compiles to.

Suite -> Case -> Step (block name, input, config, output) + Check. The engine runs
these and returns a Verdict; it never sees a file format.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .json_types import JSONObject, JSONValue
from .stats import PassRateTest

if TYPE_CHECKING:
    from .databus import DataBus
    from .evidence import Evidence
    from .run_context import RunContext


class Outcome(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


@dataclass(slots=True)
class Step:
    """One block invocation in a pipeline."""

    block: str
    id: str
    input: JSONValue = None
    config: JSONObject = field(default_factory=dict)
    output: str | dict[str, str] | None = None
    line: int | None = None
    place: str = ""
    checks: list[Check] = field(default_factory=list)
    """Gate checks evaluated right after this step; when one does not pass, the pipeline
    stops there (a conversation turn that fails ends the conversation)."""
    compiled: object = None
    """What a format compiled for the block, typed (Yao: the agent's ``ChatTarget`` for a
    ``ChatTurn``, the ``DynamicPlan`` of a ``SimulatedConversation``): the block gets it as
    ``Block.compiled``. Never resolved, validated or walked like ``config``, which stays the plain
    data a file could have written. Plain data too: no clients, no callables."""


@dataclass(slots=True)
class Failure:
    """One check that did not hold, as data for the failure report."""

    check: str
    message: str
    expected: JSONValue = None
    actual: JSONValue = None
    operator: str | None = None
    line: int | None = None
    details: JSONObject = field(default_factory=dict)
    cause: str | None = None
    """The error of a step whose output the check reads (a transport failure behind ``Expected 0 to
    equal 200``): the headline names it next to the message."""

    def headline(self) -> str:
        """``check (line N): message``, with the step error it follows from."""
        where = f" (line {self.line})" if self.line else ""
        return f"{self.check}{where}: {self.message}" + (f", because {self.cause}" if self.cause else "")


@dataclass(slots=True)
class CheckResult:
    """What evaluating a check gives: failures, or a reason it could not be evaluated."""

    failures: list[Failure] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    """Evidence records for the reports (:mod:`pytest_semantictest.evidence`): what an LLM decided,
    passed or not, is a :class:`~pytest_semantictest.evidence.JudgedItems` here."""


class Check(Protocol):
    """Anything the engine can evaluate against a finished pipeline's DataBus.

    Path operators now; function-call expectations, strict JSONPath and judged
    criteria later. ``reads`` names the DataBus slots the check looks at.
    """

    line: int | None

    @property
    def reads(self) -> frozenset[str]: ...

    def describe(self) -> str: ...

    async def evaluate(self, bus: DataBus, ctx: RunContext) -> CheckResult: ...


class Variants(Protocol):
    """A source of phrasings for a case (``blocks.variations.Variations``)."""

    async def resolve(self, run_context: RunContext) -> list[tuple[str, JSONObject]]: ...


MAX_RUNS = 10_000
"""The most runs a case may ask for, in any format (highbar accepts 10**400 and never ends)."""


@dataclass(slots=True)
class Repetition:
    """Run a case ``runs`` times; it passes when at least ``min_pass`` runs pass. With ``decision``
    (a sequential test of its pass rate), runs go on in batches until it decides, at most ``runs``."""

    runs: int = 1
    min_pass: int | None = None
    decision: PassRateTest | None = None

    @property
    def required(self) -> int:
        return self.runs if self.min_pass is None else self.min_pass


@dataclass(slots=True)
class Case:
    """One test: a pipeline of steps then checks."""

    id: str
    name: str
    steps: list[Step]
    checks: list[Check]
    line: int | None = None
    markers: list[str] = field(default_factory=list)
    repetition: Repetition = field(default_factory=Repetition)
    timeout_s: float | None = None
    skip: str | None = None
    error: str | None = None
    """A problem confined to this test (an undefined reference, a missing placeholder value, a bad
    key inside this one case): one line naming the place. The test ERRORs with it before anything
    runs; the file's other tests still run. Set by a format instead of failing the whole file."""
    place: str = ""
    file: str = ""
    """The spec file (its :class:`Suite` sets it): an error of the run names it as a spec error does."""
    cleanup: list[Step] = field(default_factory=list)
    """Steps run after the pipeline whatever happened (closing an agent session)."""
    group: str | None = None
    """A suite name inside the file (highbar suites become class-like pytest nodes)."""
    variants: Variants | None = None
    """Optional source of phrasings: ``async resolve(session) -> list[(label, context)]``.
    Each phrasing runs ``repetition.runs`` times with its context overlaid and is judged on
    its own; the case combines them (any failed -> failed, any error -> error)."""
    barrier: str | None = None
    """Why the case never runs ahead of its turn or alongside others, as its format knows (a
    compliance file with ``depends_on``, a case that changes the server for itself); None: nothing
    of its format forbids it (:mod:`.lookahead.rules` adds the block-level rules)."""
    format_data: object | None = None
    """The format's typed data about the case, for its pytest glue only (compliance: ``ComplianceCase``)."""

    def settled(self) -> Verdict | None:
        """The verdict the case has before anything runs, or None when it must run: SKIPPED as it
        asks (``skip``, which wins: a broken case that asks to be skipped is skipped), else its
        ERROR (``error``). The one place both the pytest item and :func:`run_suite` ask."""
        if self.skip:
            return Verdict(Outcome.SKIPPED, skip_reason=self.skip)
        if self.error:
            return Verdict(Outcome.ERROR, error=self.error)
        return None


@dataclass(slots=True)
class Suite:
    """One spec file: shared context, setup/teardown steps and its cases."""

    name: str
    path: Path
    format: str
    cases: list[Case]
    context: JSONObject = field(default_factory=dict)
    setup: list[Step] = field(default_factory=list)
    teardown: list[Step] = field(default_factory=list)
    agents: list[AgentRequirement] = field(default_factory=list)
    """Agents the cases talk to (``AgentRequirement``): acquired before the first case runs."""
    format_data: object | None = None
    """The format's typed data about the file, for its pytest glue only (compliance: ``ComplianceFile``)."""

    def __post_init__(self) -> None:
        for case in self.cases:
            case.file = case.file or str(self.path)


@dataclass(slots=True)
class AgentRequirement:
    """An agent a suite needs: its config, and whether tool calls are observed."""

    key: str
    config: object
    """The agent's configuration (``agents.config.AgentConfig``; this module is below ``agents/``)."""
    observe: bool = False
    calls_from: str = "traces"


@dataclass(slots=True)
class StepTrace:
    """What one executed step saw and produced (for the failure report)."""

    step: Step
    input: JSONValue
    output: JSONValue
    duration_ms: float
    error: str | None = None
    iteration: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    """What the step did, as typed records for the reports (:mod:`pytest_semantictest.evidence`):
    emitted by its block while it ran (``ctx.evidence``) and by ``Block.evidence_of`` after."""
    whole_story: bool = False
    """The evidence tells all the step did (``Block.whole_story``): the console leaves the step out
    of the pipeline trace."""


@dataclass(slots=True)
class Verdict:
    """The outcome of running a case, with everything the report needs."""

    outcome: Outcome
    failures: list[Failure] = field(default_factory=list)
    trace: list[StepTrace] = field(default_factory=list)
    error: str | None = None
    skip_reason: str | None = None
    duration_ms: float = 0.0
    runs: list[Verdict] = field(default_factory=list)
    bus: JSONObject = field(default_factory=dict)
    label: str = ""
    phrasings: list[Verdict] = field(default_factory=list)
    planned_runs: int = 0
    """The runs a repeated case was to make: more than ``len(runs)`` when it stopped once its outcome
    was decided (``--semantictest-no-early-stop`` makes them all)."""
    evidence: list[Evidence] = field(default_factory=list)
    """Checks' evidence records (judged items first), passed ones too; steps' are on their trace."""
    decision: str | None = None
    """What a sequential pass-rate test concluded, in words (``pass``/``fail``/``inconclusive`` and why)."""
    sequential: bool = False
    """Its number of runs could depend on their outcomes (a sequential decision, or runs that stop
    once the outcome is decided): a report's interval is then the confidence sequence, valid at a
    stopping time, not Wilson's (docs/statistics.md)."""
    beyond: list[Verdict] = field(default_factory=list)
    """Runs that finished after the first runs (in planned order) had decided: reported, not counted."""

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    @property
    def anytime(self) -> bool:
        """Whether a phrasing's number of runs could depend on their outcomes (``sequential``)."""
        return any(part.sequential for part in (self.phrasings or [self]))
