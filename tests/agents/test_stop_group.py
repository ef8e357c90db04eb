"""How an agent's process group is stopped: SIGTERM, a grace period, then SIGKILL; and once a signal
has cut one stop short (a Ctrl-C, or a SIGTERM to pytest), every later stop skips the grace period.

The grace periods here are an hour: a stop that waited one would miss the test's deadline, so each
test checks the rule, not a timing.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_semantictest.agents import procs
from tests.helpers import patience

HOUR = 3600.0
IGNORES_TERM = "trap '' TERM; echo ready; exec sleep 600"  # (an ignored signal stays so across exec)


@pytest.fixture(autouse=True)
def _not_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts, and leaves this worker, with the grace period in force."""
    monkeypatch.setattr(procs, "_at_once", False)


@pytest.fixture
def group() -> Iterator[subprocess.Popen[str]]:
    """A process group whose leader ignores SIGTERM, ready once this yields."""
    child = subprocess.Popen(
        ["sh", "-c", IGNORES_TERM], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    yield child
    if procs.group_alive(child.pid):
        procs.signal_group(child.pid, signal.SIGKILL)
    child.wait(timeout=patience(10))


def _stopped(pgid: int) -> bool:
    """Whether the group is gone within a loaded machine's deadline."""
    deadline = time.monotonic() + patience(20)
    while procs.group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_group_that_ends_on_sigterm_needs_no_sigkill() -> None:
    child = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        assert procs.stop_group(child.pid, grace_s=HOUR) is False
        assert _stopped(child.pid)
    finally:
        child.wait(timeout=patience(10))


def test_after_a_signal_cut_a_stop_short_later_stops_skip_the_grace_period(
    group: subprocess.Popen[str],
) -> None:
    procs.kill_stopping()  # what a SIGTERM to pytest does while it stops its agents
    assert procs.stopping_at_once()
    result: list[bool] = []
    stopper = threading.Thread(
        target=lambda: result.append(procs.stop_group(group.pid, grace_s=HOUR)), daemon=True
    )
    stopper.start()
    stopper.join(timeout=patience(30))
    assert not stopper.is_alive(), "the stop waited for the grace period after a signal had cut one short"
    assert result == [True]  # it ignored SIGTERM, so SIGKILL stopped it
    assert _stopped(group.pid)


def test_an_interrupt_in_the_grace_period_kills_the_group_at_once_and_propagates(
    group: subprocess.Popen[str],
) -> None:
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # a Ctrl-C while the stop waits
        with pytest.raises(KeyboardInterrupt):
            procs.stop_group(group.pid, grace_s=HOUR)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert _stopped(group.pid)
    assert procs.stopping_at_once()  # and the next stop will not wait either
