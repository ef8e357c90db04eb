"""What the processes of one xdist run share: the folder agent processes are shared through, the folder
the LLM rate limits and budget are kept in (``llm/limits.py``), and the workers' LLM usage, summed on
the controller. Without xdist the one process is its own controller."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

import pytest

AGENTS_DIR = "semantictest_agents_dir"
"""``workerinput`` key: the run's shared agent folder, from the xdist controller to its workers."""
LLM_DIR = "semantictest_llm_dir"
"""``workerinput`` key: the run's shared LLM rate-limit folder (``llm/limits.py``), controller to workers."""
USAGE_KEY = "semantictest_llm_usage"
"""``workeroutput`` key: a worker's LLM usage, for the controller's totals."""


class XdistShare:
    """This process's part of the run's sharing: as the controller, the folders it made for its workers
    and their usage; as a worker, the folders its controller gave it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.controller_agents: str | None = None
        """On an xdist controller: the agent folder it made for its workers (:meth:`share_agents`)."""
        self._llm_dir: str | None = None
        self.worker_usage: dict[str, int] = {}
        """On the xdist controller: the finished workers' LLM usage counters, summed."""

    def _workerinput(self) -> dict[str, object] | None:
        found: dict[str, object] | None = getattr(self.config, "workerinput", None)  # (set by xdist)
        return found

    @property
    def agents_dir(self) -> str | None:
        """The run's shared agent folder (xdist only; the controller makes it for its first worker)."""
        workerinput = self._workerinput()
        if workerinput is not None:
            shared = workerinput.get(AGENTS_DIR)
            return shared if isinstance(shared, str) else None
        return self.controller_agents

    def share_agents(self, workerinput: dict[str, object]) -> None:
        """xdist controller: give a worker the folder every worker shares agent processes through."""
        if self.controller_agents is None:
            import tempfile

            from .agents import cleanup
            from .agents.shared import reap_folder
            from .agents.watchdog import record_controller

            shared = self.controller_agents = tempfile.mkdtemp(prefix="semantictest-agents-")
            record_controller(shared)  # the workers' agents' watchdogs stop them if this process dies
            # SIGTERM/SIGHUP to the controller (a cancelled CI job) still stops the shared agent
            cleanup.register(lambda: reap_folder(shared))
        workerinput[AGENTS_DIR] = self.controller_agents

    def limits_dir(self) -> str:
        """The folder the LLM limits are kept in: the controller's on a worker, else this process's."""
        workerinput = self._workerinput()
        given = workerinput.get(LLM_DIR) if workerinput is not None else None
        return given if isinstance(given, str) and given else self.llm_dir()

    def llm_dir(self) -> str:
        """The run's LLM limits folder, made by this process (the controller, or the only one)."""
        if self._llm_dir is None:
            import tempfile

            self._llm_dir = tempfile.mkdtemp(prefix="semantictest-llm-")
        return self._llm_dir

    def share_llm(self, workerinput: dict[str, object]) -> None:
        """xdist controller: give a worker the folder every worker shares the LLM limits through."""
        workerinput[LLM_DIR] = self.llm_dir()

    def add_worker_usage(self, usage: Mapping[str, int | str]) -> None:
        """On the xdist controller: a finished worker's counters."""
        for name, count in usage.items():
            self.worker_usage[name] = self.worker_usage.get(name, 0) + int(count)

    def cleanup_steps(self) -> list[Callable[[], None]]:
        """What ending the run removes of what this process made: its LLM folder, and (the controller)
        whatever a crashed or interrupted worker left in the shared agent folder."""
        steps: list[Callable[[], None]] = []
        if self._llm_dir is not None:
            import shutil

            steps.append(partial(shutil.rmtree, self._llm_dir, True))
        if self.controller_agents is not None:
            from .agents.shared import reap_folder

            steps.append(partial(reap_folder, self.controller_agents))
        return steps
