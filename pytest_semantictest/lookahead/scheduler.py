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
from .rules import (
    agent_bound,
    agent_keys,
    agent_resources,
    attributable,
    file_barrier,
    io_free,
    must_be_alone,
    reads_records,
    share_agents,
    static_barrier,
    traced,
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
        self.tagged: dict[str, bool] = {}
        """Agent key -> whether its trace records are attributable (absent: not known yet)."""
        self.current = -1
        self._frontier = -1
        """(without xdist) the last index the walk went past: the items up to it are started or trivial."""
        self._later: asyncio.TimerHandle | None = None
        self.stopped = False
        self._static: dict[int, tuple[str | None, bool]] = {}
        """Item id -> (why it is a barrier from what it is, whether its pipeline only computes)."""
        self._agents: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}
        """Spec file id -> its agents: pool keys, processes (:func:`.rules.agent_resources`)."""
        self._shared: set[int] = set()
        """Items that ran while another item talking to the same traced agent was in flight."""
        self._reads: dict[int, dict[str, int]] = {}
        """Item -> traced agent key -> that agent's ``unattributed_reads`` when the item started."""
        self._suspect: set[int] = set()
        """Items during whose run a traced agent of theirs read a record no test could be told from."""
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
        task = self.tasks.get(n)
        if task is None and self._static_of(item)[1]:  # it only computes: it and the next such items now
            self._fill()
            task = self._compute(n, item)
        elif task is not None and n in self._computed:  # computed with an earlier one: nothing to start
            self._computed.discard(n)
        else:
            task = task or self._start(n, item)
            self._fill()
        try:  # a task that already finished (it ran while an earlier item waited) needs no loop turn
            if not task.done():
                self.runtime.run(task)
            self._finished(n, task, self.agents_of.get(n, ()))  # its callback may not have run yet
            verdict: Verdict = task.result()
        finally:
            self.tasks.pop(n, None)
            keys = self.agents_of.pop(n, ())
        if n in self._shared and n in self._suspect:
            for key in keys:
                self.tagged[key] = False  # from now on that agent's items run one by one
            if reads_records(item):
                verdict = self._alone_again(n, item, keys)
        self._shared.discard(n)
        self._suspect.discard(n)
        self._learn(keys, verdict)
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
        self._shared.clear()
        self._reads.clear()
        self._suspect.clear()

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
        self._note_overlap(n, keys)
        self.running.add(n)
        if keys:
            self.load.update(keys)
        task.add_done_callback(functools.partial(self._finished, n, keys=keys))
        return task

    def _note_overlap(self, n: int, keys: tuple[str, ...]) -> None:
        """Before item ``n`` starts: which items now share a traced agent, and where its record count is."""
        pool = self.runtime.agent_pool
        marks: dict[str, int] = {}
        for key in keys:
            live = pool.running(key) if pool is not None else None
            if live is None or not traced(live):
                continue
            marks[key] = live.unattributed_reads
            if self.load[key] > 0:
                self._shared.add(n)
                self._shared.update(m for m in self.running if key in self.agents_of.get(m, ()))
        if marks:
            self._reads[n] = marks

    def _unattributed(self, key: str) -> int:
        pool = self.runtime.agent_pool
        live = pool.running(key) if pool is not None else None
        return live.unattributed_reads if live is not None else 0

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
            computes = is_spec_item(item) and io_free(item)
            found = self._static[key] = (None, True) if computes else (static_barrier(item), False)
        return found

    def _finished(self, n: int, task: asyncio.Task[Verdict], keys: tuple[str, ...]) -> None:
        """A task finished: learn from it, and start the next items (within files already prepared).
        Called once per task (its done callback, or earlier when its item is reached)."""
        if n not in self.running:
            return
        self.running.discard(n)
        start = self._reads.pop(n, None)
        if start and any(self._unattributed(key) != count for key, count in start.items()):
            self._suspect.add(n)
        if keys:
            self.load.subtract(keys)
        if task.cancelled():
            return
        if task.exception() is None:
            self._learn(keys, task.result())
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
        in_flight, load = len(self.running), self.load
        upcoming = self.order.upcoming(self.current, self._frontier, self.limit + _WALK)
        before = items[upcoming[0] - 1] if upcoming and not self.order.from_a_queue else current
        # that runs alone
        waiting: set[str] = set().union(
            *(  # agents (rules.agent_resources) an item waits for: later items
                self._resources(other)
                for other in self._in_flight()  # on them wait too; first, those of one
                if must_be_alone(self._keys(other), self.runtime.agent_pool, self.tagged, self._fill)
            )
        )
        passed_over = False  # an item was passed over: the frontier stays before it
        started = 0
        for n in upcoming:
            item = items[n]
            if n in self.tasks:
                before = item
                continue
            if (
                in_flight >= self.limit
                or not is_spec_item(item)
                or not is_spec_item(before)
                or file_barrier(before, item) is not None
            ):
                break
            case = item.case
            # nothing to start: the walk goes on
            trivial = case.skip or case.error or self._static_of(item)[1]
            if not trivial and self._barrier(item) is not None:
                break
            before = item
            if trivial:
                if not passed_over:
                    self._frontier = max(self._frontier, n)
                continue
            resources = self._resources(item)
            ready = not share_agents(resources, waiting) and self.starts.ready(
                self.runtime.agent_pool, item.spec_file
            )
            alone = self._needs_alone(item) if ready else None
            if alone is None or any(load[key] >= self._bound(key) for key in self._keys(item)):
                waiting |= resources
                passed_over = True
                continue
            if started >= _BURST:  # the rest a moment later
                if self._later is None:
                    self._later = self.runtime.loop_runner.loop.call_later(_BURST_GAP_S, self._fill_later)
                break
            self._start(n, item)
            if alone:
                waiting |= resources  # the agent's next items wait until this one has shown its records
            if not passed_over:
                self._frontier = max(self._frontier, n)
            started += 1
            in_flight += 1

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
        alone = must_be_alone(self._keys(item), self.runtime.agent_pool, self.tagged, self._fill)
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

    def _learn(self, keys: tuple[str, ...], verdict: Verdict) -> None:
        if not keys:
            return
        said = attributable(verdict)
        for key in keys:
            if said is False:
                self.tagged[key] = False  # from now on that agent's items run one by one
            elif said is True:
                self.tagged.setdefault(key, True)

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
