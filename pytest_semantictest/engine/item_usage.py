"""LLM usage per item while items run ahead: each report still counts only its own test's calls.

The reports take a test's LLM usage as the session counters after its setup minus before it
(``report/summary.py``, ``report/results.py``). With items running ahead, other tests' calls land
in between; so, once the look-ahead runs, the session's ``Usage`` is swapped for :class:`ItemUsage`,
which also counts every call into the calling task's own counters (a context variable, inherited by
the tasks a test starts) and leaves the counters of items not yet reached out of what it shows.
Before item N's setup it shows the usage of everything up to N-1; after, up to N: the difference is
N's own. When the session ends (:meth:`ItemUsage.reveal_all`) it shows everything again.
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from ..llm.usage import COUNTERS as _FIELDS
from ..llm.usage import Usage

if TYPE_CHECKING:
    from ..run_context import RunContext

T = TypeVar("T")

_SINK: ContextVar[dict[str, int] | None] = ContextVar("semantictest_item_usage", default=None)


class ItemUsage(Usage):
    """Session counters that hide the usage of items started ahead until they are reached."""

    hidden: dict[int, dict[str, int]]
    """The counters of items not yet reached, by item (set in ``__init__``; not a dataclass field)."""
    _hidden_sum: dict[str, int]
    """What those add up to (kept up to date: reading the counters, done twice a test, stays cheap)."""
    _hidden_ids: set[int]

    def __init__(self, base: Usage) -> None:
        object.__setattr__(self, "hidden", {})
        object.__setattr__(self, "_hidden_sum", dict.fromkeys(_FIELDS, 0))
        object.__setattr__(self, "_hidden_ids", set())
        super().__init__(**{name: getattr(base, name) for name in _FIELDS}, models=dict(base.models))

    def __setattr__(self, name: str, value: Any) -> None:
        sink = _SINK.get()
        if sink is not None and name in _FIELDS:
            delta = int(value) - int(getattr(self, name))
            sink[name] = sink.get(name, 0) + delta
            if id(sink) in self._hidden_ids:
                self._hidden_sum[name] += delta
        super().__setattr__(name, value)

    def count_model(self, key: str, delta: int) -> None:
        sink = _SINK.get()
        if sink is not None:
            sink[key] = sink.get(key, 0) + delta
            if id(sink) in self._hidden_ids:
                self._hidden_sum[key] = self._hidden_sum.get(key, 0) + delta
        super().count_model(key, delta)

    def as_dict(self) -> dict[str, int]:
        hidden = self._hidden_sum
        return {
            **{name: getattr(self, name) - hidden[name] for name in _FIELDS},
            **{key: count - hidden.get(key, 0) for key, count in self.models.items()},
        }

    def hide(self, key: int, sink: dict[str, int]) -> None:
        self.hidden[key] = sink
        self._hidden_ids.add(id(sink))
        for name, count in sink.items():
            self._hidden_sum[name] = self._hidden_sum.get(name, 0) + count

    def reveal(self, key: int) -> None:
        sink = self.hidden.pop(key, None)
        if sink is not None:
            self._hidden_ids.discard(id(sink))
            for name, count in sink.items():
                self._hidden_sum[name] = self._hidden_sum.get(name, 0) - count

    def reveal_all(self) -> None:
        self.hidden.clear()
        self._hidden_ids.clear()
        self._hidden_sum.clear()
        self._hidden_sum.update(dict.fromkeys(_FIELDS, 0))


def install(context: RunContext) -> ItemUsage | None:
    """Swap the session LLM client's counters for :class:`ItemUsage` (None: no LLM client)."""
    from ..llm.client import LLMClient

    llm = context.llm
    if not isinstance(llm, LLMClient):
        return None
    if not isinstance(llm.usage, ItemUsage):
        llm.usage = ItemUsage(llm.usage)
    return llm.usage


async def counted(coro: Awaitable[T], sink: dict[str, int]) -> T:
    """Await ``coro`` with its LLM calls (and its sub-tasks') also counted into ``sink``."""
    _SINK.set(sink)  # a task's own context: only this task and the ones it starts see it
    return await coro
