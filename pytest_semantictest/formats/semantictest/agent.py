"""The agent a SemanticTest suite talks to: its own ``agent`` section, else the ``agent-*`` options.

The section's ``start`` runs in the suite file's folder; the options' in the folder they were given
in (``CollectContext.folder``). Either agent is acquired before the suite's first test, as highbar's
and Yao's are (started, or checked to answer), and the tests read its address as
``${agent.endpoint}`` (and ``${agent.health}``). ``${env.NAME}`` in the section reads the
environment, as everywhere in the format; a variable that is not set is the file's error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ...errors import Problem, SpecError
from ...json_types import JSONObject
from ...model import AgentRequirement
from ..detect import CollectContext
from .models import AgentSpec

_ENV = re.compile(r"\$\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}")
KEYS = {"endpoint": "endpoint", "start": "start", "health": "health", "startupTimeout": "startup_timeout"}


def choose(
    spec: AgentSpec | None,
    path: Path,
    ctx: CollectContext | None,
    line: Callable[[Sequence[str | int]], int | None],
) -> tuple[AgentRequirement | None, JSONObject | None]:
    """The suite's agent requirement and what ``${agent.*}`` reads, or (None, None) for no agent."""
    if ctx is None:
        return None, None
    if spec is not None:
        written: JSONObject = {KEYS[k]: v for k, v in spec.model_dump(exclude_none=True).items()}
        return _build(written, path.resolve().parent, ctx, path, line, ("agent",))
    endpoint = ctx.text("agent-endpoint")
    if not endpoint:
        return None, None
    options: JSONObject = {"endpoint": endpoint}
    for name in ("start", "health"):
        value = ctx.text(f"agent-{name}")
        if value:
            options[name] = value
    ctx.option_agent_users.append(str(path))
    return _build(options, ctx.folder("agent-start"), ctx, path, line, None)


def _build(
    written: JSONObject,
    cwd: Path,
    ctx: CollectContext,
    path: Path,
    line: Callable[[Sequence[str | int]], int | None],
    at: tuple[str, ...] | None,
) -> tuple[AgentRequirement, JSONObject]:
    # the agents' config model is imported for a suite that has an agent, not for every suite
    from ...agents.config import AgentConfig
    from ...agents.errors import AgentConfigError
    from ...agents.keys import requirement

    mapping: JSONObject = {
        key: _ENV.sub(r"${\1}", value) if isinstance(value, str) else value for key, value in written.items()
    }
    mapping["settle_time"] = 0  # no trace records to wait for: the tests read replies
    try:
        config = AgentConfig.from_highbar(
            mapping,
            cwd=cwd,
            environ=ctx.env,
            log_dir=ctx.rootdir / (ctx.text("agent-logs") or ".semantictest/logs"),
            name=path.name.split(".")[0],
        )
    except AgentConfigError as exc:
        where, _, message = str(exc).partition(": ")
        key = where.removeprefix("agent").strip(".") or "endpoint"
        if at is None:
            message = f"--semantictest-agent-{key} (or its ini key): {message}"
            raise SpecError(str(path), [Problem("", message, None)]) from None
        camel = next((k for k, v in KEYS.items() if v == key), key)
        raise SpecError(str(path), [Problem(f"agent.{camel}", message, line((*at, camel)))]) from None
    shown: JSONObject = {"endpoint": config.endpoint}
    if config.health:
        shown["health"] = config.health
    return requirement(config, observe=False, calls_from="reply"), shown
