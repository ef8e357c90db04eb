"""How to reach (and maybe start) an agent: ``AgentConfig``, ``${ENV}`` expansion, its secrets (masked
by ``redact.Redactor``: ``AgentConfig.redactor``)."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..json_types import JSONObject, JSONValue
from ..redact import Redactor, used_secrets
from ..resolve import ENV_VAR
from .errors import AgentConfigError

EXTENSION_PREFIX = "x-"
DEFAULT_BODY: JSONObject = {"message": "{{message}}"}
DEFAULT_CORRELATE: JSONObject = {"test": "{{test.id}}"}

Hook = str | Mapping[str, str] | None
"""A session hook: a command line, or ``{"python": "module:function"}``."""


@dataclass
class AgentConfig:
    """Everything the service needs about one agent; times in milliseconds like highbar.

    ``start`` set: managed mode (we start and stop it). ``start`` None: attach mode.
    """

    endpoint: str
    start: str | None = None
    """The command line as shown: a secret's ``${VAR}`` kept as written when ``start_argv`` is given."""
    start_argv: list[str] | None = None
    """The command run: ``start`` split first, then each secret's ``${VAR}`` expanded in its argument (a
    secret with spaces or quotes stays one argument, intact). None: ``start`` split as it is."""
    health: str | None = None
    startup_timeout_ms: int = 15000
    settle_time_ms: int = 500
    timeout_ms: int = 60000
    request_method: str = "POST"
    request_headers: dict[str, str] = field(default_factory=dict)
    request_body: JSONValue = field(default_factory=lambda: dict(DEFAULT_BODY))
    response_path: str | None = None
    traces: str | None = None
    session_setup: Hook = None
    session_teardown: Hook = None
    correlate: JSONObject = field(default_factory=lambda: dict(DEFAULT_CORRELATE))
    cwd: Path = field(default_factory=Path.cwd)
    log_dir: Path = field(default_factory=lambda: Path(".semantictest") / "logs")
    env: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    env_names: dict[str, str] = field(default_factory=dict)  # secret value -> its variable's name
    name: str = "agent"
    stop_grace_s: float = 5.0
    hello_timeout_s: float = 2.0
    traces_dir: Path | None = None
    keep_traces: bool = False
    concurrency: int | None = None
    """How many tests may talk to the agent at once (None: the default, lookahead/rules.py)."""

    @property
    def managed(self) -> bool:
        """Whether we start the agent (``start`` given) rather than attach to it."""
        return self.start is not None

    def traces_path(self) -> Path | None:
        """The attach-mode trace file, relative paths taken from ``cwd``."""
        if self.traces is None:
            return None
        path = Path(self.traces)
        return path if path.is_absolute() else self.cwd / path

    def log_path_base(self) -> Path:
        """``log_dir`` resolved against ``cwd``."""
        return self.log_dir if self.log_dir.is_absolute() else self.cwd / self.log_dir

    @property
    def redactor(self) -> Redactor:
        """The session redactor's kind for this config's secrets: each as ``${NAME}`` when its variable
        is known, else ``***``, in any encoding. Mask what an error quotes with ``redactor.text``."""
        secrets = set(self.secrets)
        return Redactor(self.secrets, {v: n for v, n in self.env_names.items() if v in secrets})

    @classmethod
    def from_highbar(
        cls,
        agent: Mapping[str, JSONValue],
        *,
        cwd: Path | None = None,
        environ: Mapping[str, str] | None = None,
        **overrides: object,
    ) -> AgentConfig:
        """A config from a (validated) highbar ``agent:`` mapping, ``${ENV}`` expanded.

        ``x-`` keys are dropped where highbar's schema has keys (agent, request, session and
        its hooks), never inside the request body or headers. Raises ``AgentConfigError``
        for a variable that is not set.
        """
        names: dict[str, str] = {}
        raw, used = expand_env(without_extensions(agent), environ, where="agent", names=names)
        request = raw.get("request") or {}
        session = raw.get("session") or {}
        secrets = used_secrets(names, dict(request.get("headers") or {}))
        start, argv = _start(without_extensions(agent).get("start"), raw.get("start"), environ, secrets)
        values: JSONObject = {
            "endpoint": raw["endpoint"],
            "start": start,
            "start_argv": argv,
            "health": raw.get("health"),
            "startup_timeout_ms": raw.get("startup_timeout", 15000),
            "settle_time_ms": raw.get("settle_time", 500),
            "timeout_ms": raw.get("timeout", 60000),
            "request_method": str(request.get("method", "POST")).upper(),
            "request_headers": dict(request.get("headers") or {}),
            "request_body": request.get("body", dict(DEFAULT_BODY)),
            "response_path": raw.get("response"),
            "traces": raw.get("traces"),
            "session_setup": session.get("setup"),
            "session_teardown": session.get("teardown"),
            "correlate": dict(raw.get("correlate") or DEFAULT_CORRELATE),
            "concurrency": raw.get("concurrency"),
        }
        # secret by the variable's name or by the header it reached, not merely for coming from ${ENV}
        values["secrets"] = secrets
        values["env_names"] = {v: n for v, n in names.items() if v in values["secrets"]}
        if cwd is not None:
            values["cwd"] = cwd
        values.update(overrides)
        return cls(**values)


