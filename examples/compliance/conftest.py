"""Runs compliance Markdown files against the example server (``examples/agents/compliance_server.py``).

Unless a server is configured (``--semantictest-compliance-base-url``, its ini key,
``COMPLIANCE_BASE_URL`` or ``BASE_URL``), this starts the example server in the pytest process on a
free port, points the plugin at it and gives the auth placeholders (``{valid_jwt_token}``, ...)
tokens minted with the example server's key. Unless ``COMPLIANCE_A2A_JSONRPC_URL``,
``COMPLIANCE_A2A_WEBAGENTS_URL`` (or ``COMPLIANCE_A2A_URL``) and ``COMPLIANCE_REALTIME_URL`` name other
agents, it starts the example A2A agents (a2a-sdk's server, the WebAgents dialect) and the Realtime
agent for ``a2a-jsonrpc.md``, ``a2a-webagents.md`` and ``realtime.md``. It also shows the hooks a
project implements:

- ``pytest_semantictest_compliance_setup``: create every agent of a file's ``## Setup`` on the server;
- ``pytest_runtest_setup`` / ``pytest_runtest_teardown``: apply a case's own ``**Setup:**`` (agents
  taken offline, added or changed) before it runs, and undo it afterwards.

It uses only the plugin's public API (``pytest_semantictest.api``). For compliance files elsewhere,
such as the WebAgents project's published ones in your own checkout of that project, load it as a
plugin from this repository's root: ``python -m pytest -p examples.compliance.conftest
path/to/webagents/compliance`` (``docs/compliance.md``).
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))

_state: dict[str, Any] = {"server": None, "url": None, "undo": []}


_TRANSPORT_AGENTS = {  # the example agent of each transport (and its file), unless its URL is set already
    "COMPLIANCE_A2A_JSONRPC_URL": ("a2a_sdk_agent", "a2a-jsonrpc.md"),
    "COMPLIANCE_A2A_WEBAGENTS_URL": ("a2a_webagents_agent", "a2a-webagents.md"),
    "COMPLIANCE_REALTIME_URL": ("realtime_agent", "realtime.md"),
}
INSTALL = "pip install -e '.[examples]' (in a checkout of pytest-semantictest)"
_transport_servers: list[tuple[str, Any]] = []
_cannot_run: dict[str, str] = {}
"""The example files whose agent needs a package that is not installed: why their cases are skipped."""


def _start_transport_agents() -> None:
    """The A2A (a2a-sdk and WebAgents dialects) and Realtime example agents, for the files naming them."""
    import importlib

    for variable, (module, file) in _TRANSPORT_AGENTS.items():
        if os.environ.get(variable) or os.environ.get(
            variable.replace("_JSONRPC", "").replace("_WEBAGENTS", "")
        ):
            continue
        try:
            agent = importlib.import_module(module)
        except (
            ModuleNotFoundError
        ) as exc:  # an optional dependency of the examples: skip, saying how to get it
            _cannot_run[file] = f"the example agent needs {exc.name}, which is not installed: {INSTALL}"
            continue
        server, url = agent.start_server(0)
        os.environ[variable] = url
        _transport_servers.append((variable, server))


def pytest_configure(config: pytest.Config) -> None:
    from pytest_semantictest.api import option, set_default

    _start_transport_agents()
    if _state["server"] is not None or option(config, "compliance-base-url"):
        return
    if os.environ.get("COMPLIANCE_BASE_URL") or os.environ.get("BASE_URL"):
        return
    from compliance_server import placeholder_tokens, start_server

    server, url = start_server(0)
    _state.update(server=server, url=url)
    set_default(config, "compliance-base-url", url)
    set_default(config, "compliance-value", [f"{k}={v}" for k, v in placeholder_tokens(url).items()])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        why = _cannot_run.get(item.path.name)
        if why is not None and item.path.parent == Path(__file__).parent:
            item.add_marker(pytest.mark.skip(reason=why))


def pytest_unconfigure(config: pytest.Config) -> None:
    while _transport_servers:
        variable, transport_server = _transport_servers.pop()
        transport_server.shutdown()
        os.environ.pop(variable, None)
    server = _state["server"]
    if server is not None:
        server.shutdown()
        _state.update(server=None, url=None)


def _call(method: str, path: str, data: Any = None) -> Any:
    request = urllib.request.Request(  # noqa: S310
        _state["url"] + path,
        method=method,
        data=None if data is None else json.dumps(data).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def _ours(base_url: str) -> bool:
    return _state["url"] is not None and base_url.rstrip("/") == _state["url"]


def pytest_semantictest_compliance_setup(config: pytest.Config, setup: Any) -> None:
    """Create (or replace) the file's agents on the example server, as the file describes them."""
    if not _ours(setup.base_url):
        return
    for agent in setup.agents:
        config_ = agent.config()
        _call(
            "PUT",
            f"/agents/{agent.name}",
            {k: config_[k] for k in ("instructions", "tools", "handoffs", "skills", "extra")},
        )


def _server_name(name: str) -> str:
    agents = (_call("GET", "/agents") or {}).get("agents", [])
    return next((a["name"] for a in agents if a["name"].lower() == name.lower()), name)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Apply the case's own setup: agents offline, added or changed (undone in teardown)."""
    from pytest_semantictest.api import compliance_base_url, compliance_case, dry_run

    parsed = compliance_case(item)
    if parsed is None or parsed.setup is None or _state["url"] is None or dry_run(item.config):
        return
    if not _ours(compliance_base_url(item) or ""):
        return
    changes: dict[str, dict[str, Any]] = {}
    for agent in parsed.setup.agents:
        name = _server_name(agent.name)
        current = changes.get(name) or _call("GET", f"/agents/{name}") or {"name": name}
        fields = agent.config()
        update = {k: fields[k] for k in ("instructions", "tools", "handoffs", "skills") if fields[k]}
        changes[name] = {**current, **update}
    for name in parsed.setup.unavailable:
        name = _server_name(name)
        current = changes.get(name) or _call("GET", f"/agents/{name}") or {"name": name}
        changes[name] = {**current, "available": False}
    for name, config in changes.items():
        _state["undo"].append((name, _call("GET", f"/agents/{name}")))
        _call("PUT", f"/agents/{name}", config)


def pytest_runtest_teardown(item: pytest.Item) -> None:
    while _state["undo"]:
        name, before = _state["undo"].pop()
        if before is None:
            _call("DELETE", f"/agents/{name}")
        else:
            _call("PUT", f"/agents/{name}", before)
