"""Where the session's items are, in the order this process runs them (for the look-ahead).

Without xdist that is ``session.items`` from the current one on; on an xdist worker it is the
worker's queue (the controller hands it indexes into ``session.items``; ``--dist worksteal`` may take
some away again).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import pytest


class _Queue(Protocol):
    def lock(self) -> AbstractContextManager[Iterable[object]]: ...


class _WorkerLoop(Protocol):
    """What is read of pytest-xdist's worker loop (``WorkerInteractor``, untyped): its next index and queue."""

    @property
    def nextitem_index(self) -> object: ...

    @property
    def torun(self) -> _Queue: ...


class ItemOrder:
    """The items of ``session`` this process runs next, by index into ``session.items``."""

    def __init__(self, session: pytest.Session) -> None:
        self.session = session
        self._interactor = _worker_interactor(session.config)
        self._position: dict[int, int] = {}

    @property
    def from_a_queue(self) -> bool:
        """Whether an xdist worker's queue decides (not the order of ``session.items``)."""
        return self._interactor is not None

    def index(self, item: pytest.Item) -> int | None:
        """``item``'s index in ``session.items`` (None: not one of them)."""
        items = self.session.items
        if len(self._position) != len(items):
            self._position = {id(it): n for n, it in enumerate(items)}
        n = self._position.get(id(item))
        return n if n is not None and items[n] is item else None

    def upcoming(self, current: int, frontier: int, bound: int) -> Sequence[int]:
        """Up to ``bound`` indexes this process runs after ``current``, in order; without xdist from the
        first one after ``frontier`` (the walk went past the ones before)."""
        if self._interactor is None:
            return range(max(current + 1, frontier + 1), min(len(self.session.items), current + 1 + bound))
        return _queued(self._interactor)[:bound]

    def after(self, n: int) -> Sequence[int]:
        """The indexes this process runs after ``n`` (the current one), in order."""
        if self._interactor is None:
            return range(n + 1, len(self.session.items))
        return [m for m in _queued(self._interactor) if m != n]

    def queued(self) -> set[int] | None:
        """An xdist worker's queue (None without xdist: every index after the current one is ahead)."""
        return set(_queued(self._interactor)) if self._interactor is not None else None


def _worker_interactor(config: pytest.Config) -> _WorkerLoop | None:
    """pytest-xdist's worker loop, on a worker (its queue is this process's next items)."""
    if not hasattr(config, "workerinput"):
        return None
    return next(
        (p for p in config.pluginmanager.get_plugins() if type(p).__name__ == "WorkerInteractor"), None
    )


def _queued(interactor: _WorkerLoop) -> list[int]:
    """The indexes an xdist worker will run next: the one it already took, then its queue."""
    upcoming = [interactor.nextitem_index]
    with interactor.torun.lock() as queue:
        upcoming += list(queue)
    return [n for n in upcoming if isinstance(n, int) and not isinstance(n, bool)]
