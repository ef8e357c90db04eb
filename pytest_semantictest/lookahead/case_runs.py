"""The engine's run of a spec file, kept in the file node's stash, and the one way a spec item's case
enters the engine (every caller, ahead or when reached, replayed for a mutant, goes through
:func:`case_run`)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..engine.suite import SuiteRun
    from ..model import Verdict
    from ..spec_nodes import SpecFileNode, SpecItemNode

FILE_RUN: pytest.StashKey[SuiteRun] = pytest.StashKey()
"""A spec file's run (setup done once, its bus), from ``SpecFile.prepare`` until its teardown."""


def prepared(spec_file: SpecFileNode) -> bool:
    """Whether ``spec_file``'s run exists (its agents acquired, its run state made)."""
    return FILE_RUN in spec_file.stash


def case_run(item: SpecItemNode, concurrency: int) -> Coroutine[object, None, Verdict]:
    """The coroutine that runs ``item``'s case in its file's run (the file is prepared first)."""
    state = item.spec_file.stash.get(FILE_RUN, None)
    if state is None:
        raise RuntimeError(f"{item.spec_file.nodeid}: its run was not prepared before {item.nodeid}")
    return state.run_case(item.case, concurrency)
