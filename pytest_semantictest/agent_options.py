"""The ``agent-*`` options: the folder their start command runs in, and a warning when they do nothing.

A start command runs in the folder of the file it is written in (a SemanticTest suite's ``agent``, a
Yao sidecar); one given on the command line runs where pytest was invoked, one written in the ini
file in that file's folder (docs/agents.md). highbar's ``agent.start`` keeps highbar's rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import options
from .llm.roles import ROLES
from .option_groups import deprecations, warn
from .option_groups import dest as option_dest

COMMANDS = ("agent-start", "compliance-server")
AGENT_OPTIONS = ("agent-endpoint", "agent-start", "agent-health", "agent-protocol")
USERS = (
    "a SemanticTest suite without its own agent section, a Yao file without a sidecar *.agent.yaml, "
    "or a Python test using the agent fixture"
)


def start_dirs(config: pytest.Config) -> dict[str, Path]:
    """The folder of each command option written in the ini file (not given on the command line)."""
    found: dict[str, Path] = {}
    inipath = config.inipath
    for name in COMMANDS:
        dest = option_dest(name)
        if config.getoption(dest, None) is None and config.getini(dest) and inipath is not None:
            found[name] = Path(inipath).parent
    return found


def given(config: pytest.Config, name: str) -> str | None:
    """How the user gave option ``name`` (for a message), or None."""
    dest = option_dest(name)
    if config.getoption(dest, None) is not None:
        return f"--semantictest-{name}"
    if config.getini(dest) not in (None, "", []):
        return f"ini key {dest}"
    return None


def warn_unused(config: pytest.Config, users: list[str], items: list[pytest.Item]) -> None:
    """One warning for each ``agent-*`` option this run was given that no test takes its agent from,
    and for each deprecated option spelling it was given."""
    for line in deprecations(config, ROLES):
        warn(config, line, pytest.PytestDeprecationWarning)
    shown = {name: given(config, name) for name in AGENT_OPTIONS}
    if not any(shown.values()):
        return
    fixture = any("agent" in getattr(item, "fixturenames", ()) for item in items)
    endpoint = bool(options.value(config, "agent-endpoint"))
    for name, spelled in shown.items():
        why = _unused_because(name, endpoint, users, fixture) if spelled is not None else None
        if why is not None:
            warn(config, f"{spelled} has no effect: {why}")


def _unused_because(name: str, endpoint: bool, users: list[str], fixture: bool) -> str | None:
    """Why agent option ``name`` does nothing in this run (None: it is used). ``users``: the spec files
    that take their agent from the options; ``fixture``: whether a Python test uses the agent fixture."""
    if not endpoint and name != "agent-endpoint":
        return "without --semantictest-agent-endpoint there is no agent to start or check"
    if name == "agent-protocol" and not any(u.endswith(".jsonl") for u in users):
        return "only Yao files without a sidecar *.agent.yaml talk to the agent by a protocol"
    if users or fixture or name == "agent-protocol":
        return None
    return f"no test of this run takes its agent from the options ({USERS})"
