"""Spans that carry no trace context of ours: the one-at-a-time rule (``docs/traces.md``).

An agent that does not continue the ``traceparent`` a test sent exports its spans under trace ids of
its own. Such a *foreign* trace belongs to a test when that test was the only execution running
while the trace's time window (its first span's start to its last span's end) lay inside the test's
execution; when two or more executions ran during that window it belongs to none, and the tests
that ran are told so (:class:`Unattributed`), so a test never silently sees no calls.

Executions are announced by :func:`~pytest_semantictest.trace_context.tracing` (its start and end,
wall-clock nanoseconds, the clock span timestamps use); every execution of the run counts, whatever
agent it talks to (the receiver cannot tell which agent a foreign trace came from), which makes the
rule stricter than "against that agent", never looser.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_EXECUTIONS = 100_000
MAX_FOREIGN = 100_000


@dataclass
class Window:
    start_ns: int
    began: float  # monotonic: foreign traces that first arrived before it are not looked at
    end_ns: int | None = None  # None: still running


@dataclass
class ForeignTrace:
    arrived: float  # monotonic, the first span's arrival
    start_ns: int = 2**63
    end_ns: int = 0
    roots: int = 0  # spans without a parent: a request the agent handled, each
    counted: int = 0  # how many of its spans the window above holds (it is grown when a test reads)


@dataclass(frozen=True)
class Unattributed:
    """Foreign traces inside an execution's window that ran beside other executions."""

    traces: int = 0
    concurrent: int = 0
    """The most executions that ran at once during one of them."""

    def text(self) -> str:
        if not self.traces:
            return ""
        return (
            f"{self.traces} trace(s) without this test's trace context arrived while {self.concurrent} tests "
            "ran at once, so they are attributed to none (the one-at-a-time rule); make the agent continue "
            "the traceparent header, or run these tests one at a time (docs/traces.md)"
        )


class Attribution:
    """Our executions' windows and the foreign traces' windows, kept by the receiver (under its lock)."""

    def __init__(self) -> None:
        self.ours: OrderedDict[str, Window] = OrderedDict()
        """Under :attr:`lock` (executions start and end on other threads than spans arrive on)."""
        self.foreign: OrderedDict[str, ForeignTrace] = OrderedDict()
        """Under the receiver's lock."""
        self.lock = threading.Lock()

    def begin(self, trace_id: str, at_ns: int | None = None) -> None:
        with self.lock:
            self.ours[trace_id] = Window(at_ns if at_ns is not None else time.time_ns(), time.monotonic())
            self.ours.move_to_end(trace_id)
            while len(self.ours) > MAX_EXECUTIONS:
                self.ours.popitem(last=False)

    def end(self, trace_id: str, at_ns: int | None = None) -> None:
        with self.lock:
            window = self.ours.get(trace_id)
            if window is not None:
                window.end_ns = at_ns if at_ns is not None else time.time_ns()

    def arrived(self, trace_id: str, now: float) -> None:
        """A trace's first span arrived; unless it is ours, its window is worked out when a test
        reads (the receiver's hot path stays a dict insert)."""
        if trace_id in self.ours:
            return
        self.foreign[trace_id] = ForeignTrace(now)
        while len(self.foreign) > MAX_FOREIGN:
            self.foreign.popitem(last=False)

    def forget(self, trace_id: str) -> None:
        self.foreign.pop(trace_id, None)

    def attributed(
        self, trace_id: str, spans_of: Callable[[str], Sequence[tuple[Any, str]]]
    ) -> tuple[list[str], int, Unattributed]:
        """The foreign traces that belong to execution ``trace_id``, the root spans of every foreign trace
        inside its window (each a request the agent finished), and those that belong to none."""
        with self.lock:
            mine = self.ours.get(trace_id)
            windows = list(self.ours.values()) if mine is not None else []
            ours = set(self.ours) if mine is not None else set()
        if mine is None:
            return [], 0, Unattributed()
        owned: list[str] = []
        roots = ambiguous = most = 0
        for foreign_id in reversed(self.foreign):
            trace = self.foreign[foreign_id]
            if trace.arrived < mine.began:
                break
            if foreign_id in ours:  # its spans came before its execution's start was announced: ours
                continue
            _grow(trace, spans_of(foreign_id))
            if trace.start_ns < mine.start_ns or (mine.end_ns is not None and trace.end_ns > mine.end_ns):
                continue
            running = _running(windows, trace.start_ns, trace.end_ns)
            # (an unattributable request's root ends the wait as well: there is nothing to wait for)
            roots += trace.roots
            if running == 1:
                owned.append(foreign_id)
            else:
                ambiguous += 1
                most = max(most, running)
        owned.reverse()
        return owned, roots, Unattributed(ambiguous, most)


def _grow(trace: ForeignTrace, kept: Sequence[tuple[Any, str]]) -> None:
    """The trace's window and roots, with its spans that arrived since the last look (``(OTLP span
    message, service)`` as the receiver keeps them)."""
    for span, _ in kept[trace.counted :]:
        trace.start_ns = min(trace.start_ns, span.start_time_unix_nano)
        trace.end_ns = max(trace.end_ns, span.end_time_unix_nano)
        trace.roots += not span.parent_span_id
    trace.counted = len(kept)


def _running(windows: Sequence[Window], start_ns: int, end_ns: int) -> int:
    """How many executions ran during ``[start_ns, end_ns]``."""
    return sum(1 for w in windows if w.start_ns <= end_ns and (w.end_ns is None or w.end_ns >= start_ns))
