"""``-p tests.mutate.phase_marks``: marks in the examples' request log (``EXAMPLE_AGENT_REQUEST_LOG``,
``examples/agents/request_log.py``) where each test's phases begin and end, so that a test can tell
which phase each request the example agents received belongs to.

``record`` is the inside of setup (the spec runs against the agent there); a trylast wrapper is
inside every other wrapper, a mutation run's too, so whatever that plugin does after the test ran
falls between ``record end`` and ``setup done``.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

VARIABLE = "EXAMPLE_AGENT_REQUEST_LOG"


def mark(what: str, item: pytest.Item) -> None:
    with open(os.environ[VARIABLE], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} MARK {what} {item.nodeid}\n")


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    mark("record-start", item)
    try:
        return (yield)
    finally:
        mark("record-end", item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    mark(f"{call.when}-done", item)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    mark("teardown-start", item)
    try:
        return (yield)
    finally:
        mark("teardown-end", item)
