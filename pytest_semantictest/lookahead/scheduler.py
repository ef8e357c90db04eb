"""Look-ahead execution of spec items: the next items' pipelines run while pytest walks them in order.

pytest runs items one after another; our items are I/O-bound (each waits for an agent or an LLM),
so a suite would take the sum of its latencies. Here, when an item's setup runs, the pipelines of
the next eligible items (up to ``--semantictest-items-at-once`` in flight) are started as tasks
on the session's one event loop; the item then waits for its own task, and every task progresses
while it waits. Each item still reports through pytest's normal protocol, in pytest's order, when
it is reached: ``-x``, ``--maxfail``, ``-k``, ``--lf``, JUnit, HTML and the terminal see nothing new.

Invariants (what makes it safe, with :mod:`.rules`):

- a barrier item (a block not marked ``concurrency_safe``, a Python test, a compliance case with
  ``depends_on`` or its own Setup) is never started ahead, the walk stops there, and nothing is started
  ahead while it runs: it runs alone;
- each agent's items start in their order. One whose agent's trace records are not known to be
  attributable to a test runs alone *on that agent* (other agents' items go on); an item whose
  agents are not running yet waits, and so do the later items on them, while they start
  (:mod:`.agent_starts`); when an item is reached every item before it is finished;
- the look-ahead crosses into another file only when neither file has setup/teardown steps between them;
- when the session ends (``-x``, ``--maxfail``, Ctrl-C, the last item) whatever is still in flight is
  cancelled and reported nowhere (:meth:`Lookahead.stop`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from ..engine.item_usage import counted, install
from ..model import Verdict
from ..spec_nodes import is_spec_item
from .agent_starts import AgentStarts
from .case_runs import case_run
from .item_order import ItemOrder
from .overlap import OverlapWatch
from .rules import (
    agent_bound,
    agent_keys,
    agent_resources,
    file_barrier,
    io_free,
    must_be_alone,
    reads_records,
    share_agents,
    static_barrier,
)

if TYPE_CHECKING:
    from ..spec_nodes import SpecItemNode
    from .services import Services

_WALK = 64
"""At most this many items past the current one are looked at (beyond ``limit``)."""
_BATCH = 64
"""At most this many items that only compute run in one turn of the loop (:meth:`Lookahead._compute`)."""
_BURST = 4
_BURST_GAP_S = 0.005
"""At most ``_BURST`` items start at once, the next ones ``_BURST_GAP_S`` later: a burst of new
connections would overflow a small server's listen backlog (``http.server``'s is 5), and a dropped
connection is an error that running one by one never has."""


@dataclasses.dataclass
class _Walk:
    """Where one walk of :meth:`Lookahead._fill` over the upcoming items is."""

    before: pytest.Item  # the item the walk went past last (a file barrier may be between it and the next)
    in_flight: int
    waiting: set[str]  # agent processes whose next items wait (each agent's items start in their order)
    passed_over: bool = False  # an item was passed over: the frontier stays before it
    started: int = 0


class Lookahead:
    """The per-process look-ahead scheduler (one per pytest session, created on first use)."""

    def __init__(self, runtime: Services, session: pytest.Session, limit: int) -> None:
        self.runtime = runtime
        self.session = session
        self.limit = max(1, int(limit))
        self.tasks: dict[int, asyncio.Task[Verdict]] = {}
        self.agents_of: dict[int, tuple[str, ...]] = {}
        self.running: set[int] = set()
        """Indexes of the tasks not finished yet."""
        self.load: Counter[str] = Counter()
        """Agent key -> tasks not finished yet that talk to it."""
        self.current = -1
        self._frontier = -1
        """(without xdist) the last index the walk went past: the items up to it are started or trivial."""
        self._later: asyncio.TimerHandle | None = None
        self.stopped = False
        self._static: dict[int, tuple[str | None, bool]] = {}
        """Item id -> (why it is a barrier from what it is, whether its pipeline only computes)."""
        self._agents: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}
        """Spec file id -> its agents: pool keys, processes (:func:`.rules.agent_resources`)."""
        self.watch = OverlapWatch(runtime)
        self._computed: set[int] = set()
        """Items that only compute whose task ran with an earlier item's (:meth:`_compute`)."""
        self.order = ItemOrder(session)
        self.starts = AgentStarts(runtime.loop_runner.loop, self._fill)
        """Agents of the next files, started while this file's tests run."""
        self.usage = install(runtime.context) if self.limit > 1 else None
        """Per-item LLM usage for the reports (:mod:`.item_usage`)."""

    # -- what pytest calls --------------------------------------------------------------------------

    def verdict(self, item: pytest.Item) -> Verdict:
        """Run (or finish waiting for) ``item``'s pipeline and return its verdict."""
        if not is_spec_item(item):  # (the runtime asks only for its spec items)
            raise TypeError(f"{item.nodeid} is not a spec item")
        n = self.order.index(item)
        if self.limit <= 1 or n is None or self.stopped:
            alone: Verdict = self.runtime.run(case_run(item, self.runtime.concurrency))
            return alone
        self.current = n
        if self.usage is not None:
            self.usage.reveal(n)  # reached: its LLM usage counts from now on (in this item's report)
        self._drop_passed(n)
        task = self._task_of_reached(n, item)
        try:  # a task that already finished (it ran while an earlier item waited) needs no loop turn
            if not task.done():
                self.runtime.run(task)
            self._finished(n, task, self.agents_of.get(n, ()))  # its callback may not have run yet
            verdict: Verdict = task.result()
        finally:
            self.tasks.pop(n, None)
            keys = self.agents_of.pop(n, ())
        if self.watch.suspect(n):
            verdict = self._after_unattributed_read(n, item, keys, verdict)
        self.watch.forget(n)
        self.watch.learn(keys, verdict)
        return verdict

    def _task_of_reached(self, n: int, item: SpecItemNode) -> asyncio.Task[Verdict]:
        """The task of item ``n``, just reached: started ahead, computed with an earlier item, or started
        now; the next items are started with it."""
        task = self.tasks.get(n)
        if task is None and self._static_of(item)[1]:  # it only computes: it and the next such items now
            self._fill()
            return self._compute(n, item)
        if task is not None and n in self._computed:  # computed with an earlier one: nothing to start
            self._computed.discard(n)
            return task
        task = task or self._start(n, item)
        self._fill()
        return task

    def _after_unattributed_read(
        self, n: int, item: SpecItemNode, keys: tuple[str, ...], verdict: Verdict
    ) -> Verdict:
        """Item ``n`` shared a traced agent that read a record no test could be told from: that agent's
        items run one by one from now on, and an item that reads records runs again, alone."""
        self.watch.untrust(keys)
        if reads_records(item):
            return self._alone_again(n, item, keys)
        return verdict

    def _alone_again(self, n: int, item: SpecItemNode, keys: tuple[str, ...]) -> Verdict:
        """Run ``item`` again, alone on its agents: while it overlapped another item, its agent read a record
        no correlation could attribute, which may be the other item's (an agent that tags most records but
        loses the tag on some path)."""
        others = [
            t
            for m, t in self.tasks.items()
            if m != n and not t.done() and set(self.agents_of.get(m, ())) & set(keys)
        ]
        if others:
            self.runtime.run(asyncio.wait(others))
        again: Verdict = self.runtime.run(case_run(item, self.runtime.concurrency))
        return again

    def stop(self) -> None:
        """Cancel what is in flight (the session is ending); nothing is reported for it."""
        self.stopped = True
        self.starts.stopped = True
        if self._later is not None:
            self._later.cancel()
        if self.usage is not None:
            self.usage.reveal_all()  # the session's totals count every call made
        pending = [task for task in self.tasks.values() if not task.done()]
        for task in pending:
            task.cancel()
        if pending and not self.runtime.loop_runner.loop.is_running():
            self.runtime.run(asyncio.gather(*pending, return_exceptions=True))
        for task in self.tasks.values():
            if not task.cancelled():
                task.exception()  # retrieved: no "exception was never retrieved" at exit
        self.tasks.clear()
        self._computed.clear()
        self.agents_of.clear()
        self.running.clear()
        self.load.clear()
        self.watch.clear()

    # -- scheduling ---------------------------------------------------------------------------------

    def _compute(self, n: int, item: SpecItemNode) -> asyncio.Task[Verdict]:
        """Run ``item``'s pipeline (it only computes) with those of the next items of its file that only
        compute, up to ``_BATCH``, in one turn of the loop: each is a task of its own, as if run when
        reached; what they are computed ahead of nothing can change (no I/O, no LLM, no shared state)."""
        items = self.session.items
        batch = {n: self.runtime.loop_runner.start(case_run(item, self.runtime.concurrency))}
        for m in self.order.after(n)[:_BATCH]:
            other = items[m]
            if (
                m in self.tasks
                or not is_spec_item(other)
                or other.spec_file is not item.spec_file
                or other.case.skip
                or other.case.error
                or not self._static_of(other)[1]
            ):
                break
            batch[m] = self.runtime.loop_runner.start(case_run(other, self.runtime.concurrency))
        self.runtime.run(asyncio.wait(batch.values()))
        self.tasks.update(batch)
        self._computed.update(m for m in batch if m != n)
        return batch[n]

    def _start(self, n: int, item: SpecItemNode) -> asyncio.Task[Verdict]:
        sink: dict[str, int] = {}
        task: asyncio.Task[Verdict] = self.runtime.loop_runner.start(
            counted(case_run(item, self.runtime.concurrency), sink)
        )
        if self.usage is not None and n != self.current:
            self.usage.hide(n, sink)
        self.tasks[n] = task
        keys = self.agents_of[n] = self._keys(item)
        self.watch.starting(n, keys, self.load, self.running, self.agents_of)
        self.running.add(n)
        if keys:
            self.load.update(keys)
        task.add_done_callback(functools.partial(self._finished, n, keys=keys))
        return task

    def _keys(self, item: SpecItemNode) -> tuple[str, ...]:
        """The agents (pool keys) ``item``'s file talks to."""
        return self._agents_of_file(item)[0]

    def _resources(self, item: SpecItemNode) -> frozenset[str]:
        """The agent processes ``item``'s file talks to."""
        return self._agents_of_file(item)[1]

    def _agents_of_file(self, item: SpecItemNode) -> tuple[tuple[str, ...], frozenset[str]]:
        key = id(item.spec_file)  # (once per file: the walk asks often)
        return self._agents.get(key) or self._agents.setdefault(
            key, (agent_keys(item), agent_resources(item))
        )

    def _static_of(self, item: pytest.Item) -> tuple[str | None, bool]:
        """(why ``item`` is a barrier from what it is, whether it only computes), computed once."""
        key = id(item)
        found = self._static.get(key)
        if found is None:  # an item that only computes cannot interfere: no other rule applies to it
            computes = is_spec_item(item) and io_free(item.case)
            found = self._static[key] = (None, True) if computes else (static_barrier(item), False)
        return found

    def _finished(self, n: int, task: asyncio.Task[Verdict], keys: tuple[str, ...]) -> None:
        """A task finished: learn from it, and start the next items (within files already prepared).
        Called once per task (its done callback, or earlier when its item is reached)."""
        if n not in self.running:
            return
        self.running.discard(n)
        self.watch.finished(n)
        if keys:
            self.load.subtract(keys)
        if task.cancelled():
            return
        if task.exception() is None:
            self.watch.learn(keys, task.result())
        self._fill()

    def _fill(self) -> None:
        """Start the next eligible items in order, up to ``limit`` in flight (with the current one). An item
        that has to wait for its agents (not running yet, or needed alone) is passed over, and so is every
        later item on those agents: each agent's items start in their order, other agents' go on."""
        if self.stopped or self.current < 0 or len(self.running) >= self.limit:
            return
        items = self.session.items
        current = items[self.current]
        if self._barrier(current) is not None:
            return  # it runs alone
        upcoming = self.order.upcoming(self.current, self._frontier, self.limit + _WALK)
        before = items[upcoming[0] - 1] if upcoming and not self.order.from_a_queue else current
        walk = _Walk(before, len(self.running), self._waited_on())
        for n in upcoming:
            if not self._walk_past(walk, n):
                break

    def _waited_on(self) -> set[str]:
        """The agents (:func:`.rules.agent_resources`) of the items in flight that run alone on them:
        later items on them wait too."""
        waiting: set[str] = set()
        for other in self._in_flight():
            if must_be_alone(self._keys(other), self.runtime.agent_pool, self.watch.tagged, self._fill):
                waiting |= self._resources(other)
        return waiting

    def _walk_past(self, walk: _Walk, n: int) -> bool:
        """Whether the walk goes on past item ``n``: started now or before, passed over, or nothing to
        start; False where it stops (no room in flight, a barrier, the burst is full)."""
        item = self.session.items[n]
        if n in self.tasks:
            walk.before = item
            return True
        following = self._may_follow(walk, item)
        if following is None:
            return False
        trivial = self._nothing_to_start(following)
        if not trivial and self._barrier(following) is not None:
            return False
        walk.before = following
        if trivial:
            self._advance_frontier(walk, n)
            return True
        return self._start_in_walk(walk, n, following)

    def _may_follow(self, walk: _Walk, item: pytest.Item) -> SpecItemNode | None:
        """``item``, when the walk may go on to it (room in flight, spec items on both sides of no file
        barrier); None: the walk stops."""
        before = walk.before
        if walk.in_flight >= self.limit or not is_spec_item(item) or not is_spec_item(before):
            return None
        return item if file_barrier(before, item) is None else None

    def _nothing_to_start(self, item: SpecItemNode) -> bool:
        """A skipped case, one that failed to compile, or one that only computes (run when reached)."""
        case = item.case
        return bool(case.skip or case.error or self._static_of(item)[1])

    def _start_in_walk(self, walk: _Walk, n: int, item: SpecItemNode) -> bool:
        """Start item ``n`` now, or pass it over (its agents are waited on); False: the burst is full."""
        resources = self._resources(item)
        alone = self._start_mode(item, walk.waiting)
        if alone is None:
            walk.waiting |= resources
            walk.passed_over = True
            return True
        if walk.started >= _BURST:  # the rest a moment later
            if self._later is None:
                self._later = self.runtime.loop_runner.loop.call_later(_BURST_GAP_S, self._fill_later)
            return False
        self._start(n, item)
        if alone:
            walk.waiting |= resources  # the agent's next items wait until this one has shown its records
        self._advance_frontier(walk, n)
        walk.started += 1
        walk.in_flight += 1
        return True

    def _start_mode(self, item: SpecItemNode, waiting: set[str]) -> bool | None:
        """Whether ``item`` starts alone on its agents; None: it waits (an agent of it is waited on, not
        running yet, taken by an item that must be alone, or at its bound)."""
        if share_agents(self._resources(item), waiting):
            return None
        if not self.starts.ready(self.runtime.agent_pool, item.spec_file):
            return None
        alone = self._needs_alone(item)
        if alone is None or self._agents_full(item):
            return None
        return alone

    def _agents_full(self, item: SpecItemNode) -> bool:
        """Whether an agent of ``item`` already has as many items in flight as it takes."""
        return any(self.load[key] >= self._bound(key) for key in self._keys(item))

    def _advance_frontier(self, walk: _Walk, n: int) -> None:
        if not walk.passed_over:
            self._frontier = max(self._frontier, n)

    def _fill_later(self) -> None:
        self._later = None
        self._fill()

    def _barrier(self, item: pytest.Item) -> str | None:
        """Why ``item`` may not run alongside any other item (its steps, or what its format's glue says)."""
        reason, only_computes = self._static_of(item)
        if reason is not None or only_computes:
            return reason
        for gate in self.runtime.lookahead_gates:  # what the formats' glue says (compliance setup hooks)
            reason = gate(item)
            if reason is not None:
                return reason
        return None

    def _needs_alone(self, item: SpecItemNode) -> bool | None:
        """Whether ``item`` must be alone on its agents (records not known to be attributable); None: another is on them."""
        alone = must_be_alone(self._keys(item), self.runtime.agent_pool, self.watch.tagged, self._fill)
        if alone and any(
            share_agents(self._resources(other), self._resources(item)) for other in self._in_flight()
        ):
            return None
        return alone

    def _in_flight(self) -> list[SpecItemNode]:
        return [item for item in (self.session.items[m] for m in self.running) if is_spec_item(item)]

    def _bound(self, key: str) -> int:
        pool = self.runtime.agent_pool
        live = pool.running(key) if pool is not None else None
        return agent_bound(live) if live is not None else 1

    def _drop_passed(self, n: int) -> None:
        """Tasks of items this process will not reach (a hook skipped them, xdist stole them): cancelled."""
        if not self.tasks:
            return
        queued = self.order.queued()
        if queued is None and min(self.tasks) >= n:
            return  # the usual case: every task is for an item still ahead
        for m in list(self.tasks):
            if m != n and (m not in queued if queued is not None else m < n):
                dropped = self.tasks.pop(m)
                if not dropped.cancel() and not dropped.cancelled():
                    dropped.exception()  # it had finished: retrieved, no "never retrieved" at exit
                self.agents_of.pop(m, None)
                self._computed.discard(m)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stop()


_SCHEDULER = pytest.StashKey[Lookahead]()


def scheduler(item: pytest.Item, runtime: Services, limit: int) -> Lookahead:
    """The session's scheduler (registered as a plugin: it stops when the session finishes), created
    with at most ``limit`` items in flight (``--semantictest-items-at-once``)."""
    config = item.config
    found = config.stash.get(_SCHEDULER, None)
    if found is None:
        found = Lookahead(runtime, item.session, limit)
        config.stash[_SCHEDULER] = found
        config.pluginmanager.register(found, "semantictest-lookahead")
    return found
