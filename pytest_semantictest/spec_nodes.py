"""What any room may know of our pytest nodes without importing the collector (:mod:`.nodes`, which
imports the runtime): the bases of ``nodes.SpecFile`` and ``nodes.SpecItem`` and the one test of
"is this a spec item" (:func:`is_spec_item`). A session without spec files imports nothing more."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeGuard

import pytest

if TYPE_CHECKING:
    from .model import Case, Suite, Verdict


class SpecFileNode(pytest.File):
    """A spec file of any format (``nodes.SpecFile``): its compiled ``suite`` once collected."""

    suite: Suite
    run_state: Any
    """The file's run (``engine.suite.SuiteRun``) once prepared, else None."""

    def prepare(self) -> None:
        """Acquire the file's agents and create its run state (``nodes.SpecFile`` does)."""
        raise NotImplementedError


class SpecItemNode(pytest.Item):
    """One case of a spec file (``nodes.SpecItem``): its ``case`` and, once run, its ``verdict``."""

    case: Case
    verdict: Verdict | None

    @cached_property
    def spec_file(self) -> SpecFileNode:
        """The file the case comes from (looked up once: the look-ahead asks often)."""
        node = spec_file_of(self)
        assert node is not None
        return node


def is_spec_item(item: object) -> TypeGuard[SpecItemNode]:
    """Whether ``item`` is a test of a spec file (not a Python test)."""
    return isinstance(item, SpecItemNode)


def spec_file_of(item: pytest.Item) -> SpecFileNode | None:
    """The spec file ``item`` belongs to; None for other tests."""
    node = item.parent
    while node is not None and not isinstance(node, SpecFileNode):
        node = node.parent
    return node
