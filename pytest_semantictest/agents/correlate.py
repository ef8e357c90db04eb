"""Which trace records belong to a test execution: the ``correlate`` keys of their context.

Each execution gets a fresh id (``new_test_id``), sent as ``X-Highbar-Test``; the default
``correlate`` is ``{"test": "{{test.id}}"}``. Same attribution rules as highbar 0.1.0rc3.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

from ..json_types import JSONObject, JSONValue
from .placeholders import Values, render
from .traces import ToolCall, TraceBatch, TurnRecord

RUNS_MAY_OVERLAP = "_runs_may_overlap"
"""Key of a turn's output: every trace record it read could be attributed (tagged), so the runs of
its test may run at the same time without mixing their records (engine/batching.py reads it)."""


def describe(resolved: Mapping[str, JSONValue]) -> str:
    """``key=value, ...`` of a resolved correlation, for messages."""
    return ", ".join(f"{key}={value}" for key, value in resolved.items())


def new_test_id() -> str:
    """A fresh id for one test execution: 32 hex characters."""
    return uuid.uuid4().hex


def same_value(a: JSONValue, b: JSONValue) -> bool:
    """Equal, or two non-boolean scalars with the same text (``42`` and ``"42"``)."""
    if a == b and type(a) is type(b):
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    scalars = (str, int, float)
    return isinstance(a, scalars) and isinstance(b, scalars) and str(a) == str(b)


class Attribution(Enum):
    MINE = "mine"  # every correlation key present and equal
    OTHER = "other"  # a key present with another value: another execution's
    UNATTRIBUTED = "unattributed"  # not all keys present: nothing says whose it is


def resolve_correlate(
    correlate: Mapping[str, JSONValue],
    test_id: str,
    *,
    test_name: str = "",
    session: Mapping[str, JSONValue] | None = None,
    message: str | None = None,
) -> JSONObject:
    """``correlate`` with its placeholders resolved for one execution."""
    values = Values(test_id=test_id, message=message, test_name=test_name, session=session or {})
    return dict(render(dict(correlate), values))


def attribute(context: Mapping[str, JSONValue], resolved: Mapping[str, JSONValue]) -> Attribution:
    """Whose a record is, by its context; a key whose value is null counts as absent."""
    present = {key: context[key] for key in resolved if context.get(key) is not None}
    if not present:
        return Attribution.UNATTRIBUTED
    if any(not same_value(value, resolved[key]) for key, value in present.items()):
        return Attribution.OTHER
    return Attribution.MINE if len(present) == len(resolved) else Attribution.UNATTRIBUTED


def matches_correlate(
    record_context: Mapping[str, JSONValue],
    correlate: Mapping[str, JSONValue],
    test_id: str,
    *,
    test_name: str = "",
    session: Mapping[str, JSONValue] | None = None,
    message: str | None = None,
) -> bool:
    """Whether a record with ``record_context`` belongs to the execution ``test_id``.

    ``test_name``, ``session`` and ``message`` fill the other placeholders.
    """
    resolved = resolve_correlate(correlate, test_id, test_name=test_name, session=session, message=message)
    return attribute(record_context, resolved) is Attribution.MINE


@dataclass
class Classified:
    """A batch's tool and turn records split by whose they are."""

    mine_tools: list[ToolCall] = field(default_factory=list)
    mine_turns: list[TurnRecord] = field(default_factory=list)
    other: int = 0
    unattributed_tools: list[ToolCall] = field(default_factory=list)
    unattributed_turns: list[TurnRecord] = field(default_factory=list)

    @property
    def observed(self) -> bool:
        """At least one record of this execution (tool or turn) was seen."""
        return bool(self.mine_tools or self.mine_turns)

    @property
    def correlated(self) -> bool:
        """Some record carries the correlation keys, so the window can be split by test."""
        return bool(self.mine_tools or self.mine_turns or self.other)


def classify(batch: TraceBatch, resolved: Mapping[str, JSONValue]) -> Classified:
    """Split ``batch`` by ``attribute`` against a resolved correlation."""
    out = Classified()
    out.other += _split(batch.tools, resolved, out.mine_tools, out.unattributed_tools)
    out.other += _split(batch.turns, resolved, out.mine_turns, out.unattributed_turns)
    return out


_Record = TypeVar("_Record", ToolCall, TurnRecord)


def _split(
    records: Iterable[_Record],
    resolved: Mapping[str, JSONValue],
    mine: list[_Record],
    unattributed: list[_Record],
) -> int:
    """Append each record to ``mine`` or ``unattributed``; returns how many belong to other tests."""
    other = 0
    for record in records:
        kind = attribute(record.context, resolved)
        if kind is Attribution.MINE:
            mine.append(record)
        elif kind is Attribution.OTHER:
            other += 1
        else:
            unattributed.append(record)
    return other
