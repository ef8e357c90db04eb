"""What the look-ahead (:mod:`.scheduler`) knows of whether an agent's trace records are attributable to
a test: what its verdicts said, which items overlapped on a traced agent, and whether that agent meanwhile
read a record no correlation could attribute (the item then runs again, alone on it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from .rules import attributable, traced

if TYPE_CHECKING:
    from ..model import Verdict
    from .services import Services


class OverlapWatch:
    """Per agent: are its records attributable; per item in flight: did it share a traced agent with
    another item, and did that agent read an unattributed record while it ran."""

    def __init__(self, runtime: Services) -> None:
        self.runtime = runtime
        self.tagged: dict[str, bool] = {}
        """Agent key -> whether its trace records are attributable (absent: not known yet)."""
        self._shared: set[int] = set()
        """Items that ran while another item talking to the same traced agent was in flight."""
        self._reads: dict[int, dict[str, int]] = {}
        """Item -> traced agent key -> that agent's ``unattributed_reads`` when the item started."""
        self._suspect: set[int] = set()
        """Items during whose run a traced agent of theirs read a record no test could be told from."""

    def starting(
        self,
        n: int,
        keys: tuple[str, ...],
        load: Counter[str],
        running: Collection[int],
        agents_of: Mapping[int, tuple[str, ...]],
    ) -> None:
        """Before item ``n`` starts: which items now share a traced agent, and where its record count is."""
        pool = self.runtime.agent_pool
        marks: dict[str, int] = {}
        for key in keys:
            live = pool.running(key) if pool is not None else None
            if live is None or not traced(live):
                continue
            marks[key] = live.unattributed_reads
            if load[key] > 0:
                self._shared.add(n)
                self._shared.update(m for m in running if key in agents_of.get(m, ()))
        if marks:
            self._reads[n] = marks

    def finished(self, n: int) -> None:
        """Item ``n``'s task finished: did one of its traced agents read an unattributed record meanwhile."""
        start = self._reads.pop(n, None)
        if start and any(self._unattributed(key) != count for key, count in start.items()):
            self._suspect.add(n)

    def suspect(self, n: int) -> bool:
        """Whether item ``n`` shared a traced agent that read an unattributed record while it ran."""
        return n in self._shared and n in self._suspect

    def learn(self, keys: tuple[str, ...], verdict: Verdict) -> None:
        """What a finished item's verdict says of its agents' records."""
        if not keys:
            return
        said = attributable(verdict)
        for key in keys:
            if said is False:
                self.tagged[key] = False  # from now on that agent's items run one by one
            elif said is True:
                self.tagged.setdefault(key, True)

    def untrust(self, keys: tuple[str, ...]) -> None:
        """From now on these agents' items run one by one."""
        for key in keys:
            self.tagged[key] = False

    def forget(self, n: int) -> None:
        self._shared.discard(n)
        self._suspect.discard(n)

    def clear(self) -> None:
        self._shared.clear()
        self._reads.clear()
        self._suspect.clear()

    def _unattributed(self, key: str) -> int:
        pool = self.runtime.agent_pool
        live = pool.running(key) if pool is not None else None
        return live.unattributed_reads if live is not None else 0
