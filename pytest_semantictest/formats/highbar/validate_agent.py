"""highbar validation of the ``agent:`` block (URLs, request, placeholders, session hooks, correlate)."""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Mapping
from urllib.parse import urlsplit

from ...agents.config import DEFAULT_BODY, start_line
from ...deadline import MAX_TIMEOUT_MS
from ...errors import clip
from ...json_types import JSONValue
from ...redact import used_secrets
from ...resolve import ENV_VAR
from .rules import (
    ALL_PLACEHOLDERS,
    HEADER_NAME,
    PLACEHOLDER,
    PLACEHOLDERS_HELP,
    RESPONSE_PATH,
    SETUP_PLACEHOLDERS,
    TEARDOWN_PLACEHOLDERS,
    Path_,
    is_int,
    shown_int,
    type_name,
    uses_placeholder,
)
from .validate_core import ValidatorCore


class AgentChecks(ValidatorCore):
    """The checks of the ``agent:`` block, a part of the validator."""

    def agent_(self, raw: JSONValue) -> None:  # noqa: C901
        A: Path_ = ("agent",)  # noqa: N806
        if not self.need(raw, dict, A, "must be a mapping"):
            return
        self.keys(raw, "agent", A)
        written = raw.get("start")
        raw = self.expand(raw, A)
        self.agent = raw

        if "endpoint" not in raw:
            self.err(A, "missing 'endpoint' (the URL each trigger is sent to)")
        elif self.text(raw, "endpoint"):
            self.url(raw["endpoint"], "endpoint")
        self.managed = "start" in raw
        if "start" in raw and self.text(raw, "start") and not self.tainted(A + ("start",)):
            try:  # split as it will be run: a secret's ${VAR} goes into its argument after the split
                shlex.split(
                    start_line(written, self.environ, self._secrets(raw))
                    if isinstance(written, str)
                    else raw["start"]
                )
            except ValueError as exc:
                self.err(A, f"start is not a valid command line: {exc}", A + ("start",))
        if raw.get("health") is not None:  # noqa: SIM102
            if self.need(raw["health"], str, A, "health must be a string (a URL)", A + ("health",)):
                self.url(raw["health"], "health")

        if "calls_from" in raw:
            value = raw["calls_from"]
            if value in ("traces", "reply", "otel"):
                self.calls_from = value
            else:
                self.err(
                    A,
                    f"calls_from must be 'traces', 'reply' or 'otel', got {clip(repr(value))}",
                    A + ("calls_from",),
                )
        if not self.managed and "startup_timeout" in raw:
            self.err(
                A,
                "startup_timeout only applies with 'start' (in attach mode the agent is not started)",
                A + ("startup_timeout",),
            )
        if "traces" in raw:
            self.has_traces = True
            if self.managed:
                self.err(
                    A,
                    "'traces' is for attach mode; with 'start', the trace file is created and passed "
                    "to the agent in HIGHBAR_TRACES_URL",
                    A + ("traces",),
                )
            elif self.calls_from == "reply":
                self.err(
                    A,
                    "'traces' is not read with calls_from: reply (tool calls come in the reply)",
                    A + ("traces",),
                )
            else:
                self.text(raw, "traces")

        has_session = "session" in raw
        if has_session:
            self.session(raw["session"])
        for key, default, minimum in (
            ("startup_timeout", 15000, 1),
            ("settle_time", 500, 0),
            ("timeout", 60000, 1),
        ):
            if key == "startup_timeout" and not self.managed:
                continue
            value = raw.get(key, default)
            if (
                self.need(value, int, A, f"{key} must be an integer (milliseconds)", A + (key,))
                and value < minimum
            ):
                qualifier = "a positive" if minimum > 0 else "a non-negative"
                self.err(
                    A, f"{key} must be {qualifier} integer (milliseconds), got {shown_int(value)}", A + (key,)
                )
            elif is_int(value) and value > MAX_TIMEOUT_MS:  # highbar: OverflowError; a day is plenty
                self.err(
                    A,
                    f"{key} is too long: at most {MAX_TIMEOUT_MS} ms (24 h), got {shown_int(value)}",
                    A + (key,),
                )
        self.request(raw.get("request"), has_session)
        if "response" in raw:
            value = raw["response"]
            if self.need(  # noqa: SIM102
                value, str, A, "response must be a string (a path like data.reply)", A + ("response",)
            ):
                if not RESPONSE_PATH.fullmatch(value):
                    self.err(
                        A,
                        "response must be a dotted path to the reply text, like data.reply or "
                        f"choices.0.message.content, got {clip(repr(value))}",
                        A + ("response",),
                    )
        if "correlate" in raw:
            self.correlate(raw["correlate"], has_session)

    def _secrets(self, agent: Mapping[str, JSONValue]) -> list[str]:
        """The values expanded under ``agent`` that are secrets (the rule ``AgentConfig`` applies)."""
        request = agent.get("request")
        headers = request.get("headers") if isinstance(request, Mapping) else None
        return used_secrets(self.env_names, headers if isinstance(headers, Mapping) else {})

    def expand(self, value: JSONValue, where: Path_) -> JSONValue:
        """Replace ``${NAME}`` from ``environ``, once (no re-expansion); record each value. As in highbar,
        every value under ``agent`` is expanded, ``x-`` keys' too: a variable that is not set there is
        a spec error as well."""
        if isinstance(value, dict):
            return {key: self.expand(item, where + (key,)) for key, item in value.items()}
        if isinstance(value, list):
            return [self.expand(item, where + (i,)) for i, item in enumerate(value)]
        if not isinstance(value, str) or "${" not in value:
            return value
        missing: list[str] = []

        def variable(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self.environ:
                if name not in missing:
                    missing.append(name)
                return match.group(0)
            found = self.environ[name]
            self.env_names[found] = name
            return found

        expanded = ENV_VAR.sub(variable, value)
        for name in missing:
            self.err(where, f"environment variable {name} is not set")
        if missing:
            self.unset.append(where)
        return expanded

    def text(self, raw: Mapping[str, JSONValue], key: str) -> bool:
        A: Path_ = ("agent",)  # noqa: N806
        value = raw[key]
        if not self.need(value, str, A, f"{key} must be a string", A + (key,)):
            return False
        if not value.strip():
            self.err(A, f"{key} cannot be empty", A + (key,))
            return False
        return True

    def url(self, url: str, key: str) -> None:
        A: Path_ = ("agent",)  # noqa: N806
        at = A + (key,)
        if self.tainted(at):
            return
        if "{{" in url:
            self.err(
                A,
                f"{key} cannot hold {{{{...}}}}: placeholders are not resolved in the URL; send the value "
                "in agent.request.body or agent.request.headers",
                at,
            )
            return
        try:
            parts = urlsplit(url)
        except ValueError as exc:  # "Invalid IPv6 URL"
            self.err(A, f"{key} must be an http:// or https:// URL, got {clip(repr(url), 100)} ({exc})", at)
            return
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self.err(A, f"{key} must be an http:// or https:// URL, got {clip(repr(url), 100)}", at)
            return
        try:
            parts.port  # noqa: B018 - parsing the port is the check
        except ValueError:
            self.err(A, f"{key} has an invalid port: {clip(repr(url), 100)}", at)

    def request(self, raw: JSONValue, has_session: bool) -> None:
        R: Path_ = ("agent", "request")  # noqa: N806
        if raw is None:
            return
        if not self.need(raw, dict, R, "must be a mapping"):
            return
        self.keys(raw, "request", R)
        method = raw.get("method", "POST")
        if self.need(method, str, R, "method must be a string", R + ("method",)):  # noqa: SIM102
            if method.upper() not in ("POST", "PUT", "PATCH") and not self.tainted(R + ("method",)):
                self.err(R, f"method must be POST, PUT or PATCH, got {clip(repr(method))}", R + ("method",))
        headers = raw.get("headers", {})
        if self.need(headers, dict, R, "headers must be a mapping", R + ("headers",)):
            H = R + ("headers",)  # noqa: N806
            for name, value in headers.items():
                if not HEADER_NAME.fullmatch(name):
                    self.err(H, f"{clip(repr(name))} is not a valid header name", H + (name,))
                if not isinstance(value, str):
                    self.err(
                        H, f"{clip(name)} must be a string (quote it), got {type_name(value)}", H + (name,)
                    )
                elif not self.tainted(H + (name,)) and (
                    value != value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value)
                ):
                    self.err(
                        H + (name,),
                        "the value has a control character or leading or trailing whitespace "
                        "(often a secret read with its newline); not shown",
                    )
                elif not value.isascii():  # HTTP clients send header values as ASCII
                    self.err(H + (name,), "the value must be ASCII text (an HTTP header); not shown")
            self.placeholders(headers, H, ALL_PLACEHOLDERS, has_session)
        body = raw.get("body", DEFAULT_BODY)
        B = R + ("body",)  # noqa: N806
        try:
            json.dumps(body, allow_nan=False)
        except ValueError as exc:
            self.err(B, f"must be JSON: {exc}")
        if self.placeholders(body, B, ALL_PLACEHOLDERS, has_session) and not uses_placeholder(
            body, "message"
        ):
            self.err(B, "never uses {{message}}, so the trigger would not be sent")

    def placeholders(
        self, value: JSONValue, where: Path_, allowed: frozenset[str], has_session: bool
    ) -> bool:
        """Report unknown placeholders and ones not available here; True when all are fine."""
        ok = True
        if isinstance(value, dict):
            for key, item in value.items():
                ok = self.placeholders(item, where + (key,), allowed, has_session) and ok
            return ok
        if isinstance(value, list):
            for i, item in enumerate(value):
                ok = self.placeholders(item, where + (i,), allowed, has_session) and ok
            return ok
        if not isinstance(value, str):
            return True
        for match in PLACEHOLDER.finditer(value):
            name = match.group(1)
            kind = "session" if name.startswith("session.") and len(name) > len("session.") else name
            shown = clip(match.group(0))
            if kind not in ALL_PLACEHOLDERS or name == "session":
                known = ["message", "test.id", "test.name", "session.<key>"]
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) if len(name) <= 100 else []
                hint = f" — did you mean '{{{{{close[0]}}}}}'?" if close else ""
                self.err(where, f"unknown placeholder '{shown}'{hint} {PLACEHOLDERS_HELP}")
            elif kind not in allowed:
                self.err(where, f"'{shown}' is not available here")
            elif kind == "session" and not has_session:
                self.err(where, f"'{shown}' needs agent.session, whose setup returns it")
            else:
                continue
            ok = False
        return ok

    def session(self, raw: JSONValue) -> None:
        S: Path_ = ("agent", "session")  # noqa: N806
        if not self.need(raw, dict, S, "must be a mapping with setup and/or teardown"):
            return
        self.keys(raw, "session", S)
        if "setup" not in raw and "teardown" not in raw:
            self.err(S, "needs setup or teardown")
        if "setup" in raw:
            self.hook(raw["setup"], S + ("setup",), SETUP_PLACEHOLDERS)
        if "teardown" in raw:
            self.hook(raw["teardown"], S + ("teardown",), TEARDOWN_PLACEHOLDERS)

    def hook(self, raw: JSONValue, where: Path_, allowed: frozenset[str]) -> None:
        if isinstance(raw, str):
            if self.tainted(where):
                return
            try:
                argv = shlex.split(raw)
            except ValueError as exc:
                self.err(where, f"not a valid command line: {exc}")
                return
            if not argv:
                self.err(where, "cannot be empty")
                return
            self.placeholders(raw, where, allowed, has_session=True)
            return
        if not self.need(raw, dict, where, "must be a command or {python: 'module:function'}"):
            return
        self.keys(raw, "python_hook", where)
        target = raw.get("python")
        if not self.need(target, str, where, "python must be 'module:function'", where + ("python",)):
            return
        module, colon, function = target.partition(":")
        if not colon or not module.strip() or not function.strip() or ":" in function:
            self.err(
                where, f"python must be 'module:function', got {clip(repr(target))}", where + ("python",)
            )

    def correlate(self, raw: JSONValue, has_session: bool) -> None:
        C: Path_ = ("agent", "correlate")  # noqa: N806
        if not isinstance(raw, dict) or not raw:
            self.err(
                ("agent",),
                "correlate must be a non-empty mapping of context key to value "
                '(e.g. {conversation_id: "{{session.conversation_id}}"})',
                C,
            )
            return
        for key, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                self.err(C + (key,), "must be text, a number or a placeholder")
        self.placeholders(raw, C, ALL_PLACEHOLDERS, has_session)

    # suites and tests
