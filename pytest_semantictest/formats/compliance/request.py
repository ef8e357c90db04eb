"""A case's request, ready to send: variables chosen, placeholders filled, the body read.

- ``{{name}}``: a ``**Variables:**`` value; ``One of [...]`` is chosen by a random generator
  seeded with the test id (the same choice every run), ``From setup`` comes from ``## Setup``.
- ``{name}``: a value given with ``--semantictest-compliance-value name=...``, the environment
  variable ``NAME`` (or ``name``), or a ``### Environment`` default; in the path, in header
  values, and as a whole JSON string in the body. A placeholder with no value is missing
  configuration confined to its case (``Built.missing``): that case ERRORs, the others run.
- ``[/* get_weather tool */]``: the matching ``### Tool Definitions`` (``[/* tools */]``: all).
Anything else unresolvable (a variable or tool nothing defines, a body that is not JSON) is a
problem of the file, naming its line.

A ``**Behavior:**`` saying the client disconnects after N chunks adds ``disconnect_after: N`` and
``follow_up`` (the same request with ``"stream": false``, sent once the client went away) to the
request config; see :mod:`pytest_semantictest.blocks.chat_request`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...errors import Problem, clip, did_you_mean
from ...json_types import JSONObject, JSONValue
from ..jsonsource import JsonError, load_json
from .cases import user_sends
from .models import Request, Setup, TestCase, tool_name
from .prose import disconnect_after
from .strict_yaml import wants_stream

CHAT_PATH = "/chat/completions"
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)\}(?!\})")
_TOOLS = re.compile(r"\[\s*/\*(.*?)\*/\s*\]", re.S)
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_AT = re.compile(r"^invalid JSON(?: at line \d+ column \d+)?: ")
_AGENT_SETUP_NAMES = ("agent", "agent_name", "model", "agent_id")


@dataclass
class Built:
    """The request (ChatRequest config) and the variables chosen for it."""

    config: JSONObject | None = None
    variables: JSONObject = field(default_factory=dict)
    skip: str | None = None
    missing: list[Problem] = field(default_factory=list)
    """``{placeholder}`` values nobody gave (one problem per name): the case cannot be sent."""


class _Builder:
    def __init__(
        self,
        case: TestCase,
        setup: Setup,
        values: Mapping[str, str],
        env: Mapping[str, str],
        where: str,
        seed: str,
        need_values: bool = True,
        transport: Mapping[str, str | None] | None = None,
    ) -> None:
        self.case, self.setup, self.values, self.env = case, setup, values, env
        self.transport = transport  # a2a/realtime: {"transport", "dialect", "base_url"}
        self.where, self.seed, self.need_values = where, seed, need_values
        self.problems: list[Problem] = []
        self.missing: dict[str, Problem] = {}
        self.variables: JSONObject = {}

    def problem(self, message: str, line: int | None) -> None:
        self.problems.append(Problem(self.where, message, line))

    # -- variables ------------------------------------------------------------------------------

    def choose_variables(self) -> None:
        for variable in self.case.variables:
            if variable.kind == "one_of":
                rng = random.Random(f"{self.seed}::{variable.name}")
                self.variables[variable.name] = rng.choice(variable.choices)
            elif variable.kind == "literal":
                self.variables[variable.name] = variable.choices[0]
            else:
                value = self.from_setup(variable.name)
                if value is None:
                    self.problem(
                        f"variable '{variable.name}' is 'From setup' but ## Setup has no value for it "
                        f"(it gives {', '.join(self.setup_names()) or 'nothing'})",
                        variable.line,
                    )
                else:
                    self.variables[variable.name] = value

    def from_setup(self, name: str) -> str | list[str] | None:
        if name.lower() in _AGENT_SETUP_NAMES and self.setup.agents:
            return self.setup.agents[0].name
        env = self.setup.environment.get(name) or self.setup.environment.get(name.upper())
        if env is not None:
            return self.lookup(env.name)
        agent = self.setup.agents[0] if self.setup.agents else None
        return getattr(agent, name, None) if agent is not None and name in ("instructions", "tools") else None

    def setup_names(self) -> list[str]:
        return ([*_AGENT_SETUP_NAMES] if self.setup.agents else []) + list(self.setup.environment)

    def fill_variables(self, text: str, line: int | None, in_json: bool = False) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self.variables:
                if not any(v.name == name for v in self.case.variables):
                    self.problem(
                        f"{{{{{name}}}}} names no variable: add it under **Variables:** "
                        f"(- `{name}`: One of [...]){did_you_mean(name, self.variables)}",
                        line,
                    )
                return match.group(0)
            found = self.variables[name]
            shown = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)
            if not in_json:
                return shown
            if _inside_string(text, match.start()):  # "Say {{greeting}}" -> the text, JSON-escaped
                return json.dumps(shown, ensure_ascii=False)[1:-1]
            return json.dumps(found, ensure_ascii=False)  # "n": {{count}} -> a JSON value

        return _VARIABLE.sub(value, text)

    # -- {placeholders} ---------------------------------------------------------------------------

    def lookup(self, name: str) -> str | None:
        for source in (self.values.get(name), self.env.get(name.upper()), self.env.get(name)):
            if source is not None and source != "":
                return source
        env = self.setup.environment.get(name) or self.setup.environment.get(name.upper())
        return env.default if env is not None else None

    def fill_placeholders(self, text: str, line: int | None) -> str:
        def value(match: re.Match[str]) -> str:
            found = self.lookup(match.group(1))
            if found is None and not self.need_values:
                return match.group(0)
            if found is None:
                name = match.group(1)
                self.missing.setdefault(
                    name,
                    Problem(
                        self.where,
                        (
                            f"placeholder {{{name}}} has no value: set the environment variable {name.upper()} or "
                            f"pass --semantictest-compliance-value {name}=..."
                        ),
                        line,
                    ),
                )
                return match.group(0)
            return found

        return _PLACEHOLDER.sub(value, text)

    # -- tool placeholders --------------------------------------------------------------------------

    def fill_tools(self, text: str, line: int | None) -> str:
        def value(match: re.Match[str]) -> str:
            return json.dumps(self.tools(match.group(1), line), ensure_ascii=False)

        text = _TOOLS.sub(value, text)
        if _COMMENT.search(text):
            self.problem(
                "a /* comment */ in a JSON body is only understood as a tool placeholder, written "
                "[/* get_weather tool */]",
                line,
            )
        return text

    def tools(self, words: str, line: int | None) -> list[JSONObject]:
        defined = {tool_name(t): t for t in self.setup.tool_definitions}
        if not defined:
            self.problem(
                f"the tool placeholder [/*{words}*/] needs a '### Tool Definitions' block in ## Setup", line
            )
            return []
        names = [
            re.sub(r"\s+tools?$|^tools?$", "", part.strip().strip("`")).strip()
            for part in re.split(r",|\band\b", words)
        ]
        names = [n for n in names if n and n.lower() not in ("all", "the")]
        if not names:
            return list(defined.values())
        out = []
        for name in names:
            if name in defined:
                out.append(defined[name])
            else:
                self.problem(
                    f"the tool placeholder [/*{words}*/] names '{clip(name)}', which ### Tool Definitions "
                    f"does not define{did_you_mean(name, defined)} (defined: {', '.join(defined)})",
                    line,
                )
        return out

    # -- the request ----------------------------------------------------------------------------

    def build(self, base_url: str, api_key: str | None, timeout_ms: int) -> Built:
        self.choose_variables()
        self.refuse_disconnect_off_completions()
        request = self.case.request
        if request is None:
            return self.chat(base_url, api_key, timeout_ms)
        path = self.fill_placeholders(self.fill_variables(request.path, request.line), request.line)
        headers: dict[str, str] = {}
        for name, raw, line in request.headers:
            headers[name] = self.fill_placeholders(self.fill_variables(raw, line), line)
        body = self.request_body(request, headers)
        if api_key and not request.no_auth and not _has(headers, "authorization"):
            headers["Authorization"] = f"Bearer {api_key}"
        config = {
            "method": request.method,
            "url": _url(base_url, path),
            "headers": headers,
            "timeout": timeout_ms,
        }
        if body is not None:
            config["body"] = body
        if self.transport is not None:
            if self.transport["transport"] == "realtime":
                self.realtime_request(request.method, body, request.line)
            return Built({**self.transport, **config}, dict(self.variables))
        return Built(self.disconnect(config), dict(self.variables))

    def refuse_disconnect_off_completions(self) -> None:
        """A client that disconnects after N chunks is performed on the completions transport only."""
        if self.transport is not None and disconnect_after(self.case.behavior) is not None:
            self.problem(
                f"a client that disconnects after N chunks is performed for transport: completions only, "
                f"not {self.transport['transport']}: say it in **Notes:** for the judge instead",
                self.case.line,
            )

    def request_body(self, request: Request, headers: dict[str, str]) -> JSONValue:
        """The body as sent (a streaming request's object gets ``stream: true``); invalid JSON text is
        sent as ``application/json`` unless the request names its content type."""
        if request.body is None and not request.invalid_json:
            return None
        body = self.body(request.body, request.body_language, request.body_line, request.invalid_json)
        if isinstance(body, dict) and request.streaming:
            body.setdefault("stream", True)
        if isinstance(body, str) and request.invalid_json and not _has(headers, "content-type"):
            headers["Content-Type"] = "application/json"
        return body

    def realtime_request(self, method: str, body: JSONValue, line: int | None) -> None:
        """A realtime request opens a WebSocket (an HTTP GET upgraded) and sends the body's client events."""
        if method != "GET":
            self.problem(f"a realtime request opens a WebSocket: write GET `/realtime`, not {method}", line)
        if not (isinstance(body, list) and body and all(isinstance(e, dict) and "type" in e for e in body)):
            self.problem(
                'a realtime request\'s body is a JSON array of client events, each with a "type" '
                "(conversation.item.create, response.create, ...)",
                line,
            )

    def disconnect(self, config: JSONObject) -> JSONObject:
        """``disconnect_after`` and the ``follow_up`` request when the behaviour says the client goes away."""
        count = disconnect_after(self.case.behavior)
        if count is None:
            return config
        follow_up: JSONObject = {
            key: config[key] for key in ("method", "url", "headers", "timeout") if key in config
        }
        body = config.get("body")
        if isinstance(body, dict):  # stream_options is only allowed with stream: true
            follow_up["body"] = {**{k: v for k, v in body.items() if k != "stream_options"}, "stream": False}
        elif body is not None:
            follow_up["body"] = body
        return {**config, "disconnect_after": count, "follow_up": follow_up}

    def body(self, text: str | None, language: str, line: int | None, invalid: bool) -> JSONValue:
        if text is None:  # "with invalid JSON" and no body written: send some
            return "{invalid json"
        text = self.fill_variables(text, line, in_json=not invalid and language in ("json", ""))
        if invalid or language not in ("json", "", "jsonc"):
            return text
        resolved = self.fill_tools(text, line)
        try:  # load_json: nesting deeper than MAX_DEPTH is a problem here, not a RecursionError later
            data = load_json(resolved).data if resolved.strip() else json.loads(resolved)
        except (ValueError, RecursionError) as exc:
            if language in ("json", "jsonc"):
                self.invalid_body(exc, line)
            return text
        return self.json_placeholders(data, line)

    def invalid_body(self, exc: ValueError | RecursionError, line: int | None) -> None:
        """A JSON body that does not parse (our JsonError, or json's own error), at its file line."""
        at: int = getattr(exc, "line", None) or getattr(exc, "lineno", None) or 1
        where = (line or 0) + at - 1
        why = _AT.sub("", str(exc)) if isinstance(exc, JsonError) else getattr(exc, "msg", str(exc))
        self.problem(
            f"the request body is not valid JSON: {why} (write 'with invalid JSON' after the path "
            "to send it anyway)",
            where,
        )

    def json_placeholders(self, data: JSONValue, line: int | None) -> JSONValue:
        """``"{valid_jwt_token}"`` as a whole JSON string is filled (text that merely has braces is not)."""
        if isinstance(data, str):
            whole = _PLACEHOLDER.fullmatch(data)
            return self.fill_placeholders(data, line) if whole else data
        if isinstance(data, dict):
            return {k: self.json_placeholders(v, line) for k, v in data.items()}
        if isinstance(data, list):
            return [self.json_placeholders(v, line) for v in data]
        return data

    def chat(self, base_url: str, api_key: str | None, timeout_ms: int) -> Built:
        """``**Input:**`` (or a flow's "User sends ... to ...") as a chat completion request."""
        source = self.case.input
        agent: str | None
        if source is not None:
            agent, messages = source.agent, [m.model_dump() for m in source.messages]
        else:
            agent, messages = self.flow_request()
            if agent is None:
                return Built(skip="the case has no **Request:** or **Input:** (nothing to send)")
        body: JSONObject = {
            "model": self.fill_variables(agent, None),
            "messages": [{**m, "content": self.fill_variables(m["content"], None)} for m in messages],
        }
        if self.transport is not None:  # the transport's client turns the messages into its own requests
            headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
            return Built(
                {
                    **self.transport,
                    "agent": body["model"],
                    "messages": body["messages"],
                    "headers": headers,
                    "timeout": timeout_ms,
                },
                dict(self.variables),
            )
        if wants_stream(self.case.strict) or disconnect_after(self.case.behavior) is not None:
            body["stream"] = True
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        config = {
            "method": "POST",
            "url": _url(base_url, CHAT_PATH),
            "headers": headers,
            "body": body,
            "timeout": timeout_ms,
        }
        return Built(self.disconnect(config), dict(self.variables))

    def flow_request(self) -> tuple[str | None, list[dict[str, str]]]:
        """A flow that starts with ``User sends "x" to `agent```, or names an agent of the setup."""
        if not self.case.flow:
            return None, []
        sends = user_sends(self.case.flow[0].text)
        if sends:
            return sends[1], [{"role": "user", "content": sends[0]}]
        names = {a.name.lower(): a.name for a in self.setup.agents}
        for step in self.case.flow:
            for word in re.findall(r"[\w.-]+", step.text):
                if word.lower() in names:
                    return names[word.lower()], [{"role": "user", "content": self.case.title}]
        return None, []


def _inside_string(text: str, index: int) -> bool:
    """Whether ``index`` of a JSON-ish text is inside a string literal."""
    inside = escaped = False
    for char in text[:index]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            inside = not inside
    return inside


def _has(headers: Mapping[str, str], name: str) -> bool:
    return any(k.lower() == name for k in headers)


def _url(base_url: str, path: str) -> str:
    if re.match(r"^https?://", path):
        return path
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def build_request(
    case: TestCase,
    setup: Setup,
    *,
    base_url: str,
    api_key: str | None,
    timeout_ms: int,
    values: Mapping[str, str],
    env: Mapping[str, str],
    where: str,
    seed: str,
    need_values: bool = True,
    transport: Mapping[str, str | None] | None = None,
) -> tuple[Built, list[Problem]]:
    """The case's request; ``transport`` (a2a, realtime: its name, dialect and base URL) makes it a
    TransportRequest config instead of a chat completions request."""
    builder = _Builder(case, setup, values, env, where, seed, need_values, transport)
    built = builder.build(base_url, api_key, timeout_ms)
    built.missing = list(builder.missing.values())
    return built, builder.problems
