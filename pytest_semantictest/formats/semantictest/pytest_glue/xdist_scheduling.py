"""Under ``pytest -n`` with ``--dist load`` (what ``-n auto`` uses): the tests of a SemanticTest file
that has ``setup`` or ``teardown`` go to one worker together, so its setup runs once before them and
its teardown once after the last of them, as the format says. Every other test is distributed one by
one, as xdist's ``load`` does.

xdist asks for its scheduler before any worker has collected, so :class:`FileSetupScheduling` decides
when the collection arrives: no such file, and xdist's own ``LoadScheduling`` does everything as
usual; otherwise a ``LoadScopeScheduling`` whose scope is the file for those tests and the test
itself for every other one. Until then both hear of every worker and collection.

Whether a file's tests go together is the format's scheduling hint,
:func:`~.loader.runs_on_one_worker`: the controller never collects (the workers do), so it asks
the format's own reader about each file once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import pytest
from xdist.scheduler import LoadScheduling, LoadScopeScheduling


class _Worker(Protocol):
    """What the scheduler uses of an xdist worker (a ``WorkerController``; xdist has no type hints)."""

    def send_runtest_some(self, indices: list[int]) -> None: ...


class _FileScopes(LoadScopeScheduling):  # type: ignore[misc]  # xdist has no type hints
    """Scope = the file for tests of a file with setup or teardown, else the test alone."""

    def __init__(self, config: pytest.Config, log: object = None) -> None:
        super().__init__(config, log)
        self._root = Path(str(config.rootpath))
        self._grouped: dict[str, bool] = {}
        self._positions: dict[_Worker, dict[str, int]] = {}

    def grouped(self, path: str) -> bool:
        if path not in self._grouped:
            self._grouped[path] = False
            if path.endswith(".json"):  # the format's reader, imported only when a suite may be collected
                from ..loader import runs_on_one_worker

                self._grouped[path] = runs_on_one_worker(self._root / path)
        return self._grouped[path]

    def _split_scope(self, nodeid: str) -> str:
        path, sep, _ = nodeid.partition("::")
        return path if sep and self.grouped(path) else nodeid

    def _assign_work_unit(self, node: _Worker) -> None:
        """xdist's, with the test positions looked up in a dict (its ``list.index`` per test is
        quadratic when most units are one test)."""
        scope, work_unit = self.workqueue.popitem(last=False)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        positions = self._positions.get(node)
        if positions is None:
            positions = self._positions[node] = {
                nodeid: i for i, nodeid in enumerate(self.registered_collections[node])
            }
        node.send_runtest_some([positions[nodeid] for nodeid, done in work_unit.items() if not done])


class FileSetupScheduling:
    """xdist's ``load`` scheduling, or :class:`_FileScopes` once a collection holds a file with setup."""

    def __init__(self, config: pytest.Config, log: object = None) -> None:
        self._load = LoadScheduling(config, log)
        self._scopes = _FileScopes(config, log)
        self._chosen: LoadScheduling | _FileScopes | None = None

    def _all(self) -> list[LoadScheduling | _FileScopes]:
        return [self._chosen] if self._chosen is not None else [self._load, self._scopes]

    def add_node(self, node: object) -> None:
        for scheduler in self._all():
            scheduler.add_node(node)

    def add_node_collection(self, node: object, collection: Sequence[str]) -> None:
        for scheduler in self._all():
            scheduler.add_node_collection(node, collection)

    def remove_node(self, node: object) -> str | None:
        results: list[str | None] = [scheduler.remove_node(node) for scheduler in self._all()]
        return results[0]

    def schedule(self) -> None:
        if self._chosen is None:
            collection: list[str] = next(iter(self._scopes.registered_collections.values()), [])
            files = {nodeid.partition("::")[0] for nodeid in collection if "::" in nodeid}
            self._chosen = self._scopes if any(self._scopes.grouped(f) for f in files) else self._load
        self._chosen.schedule()

    def __getattr__(self, name: str) -> object:
        """The rest of xdist's scheduler interface (``tests_finished``, ``mark_test_complete``, ...)."""
        return getattr(self._chosen if self._chosen is not None else self._load, name)
