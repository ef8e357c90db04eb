"""A server that serves each agent under its own path (the WebAgents SDK: ``/<agent>/chat/completions``,
``/<agent>/.well-known/agent-card.json``, ``/<agent>/realtime``), reached by files written for one
endpoint (``POST /chat/completions`` with ``"model": "<agent>"``).

``COMPLIANCE_AGENT_URL`` is a URL with ``{agent}`` in it (``http://127.0.0.1:8000/{agent}``); each
case's requests then go to that URL for the case's agent, in place of the file's base URL: the
``model`` the request names, else the agent its ``**Input:**`` is sent to, else the first agent of the
case's or the file's setup. An A2A case's agent card and endpoint, and a realtime case's socket,
follow the same base. A request written for the agent's own path already (``POST
/agents/echo-agent/chat/completions``) is sent as written.
"""

from __future__ import annotations

from urllib.parse import quote

from ...json_types import JSONObject
from .models import Setup, TestCase

AGENT_URL_VARIABLE = "COMPLIANCE_AGENT_URL"


def agent_of(config: JSONObject, case: TestCase, setup: Setup) -> str | None:
    """The agent a case's request is for."""
    body = config.get("body")
    if isinstance(body, dict) and isinstance(body.get("model"), str) and body["model"]:
        return str(body["model"])
    if isinstance(config.get("agent"), str) and config["agent"]:
        return str(config["agent"])
    agents = (list(case.setup.agents) if case.setup else []) + list(setup.agents)
    return agents[0].name if agents else None


def on_agent_path(config: JSONObject, base: str, template: str, case: TestCase, setup: Setup) -> JSONObject:
    """``config`` with its URLs moved from ``base`` to the template's URL for the case's agent (unchanged
    when the case names no agent)."""
    agent = agent_of(config, case, setup)
    if agent is None:
        return config
    own = template.replace("{agent}", quote(agent, safe="")).rstrip("/")
    base = base.rstrip("/")

    def moved(url: object) -> object:
        if not isinstance(url, str) or url.startswith(own + "/") or not url.startswith(base):
            return url  # written for the agent's own path already, or for another server
        return own + url[len(base) :]

    out = {**config}
    for key in ("url", "base_url"):
        if key in out:
            out[key] = moved(out[key])
    follow_up = out.get("follow_up")
    if isinstance(follow_up, dict):
        out["follow_up"] = {**follow_up, "url": moved(follow_up.get("url"))}
    return out