def _start(
    written: JSONValue, expanded: JSONValue, environ: Mapping[str, str] | None, secrets: list[str]
) -> tuple[JSONValue, list[str] | None]:
    """The start command to show and the one to run. An ordinary ``${VAR}`` is expanded into the line
    before it is split (as highbar does: ``${AGENT_CMD}`` may be a whole command); a secret's (by its
    variable's name or where it goes) after, into its argument, so it reaches the agent intact and the
    line shown keeps ``${VAR}``. A line that does not split is left to the process to report."""
    env = os.environ if environ is None else environ
    if not isinstance(written, str) or not any(
        env.get(m.group(1)) in secrets for m in ENV_VAR.finditer(written)
    ):
        return expanded, None
    line = start_line(written, env, secrets)
    try:
        tokens = shlex.split(line)
    except ValueError:
        return line, None
    return line, [expand_env(token, env, where="agent.start")[0] for token in tokens]


def start_line(written: str, env: Mapping[str, str], secrets: Iterable[str]) -> str:
    """A start command with each ordinary ``${VAR}`` put in and each secret's kept as written: the
    line that is split into arguments, and the one shown (an unset variable is left as written)."""
    secret = set(secrets)

    def variable(match: re.Match[str]) -> str:
        value = env.get(match.group(1))
        return match.group(0) if value is None or value in secret else value

    return ENV_VAR.sub(variable, written)


def expand_env(
    value: JSONValue,
    environ: Mapping[str, str] | None = None,
    *,
    where: str = "agent",
    names: dict[str, str] | None = None,
) -> tuple[JSONValue, list[str]]:
    """``value`` with ``${NAME}`` replaced anywhere (dict values, lists, strings), once.

    Returns the expanded value and the values used, for masking (``names``, when given,
    receives value -> variable name). A missing variable raises ``AgentConfigError``
    naming it and where it was used.
    """
    env = os.environ if environ is None else environ
    used: list[str] = []

    def walk(item: JSONValue, place: str) -> JSONValue:
        if isinstance(item, dict):
            return {key: walk(sub, f"{place}.{key}") for key, sub in item.items()}
        if isinstance(item, list):
            return [walk(sub, f"{place}[{i}]") for i, sub in enumerate(item)]
        if not isinstance(item, str) or "${" not in item:
            return item

        def variable(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise AgentConfigError(f"{place}: environment variable {name} is not set")
            if env[name] not in used:
                used.append(env[name])
            if names is not None:
                names[env[name]] = name
            return env[name]

        return ENV_VAR.sub(variable, item)

    return walk(value, where), used


def without_extensions(agent: Mapping[str, JSONValue]) -> JSONObject:
    """The agent mapping without ``x-`` keys at the levels highbar's schema defines."""

    def strip(mapping: JSONValue) -> JSONValue:
        if not isinstance(mapping, Mapping):
            return mapping
        return {k: v for k, v in mapping.items() if not str(k).startswith(EXTENSION_PREFIX)}

    raw: JSONObject = strip(agent)
    if isinstance(raw.get("request"), Mapping):
        raw["request"] = strip(raw["request"])
    if isinstance(raw.get("session"), Mapping):
        session = strip(raw["session"])
        raw["session"] = {k: strip(v) for k, v in session.items()}
    return raw
