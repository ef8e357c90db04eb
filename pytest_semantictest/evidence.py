"""Evidence: typed records of what a step or a check did, for the reports.

A block describes its step in two ways, both optional:

- while it runs, ``ctx.evidence(record)`` (the step context); the engine attaches what was
  emitted to the step's :class:`~pytest_semantictest.model.StepTrace`;
- after it ran, ``Block.evidence_of(trace)`` (a classmethod): the block turns its own output
  (also the error output of a failed run) into records. The built-in blocks do this, so the
  knowledge of their output shapes stays with them.

A check returns records in ``CheckResult.evidence`` (a judged check: :class:`JudgedItems`, the one
form of an LLM's verdicts per item; only the results file turns it into a dict); the engine puts them in ``Verdict.evidence``. ``report/`` renders records
by kind (HTML extras, console sections, JUnit properties, results JSONL), never by block name, and
every value passes through the session's redactor there. A new block that emits any of these kinds
appears in every report without a change to ``report/``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar, Union, get_args

from .json_types import JSONObject, JSONValue


@dataclass(slots=True)
class HttpExchange:
    """One HTTP request and what came back. ``request``: ``method``, ``url``, ``headers``, ``body``
    as sent; ``response``: ``status`` (0 or absent: no response), ``headers``, ``body``, ``error``."""

    request: Mapping[str, JSONValue]
    response: Mapping[str, JSONValue]


@dataclass(slots=True)
class ParsedStream:
    """What a stream parser made of a streamed reply: its text and facts (format, chunks, ...)."""

    text: str
    metadata: Mapping[str, JSONValue] = field(default_factory=dict)


@dataclass(slots=True)
class ToolCall:
    """One tool call an agent made: name, arguments, and its result or error if known
    (:func:`tool_call` reads it from any shape agents write)."""

    name: JSONValue
    arguments: JSONValue = None
    result: JSONValue = None
    error: JSONValue = None


@dataclass(slots=True)
class ToolCalls:
    """Tool calls a step saw, in order; ``where`` narrows the place (``turn 2``)."""

    calls: list[ToolCall]
    where: str = ""


@dataclass(slots=True)
class ConversationTurn:
    """One exchange with an agent. ``data`` is the turn record as the results file writes it:
    ``turn`` (number; absent or None: numbered by its place), ``source``, ``input``, ``attachments``,
    ``output``, ``tool_calls`` (``{name, arguments, result?, error?}``), ``awaiting_input``,
    ``duration_ms``, ``error``, ``simulator``, ``checkpoints`` (reached), ``assertions``."""

    data: JSONObject


@dataclass(slots=True)
class CheckpointTimeline:
    """A conversation's checkpoints: ``id``, ``required``, ``reached``, ``turn``, ``description``,
    ``after``, ``held_early``, ``last``. The latest timeline of a test is the one reported."""

    checkpoints: list[JSONObject]


@dataclass(slots=True)
class ConversationEnd:
    """Why a conversation stopped (goal reached, turn limit, a checkpoint missing)."""

    reason: str


@dataclass(slots=True)
class Judgement:
    """An LLM judge's verdict: score against threshold, reasoning, per-criterion scores and
    constraints (``{constraint, met, reason}``). ``error`` set: the judge gave no verdict."""

    score: JSONValue = None
    threshold: JSONValue = None
    passed: bool = False
    reasoning: str = ""
    model: str | None = None
    details: Mapping[str, JSONValue] = field(default_factory=dict)
    constraints: list[Mapping[str, JSONValue]] = field(default_factory=list)
    next_prompt: JSONValue = None
    """The judge's next prompt when it asked to continue the conversation (else None)."""
    continues: bool = False
    error: str | None = None
    samples: Mapping[str, JSONValue] | None = None
    """When the judge was asked several times (``--semantictest-judge-samples``): ``n``, ``passed``,
    ``unstable``, ``live``, ``replayed`` and the scores' ``min``/``max``/``sd``."""

    @property
    def unstable(self) -> bool:
        return bool(self.samples and self.samples.get("unstable"))

    @classmethod
    def from_output(cls, out: Mapping[str, JSONValue]) -> Judgement:
        """From an LLMJudge-shaped output (``score``, ``reasoning``, ``shouldContinue``, ...)."""
        details = out.get("details")
        return cls(
            score=out.get("score"),
            threshold=out.get("threshold"),
            passed=bool(out.get("passed")),
            reasoning=out.get("reasoning") or "",
            model=out.get("model") or None,
            details=details if isinstance(details, Mapping) else {},
            constraints=[c for c in out.get("constraints") or [] if isinstance(c, Mapping)],
            next_prompt=out.get("nextPrompt"),
            continues=bool(out.get("shouldContinue")),
            samples=out.get("samples") if isinstance(out.get("samples"), Mapping) else None,
        )

    @property
    def has_verdict(self) -> bool:
        return self.error is None


