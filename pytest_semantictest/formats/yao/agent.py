"""Which agent a Yao file's cases talk to: a sidecar ``<name>.agent.yaml``, else the options.

The sidecar (most specific) wins; otherwise ``--semantictest-agent-endpoint`` (also ``-start``,
``-health``) and ``--semantictest-agent-protocol`` or their ini keys. No agent at all is not a
spec error: every case of the file is skipped with that reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ...agents.chat import DEFAULT_AWAITING_TOOLS, ChatTarget
from ...agents.config import (
    AgentConfig,
    expand_env,
    without_extensions,
)
from ...agents.errors import AgentConfigError
from ...errors import Problem, SpecError
from ...json_types import JSONObject, JSONValue
from ...model import AgentRequirement
from ...redact import used_secrets
from ..detect import CollectContext
from .models import AgentFileSpec

SIDECAR_SUFFIX = ".agent.yaml"
NO_AGENT = (
    "no agent to test: set --semantictest-agent-endpoint (or ini semantictest_agent_endpoint), "
    "or write {sidecar} next to the file"
)
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")  # a key or an index of a place like ``body.items[0].id``


@dataclass
class AgentChoice:
    """The target and what the suite must acquire, or why there is no agent."""

    target: ChatTarget | None
    requirement: AgentRequirement | None
    missing: str | None = None
    spans: str | None = None
    """How tool calls are read from spans: ``otel`` (``calls_from: otel``), ``auto`` (no ``calls_from``)."""


def sidecar_path(path: Path) -> Path:
    """``flows_test.jsonl`` -> ``flows_test.agent.yaml``."""
    return path.with_name(
        path.name[: -len(path.suffix)] + SIDECAR_SUFFIX if path.suffix else path.name + SIDECAR_SUFFIX
    )


def choose_agent(path: Path, ctx: CollectContext) -> AgentChoice:
    """The agent for the cases of ``path``; raises SpecError for a broken sidecar."""
    sidecar = sidecar_path(path)
    if sidecar.is_file():
        spec, line = _load_sidecar(sidecar)
        return build(spec.model_dump(exclude_none=True), sidecar.parent, ctx, sidecar, spec, line)
    endpoint = ctx.text("agent-endpoint")
    if not endpoint:
        return AgentChoice(None, None, NO_AGENT.format(sidecar=sidecar.name))
    raw: JSONObject = {"endpoint": endpoint, "protocol": ctx.text("agent-protocol") or "openai"}
    for name in ("start", "health"):
        value = ctx.text(f"agent-{name}")
        if value:
            raw[name] = value
    try:
        spec = AgentFileSpec.model_validate(raw)
    except ValidationError as exc:
        raise SpecError(str(path), [Problem("", f"agent options: {exc.errors()[0]['msg']}")]) from None
    ctx.option_agent_users.append(str(path))
    return build(raw, ctx.folder("agent-start"), ctx, path, spec)


def read_sidecar(sidecar: Path) -> AgentFileSpec:
    """The validated sidecar (``${ENV}`` not expanded yet); raises SpecError."""
    return _load_sidecar(sidecar)[0]


def _load_sidecar(sidecar: Path) -> tuple[AgentFileSpec, Callable[[Sequence[str | int]], int | None]]:
    """The validated sidecar and the line where each of its keys is written."""
    from ...problems import problems_from
    from ..source import read_spec
    from ..yamlsource import YamlError, load_yaml
    from .reader import MAX_BYTES

    text = read_spec(sidecar, MAX_BYTES)
    try:
        source = load_yaml(text)
    except YamlError as exc:
        raise SpecError(str(sidecar), [Problem(exc.place, str(exc), exc.line)]) from None
    problems = list(source.problems)
    if not isinstance(source.data, dict):
        raise SpecError(str(sidecar), [Problem("", "must be a mapping with at least 'endpoint'", 1)])
    try:
        spec = AgentFileSpec.model_validate(source.data)
    except ValidationError as exc:
        raise SpecError(str(sidecar), problems + problems_from(exc, AgentFileSpec, source.line)) from None
    if problems:
        raise SpecError(str(sidecar), problems)
    return spec, source.line


def _highbar_mapping(raw: Mapping[str, JSONValue]) -> JSONObject:
    keys = (
        "endpoint",
        "start",
        "health",
        "startup_timeout",
        "timeout",
        "settle_time",
        "response",
        "traces",
        "session",
        "correlate",
        "concurrency",
    )
    mapping = {k: raw[k] for k in keys if raw.get(k) is not None}
    request = dict(raw.get("request") or {})
    if raw.get("headers"):
        request["headers"] = {**(request.get("headers") or {}), **raw["headers"]}
    if request:
        mapping["request"] = request
    return mapping


def _expanded(
    raw: Mapping[str, JSONValue],
    env: Mapping[str, str],
    where: Path,
    line: Callable[[Sequence[str | int]], int | None] | None,
) -> tuple[JSONObject, list[str], dict[str, str]]:
    """``raw`` with ``${ENV}`` expanded in every key (as highbar does under ``agent``), the values used
    that are secrets, and their variables' names. A variable that is not set is a SpecError naming the
    key as written in the file (and its line)."""
    names: dict[str, str] = {}
    try:
        expanded, used = expand_env(without_extensions(raw), env, where="", names=names)
    except AgentConfigError as exc:
        place, _, message = str(exc).partition(": ")
        place = place.lstrip(".")
        loc = [int(i) if i else k for k, i in _SEGMENT.findall(place)]
        raise SpecError(str(where), [Problem(place, message, line(loc) if line else None)]) from None
    secrets = used_secrets(names, _headers(expanded))
    return expanded, secrets, {v: n for v, n in names.items() if v in secrets}


def _headers(agent: JSONObject) -> dict[str, JSONValue]:
    """The headers the agent is sent, written at the top or under ``request``."""
    request = agent.get("request")
    under_request = request.get("headers") if isinstance(request, Mapping) else None
    headers = [h for h in (agent.get("headers"), under_request) if isinstance(h, Mapping)]
    return {k: v for h in headers for k, v in h.items()}


def _calls_from(spec: AgentFileSpec) -> str:
    """Where the agent's tool calls are read: as written, else the reply of an OpenAI-protocol agent
    or of one without traces that is not started here, else its trace records."""
    if spec.calls_from:
        return spec.calls_from
    return "reply" if spec.protocol == "openai" or not spec.traces and not spec.start else "traces"


def _awaiting_input(spec: AgentFileSpec, ctx: CollectContext) -> tuple[tuple[str, ...], str | None]:
    """The tools and the reply pattern that say the agent waits for the user (the file's, else the
    options')."""
    waiting = spec.awaiting_input
    tools = (
        tuple(waiting.tools)
        if waiting and waiting.tools is not None
        else tuple(ctx.texts("awaiting-input-tools") or DEFAULT_AWAITING_TOOLS)
    )
    pattern = waiting.pattern if waiting and waiting.pattern else ctx.text("awaiting-input-pattern")
    return tools, pattern


def build(
    raw: Mapping[str, JSONValue],
    cwd: Path,
    ctx: CollectContext,
    where: Path,
    spec: AgentFileSpec,
    line: Callable[[Sequence[str | int]], int | None] | None = None,
) -> AgentChoice:
    from ...agents.keys import requirement

    expanded, secrets, names = _expanded(raw, ctx.env, where, line)
    try:
        spec = AgentFileSpec.model_validate(expanded)  # body, model, ... as sent (expanded)
    except ValidationError as exc:
        raise SpecError(
            str(where), [Problem("", f"after ${{ENV}} expansion: {exc.errors()[0]['msg']}")]
        ) from None
    mapping = _highbar_mapping(raw)  # AgentConfig expands these itself (once), with the same environment
    if spec.protocol == "openai":
        mapping["settle_time"] = 0
        mapping.pop("response", None)
    mapping.setdefault("settle_time", 0)
    logs = ctx.rootdir / (ctx.text("agent-logs") or ".semantictest/logs")
    try:
        config = AgentConfig.from_highbar(
            mapping,
            cwd=cwd,
            environ=ctx.env,
            log_dir=logs,
            name=where.name.split(".")[0],
            secrets=secrets,
            env_names=names,
        )
    except AgentConfigError as exc:
        raise SpecError(str(where), [Problem("", str(exc))]) from None
    calls_from = _calls_from(spec)
    # "auto" reads spans where the calls would be the reply's (an agent whose trace records give its
    # calls has nothing to read in spans: waiting for them cost each of its turns the whole wait)
    spans = (
        "otel" if calls_from == "otel" else "auto" if not spec.calls_from and calls_from == "reply" else None
    )
    calls_from = "reply" if calls_from == "otel" else calls_from  # (the turn reads the spans itself)
    tools, pattern = _awaiting_input(spec, ctx)
    needed = requirement(
        config, observe=spec.protocol == "highbar" and calls_from == "traces", calls_from=calls_from
    )
    target = ChatTarget(
        config,
        spec.protocol,
        needed.key,
        spec.model,
        dict(spec.body),
        tools,
        pattern,
        spec.description,
        tuple(spec.tools),
    )
    return AgentChoice(target, needed, spans=spans)
