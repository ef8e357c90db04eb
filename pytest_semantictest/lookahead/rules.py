"""What may run ahead (:mod:`.scheduler`): the rules that keep concurrency from changing a verdict.

An item runs ahead only when nothing it depends on is pending. The look-ahead walks the next items
in run order and stops at the first one that may not start now (a *barrier*); an item that is a
barrier also runs alone when it is reached (nothing else is in flight then, see :mod:`.scheduler`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import pytest

from ..blocks.registry import get_block
from ..model import Case, Verdict
from ..spec_nodes import SpecItemNode, is_spec_item

if TYPE_CHECKING:
    from ..agents.live import LiveAgent
    from ..agents.pool import AgentPool
    from ..json_types import JSONValue

DEFAULT_AGENT_CONCURRENCY = 8
"""Items in flight at once per agent when its file sets no ``concurrency`` of its own."""


def static_barrier(item: pytest.Item) -> str | None:
    """Why ``item`` never runs ahead (or alongside others), from what it is; None when it may."""
    if not is_spec_item(item):
        return "not a spec item (a Python test runs alone)"
    if any(m.name in ("skip", "skipif") for m in item.iter_markers()):
        return "a skip marker is decided when the item is reached"
    case: Case = item.case
    for step in [*case.steps, *case.cleanup]:
        reason = step_barrier(step.block, step.config)
        if reason:
            return reason
    return case.barrier  # what its format knows (compliance: depends_on, a case's own Setup)


def step_barrier(block: str, config: JSONValue) -> str | None:
    """Why a step keeps its item from running concurrently: a block not marked ``concurrency_safe``
    (every user block, until its author says so), or one that asks a person at the terminal."""
    cls = get_block(block)
    if cls is None or not getattr(cls, "concurrency_safe", False):
        return f"block {block} is not marked concurrency_safe"
    if isinstance(config, Mapping):
        interactive = config.get("interactive")
        if isinstance(interactive, Mapping) and interactive.get("enabled"):
            return "an interactive step asks a person"
    return None


IO_FREE_BLOCKS = frozenset({"MockData", "JsonParser"})
"""Built-in blocks that only compute (no network, no LLM, no agent, no waiting)."""


def io_free(case: Case) -> bool:
    """Whether ``case``'s pipeline only computes: built-in I/O-free blocks and checks evaluated without
    an LLM, no variations. Running it ahead gains nothing, so it runs when reached, and the look-ahead
    walks past it (it cannot affect, nor be affected by, what runs alongside it)."""
    if case.variants is not None:
        return False
    for step in [*case.steps, *case.cleanup]:
        cls = get_block(step.block)
        if (
            step.block not in IO_FREE_BLOCKS
            or cls is None
            or not cls.__module__.startswith("pytest_semantictest.")
        ):
            return False
    checks = [*case.checks, *(check for step in case.steps for check in step.checks)]
    return all(getattr(check, "evaluate_sync", None) is not None for check in checks)


def reads_records(item: SpecItemNode) -> bool:
    """Whether ``item``'s verdict can depend on its agents' trace records: a turn that checks tool calls or
    uses an earlier turn's (every step but a reply-only agent turn is taken to). A record no test could be
    told from changes nothing for an item that reads none, so it need not run again alone."""
    case: Case = item.case
    for step in [*case.steps, *case.cleanup]:
        if step.block == "AgentSessionEnd":
            continue
        if step.block != "AgentTurn" or not isinstance(step.config, Mapping):
            return True
        if step.config.get("observe") or step.config.get("previous"):
            return True
    return False


def file_barrier(before: SpecItemNode, after: SpecItemNode) -> str | None:
    """Why the look-ahead may not go from the file of item ``before`` into the file of ``after``."""
    if before.spec_file is after.spec_file:
        return None
    if before.spec_file.suite.teardown:
        return "the file before has teardown steps (they run when its last item is done)"
    if after.spec_file.suite.setup:
        return "the next file has setup steps (they run when its first item is reached)"
    return None


def attributable(verdict: Verdict) -> bool | None:
    """What a finished item says about its agents' trace records: False when some could not be
    attributed (highbar's rule for repeats, :func:`.engine.batching.runs_may_overlap`), True when its turns
    say they all were, None when it says nothing (no turn ran)."""
    from ..agents.correlate import RUNS_MAY_OVERLAP
    from ..engine.batching import runs_may_overlap

    verdicts = [verdict, *verdict.runs, *verdict.phrasings]
    if not runs_may_overlap(*verdicts):
        return False
    said = any(
        isinstance(value, Mapping) and value.get(RUNS_MAY_OVERLAP) is True
        for v in verdicts
        for value in (v.bus or {}).values()
    )
    return True if said else None


def agent_keys(item: SpecItemNode) -> tuple[str, ...]:
    """The agents (pool keys) the item's file talks to."""
    return tuple(req.key for req in item.spec_file.suite.agents)


ANY_AGENT = "*"
"""The resource of an item whose file names no agent: its steps may reach any server, agents included."""


def agent_resources(item: SpecItemNode) -> frozenset[str]:
    """The agent processes the item's file talks to, as what tells them apart whatever else two files set:
    the endpoint's port and, where one is named, the trace file; :data:`ANY_AGENT` for a file naming none."""
    from ..agents.config import AgentConfig
    from ..agents.net import endpoint_address

    found: set[str] = set()
    for req in item.spec_file.suite.agents:
        if not isinstance(req.config, AgentConfig):
            return frozenset([ANY_AGENT])
        found.add(f"port {endpoint_address(req.config.endpoint)[1]}")  # (localhost and 127.0.0.1: one agent)
        traces = req.config.traces_path()
        if traces is not None:
            found.add(f"traces {traces}")
    return frozenset(found or [ANY_AGENT])


def share_agents(one: frozenset[str] | set[str], other: frozenset[str] | set[str]) -> bool:
    """Whether items on these resources (:func:`agent_resources`) may reach the same agent."""
    return bool(one & other) or (bool(one) and ANY_AGENT in other) or (bool(other) and ANY_AGENT in one)


def must_be_alone(
    keys: tuple[str, ...],
    pool: AgentPool | None,
    tagged: Mapping[str, bool],
    on_attributed: Callable[[], None],
) -> bool:
    """Whether an item on these agents (pool keys) must be alone on them: a traced agent whose records are
    not known to be attributable to a test (``tagged``: what the look-ahead learnt), and no turn has shown
    they are yet (``on_attributed`` is called when one does)."""
    alone = False
    for key in keys:
        live = pool.running(key) if pool is not None else None
        if live is None or not traced(live) or tagged.get(key) is True:
            continue
        if tagged.get(key) is None and live.attributed_shown:
            continue  # a turn of an earlier item showed it (that item may still be in flight: they overlap)
        live.on_attributed = on_attributed
        alone = True
    return alone


def agent_bound(live: LiveAgent) -> int:
    """How many items may talk to this agent at once (``concurrency`` where the agent is described)."""
    value = live.config.concurrency
    return value if value is not None and value >= 1 else DEFAULT_AGENT_CONCURRENCY


def traced(live: LiveAgent) -> bool:
    """Whether turns read the agent's tool calls from its trace file (records may be untagged)."""
    return live.calls_from == "traces" and live.reader is not None