@dataclass(slots=True)
class ValidatorVerdict:
    """A validator's verdict on one agent reply (a turn assertion or a checkpoint's check)."""

    assertion: JSONValue
    score: JSONValue = None
    threshold: JSONValue = None
    passed: bool = False
    reason: str = ""
    suggestions: list[JSONValue] = field(default_factory=list)
    model: str | None = None
    turn: JSONValue = None
    checkpoint: str | None = None
    index: int = 0
    """The assertion's place among its turn's assertions (a checkpoint's verdicts: the last counts)."""


@dataclass(slots=True)
class JudgedItem:
    text: JSONValue
    passed: bool
    reason: JSONValue = ""


@dataclass(slots=True)
class JudgedItems:
    """A judged check's verdict per item (natural-language assertions): held or not, and why."""

    check: JSONValue
    items: list[JudgedItem]
    model: str | None = None
    samples: Mapping[str, JSONValue] | None = None
    """When the judge was asked several times: as :attr:`Judgement.samples` (``passed`` counts the
    samples in which every item held)."""

    @property
    def unstable(self) -> bool:
        return bool(self.samples and self.samples.get("unstable"))

    def as_dict(self) -> JSONObject:
        """The form the results file (``judgements``) writes; nothing reads it back."""
        data = {
            "check": self.check,
            "model": self.model,
            "items": [{"text": i.text, "passed": i.passed, "reason": i.reason} for i in self.items],
        }
        return {**data, "samples": dict(self.samples)} if self.samples else data


@dataclass(slots=True)
class Note:
    """Anything else a block wants people to see: a title with key/value facts and/or text."""

    title: str
    fields: Mapping[str, object] = field(default_factory=dict)
    text: str = ""


@dataclass(slots=True)
class SpanTimeline:
    """The spans an agent exported for an execution (each as ``spans.model.Span.as_dict`` gives it), the
    trace read and what attributing spans without our trace context said (``docs/traces.md``)."""

    spans: list[JSONObject]
    trace: str = ""
    note: str = ""


Evidence = Union[
    HttpExchange,
    ParsedStream,
    ToolCalls,
    ConversationTurn,
    CheckpointTimeline,
    ConversationEnd,
    Judgement,
    ValidatorVerdict,
    JudgedItems,
    Note,
    SpanTimeline,
]
"""Every kind of evidence record the reports render."""
KINDS: tuple[type, ...] = get_args(Evidence)

E = TypeVar("E", bound=Evidence)
_EMITTED: ContextVar[list[Evidence] | None] = ContextVar("semantictest_evidence", default=None)


@contextmanager
def collecting() -> Iterator[list[Evidence]]:
    """Collect what :func:`emit` receives while the ``with`` body runs (one step)."""
    found: list[Evidence] = []
    token = _EMITTED.set(found)
    try:
        yield found
    finally:
        _EMITTED.reset(token)


def emit(record: E) -> E:
    """Attach ``record`` to the step running now; a record of an unknown kind is a TypeError."""
    if not isinstance(record, KINDS):
        names = ", ".join(k.__name__ for k in KINDS)
        raise TypeError(
            f"evidence must be one of {names} (pytest_semantictest.evidence); got {type(record).__name__}"
        )
    found = _EMITTED.get()
    if found is not None:
        found.append(record)
    return record


def tool_call(call: JSONValue) -> ToolCall:
    """A tool call from any shape blocks and agents write (``name``/``fn``/``toolName``,
    ``args``/``arguments``/``input``, OpenAI's ``function``); a bare value is the name."""
    if not isinstance(call, Mapping):
        return ToolCall(call)
    raw = call.get("function")
    function: Mapping[str, JSONValue] = raw if isinstance(raw, Mapping) else {}
    name = call.get("name") or call.get("fn") or call.get("toolName") or function.get("name")
    args = next((call[k] for k in ("args", "arguments", "input") if k in call), function.get("arguments"))
    return ToolCall(name, args, call.get("result"), call.get("error") or None)
