"""The public base class for pipeline blocks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ..json_types import JSONObject, JSONValue

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..evidence import Evidence
    from ..model import StepTrace
    from ..step import StepContext


class BlockError(Exception):
    """Raised by a block for an expected failure; becomes the block's error output."""


class Block:
    """A pipeline block: reads resolved inputs, returns a dict of outputs.

    Subclasses set ``name`` (the value of ``"block"`` in a pipeline step) and
    implement :meth:`process`. ``config_keys`` lists the configuration keys the
    block understands (``None`` accepts anything); unknown keys are collection
    errors with a did-you-mean. A string input ``"${x}"`` arrives as
    ``{"body": x}`` and also under ``primary_input`` when that differs.
    """

    name: ClassVar[str] = ""
    primary_input: ClassVar[str] = "body"
    config_keys: ClassVar[frozenset[str] | None] = frozenset()
    config_model: ClassVar[type[BaseModel] | None] = None
    """The pydantic model a step's config is validated by at collection (:func:`config_problems`);
    it names every key in ``config_keys``. None: the block takes no config to check."""
    resolve_config: ClassVar[bool] = True
    """False: ``config`` reaches the block exactly as written (no ``${...}`` resolution)."""
    inputs: ClassVar[tuple[str, ...]] = ()
    input_keys: ClassVar[frozenset[str] | None] = None
    """The keys an object ``input`` may have (and the names a ``{from, as}`` input may use);
    others are collection errors with a did-you-mean. ``None`` (the default) accepts any key."""
    outputs: ClassVar[tuple[str, ...]] = ()
    concurrency_safe: ClassVar[bool] = False
    """True: a test using this block may run at the same time as other tests (its pipeline runs ahead
    while pytest reports the earlier ones, see docs/concurrency.md). Say so only when the block keeps
    no state between tests and touches nothing another test reads (each call stands alone, like an
    HTTP request). False (the default): the test runs alone, nothing else in flight."""
    reads_agent_traces: ClassVar[bool] = False
    """True: the block reads an agent's trace records, which may be untagged; repeats of a test using
    it overlap only once a first run showed every record was attributed (docs/concurrency.md)."""
    whole_story: ClassVar[bool] = False
    """True: the evidence this block gives tells all its step did (a conversation turn), so the
    console report leaves the step out of the pipeline trace."""

    bookkeeping: ClassVar[frozenset[str]] = frozenset()
    """Output keys that are the block's own bookkeeping (where it read a trace file to, the keys it
    correlated by): the console's pipeline trace shows them only with ``-vv``."""

    compiled: object = None
    """The step's ``Step.compiled``, set by the engine before ``process`` when a format compiled one
    (Yao's conversation steps); None for a step written as config."""

    def __init__(self, config: Mapping[str, JSONValue] | None = None) -> None:
        self.config: JSONObject = dict(config or {})

    @classmethod
    def validate_config(cls, config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        """Return ``(key, message)`` problems found in a step's config at collection (by default the
        problems of ``config_model``)."""
        return [] if cls.config_model is None else config_problems(cls.config_model, config)

    @classmethod
    def validate_input(cls, value: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        """Return ``(key, message)`` problems of an object ``input`` as written (at collection)."""
        return []

    @classmethod
    def assumptions(cls, config: Mapping[str, JSONValue], value: JSONValue) -> list[tuple[str, str]]:
        """Return ``(key, message)`` for what the block will assume where a step as written leaves
        something out (a warning at the step's line, at collection; the step still runs)."""
        return []

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONValue:
        """Do the block's work and return its output (usually a dict of fields).

        ``ctx`` is the step's :class:`~pytest_semantictest.step.StepContext`: ``ctx.http`` (the
        session's ``httpx.AsyncClient``), ``ctx.bus`` (this test's DataBus), ``ctx.evidence(record)``,
        ``ctx.execution_id``, ``ctx.run_context`` (the session's
        :class:`~pytest_semantictest.run_context.RunContext`: settings, agent pool, LLM, redactor).

        Raise :class:`BlockError` for an expected failure.
        """
        raise NotImplementedError

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """Evidence records (:mod:`pytest_semantictest.evidence`) describing a finished step of this
        block, read from its trace (input, output, error); called after the step ran, failed or
        not. A block may instead emit records while it runs: ``ctx.evidence(record)``."""
        return []

    def error_output(self, inputs: JSONObject, message: str) -> JSONObject:
        """The documented output a failure produces (default: ``{"error": message}``)."""
        return {"error": message}


def whole_number_at_least_zero(value: JSONValue) -> JSONValue:
    """A config field's check: absent, or a whole number >= 0 (a count, milliseconds)."""
    from ..errors import clip

    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"must be a whole number >= 0, got {clip(repr(value))}")
    return value


def config_problems(model: type[BaseModel], config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
    """Pydantic problems of a block config as ``(path, message)`` with a did-you-mean."""
    from pydantic import ValidationError

    from ..problems import problems_from

    try:
        model.model_validate(dict(config))
    except ValidationError as exc:
        found = problems_from(exc, model, lambda loc: None)  # unknown top-level keys: the loader says so
        return [(p.place, p.message) for p in found if p.place or not p.message.startswith("unknown key")]
    return []
