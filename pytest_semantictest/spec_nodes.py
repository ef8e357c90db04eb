"""What any room may know of our pytest nodes without importing the collector (:mod:`.nodes`, which
imports the runtime): the bases of ``nodes.SpecFile`` and ``nodes.SpecItem`` and the one test of
"is this a spec item" (:func:`is_spec_item`). A session without spec files imports nothing more."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, TypeGuard

import pytest

if TYPE_CHECKING:
    from .model import Case, Suite, Verdict

VERDICT: pytest.StashKey[Verdict] = pytest.StashKey()
"""A spec item's verdict, once its pipeline ran (any report reads it of any item: absent for a Python
test, and for a spec item that did not run)."""
MUTATION = pytest.StashKey[Mapping[str, object]]()
"""What ``--semantictest-mutate`` found of a spec item (``mutate.score.MutationRecord``)."""


class SpecFileNode(pytest.File):
    """A spec file of any format (``nodes.SpecFile``): its compiled ``suite`` once collected; the
    engine's run of it is in its stash once prepared (``lookahead.case_runs.FILE_RUN``)."""

    suite: Suite

    def prepare(self) -> None:
        """Acquire the file's agents and create its run state (``nodes.SpecFile`` does)."""
        raise NotImplementedError


class SpecItemNode(pytest.Item):
    """One case of a spec file (``nodes.SpecItem``): its ``case`` and, once run, its ``verdict``."""

    case: Case

    @property
    def verdict(self) -> Verdict | None:
        """The verdict once the pipeline ran (kept under :data:`VERDICT`)."""
        return self.stash.get(VERDICT, None)

    @cached_property
    def spec_file(self) -> SpecFileNode:
        """The file the case comes from (looked up once: the look-ahead asks often)."""
        node = spec_file_of(self)
        assert node is not None
        return node


def is_spec_item(item: object) -> TypeGuard[SpecItemNode]:
    """Whether ``item`` is a test of a spec file (not a Python test)."""
    return isinstance(item, SpecItemNode)


def verdict_of(item: pytest.Item) -> Verdict | None:
    """The verdict of any item: None for a Python test and for a spec item that did not run."""
    return item.stash.get(VERDICT, None)


def spec_file_of(item: pytest.Item) -> SpecFileNode | None:
    """The spec file ``item`` belongs to; None for other tests."""
    node = item.parent
    while node is not None and not isinstance(node, SpecFileNode):
        node = node.parent
    return node
