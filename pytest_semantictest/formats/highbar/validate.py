"""Read and strictly validate a highbar spec, the way highbar 0.1.0rc3 does, all problems at once.

Each problem is one path-addressed line in highbar's words, e.g.
``suites[0].tests[1].expect: unknown key 'orderd' — did you mean 'ordered'?``, with the
source line of the offending key or value. highbar stops at the first problem; this
reports every problem of the file (it stops only below a node that has the wrong type).

Where this is stricter than highbar (mostly specs highbar would accept and then misjudge or
crash on at run time): ``{{...}}`` in a trigger must be a well-formed ``{{previous...}}``
template and needs an earlier turn; ``start`` must be a valid command line; header names
must be HTTP tokens and values ASCII; the body must be JSON (no NaN); ``{{session}}`` alone
is not a placeholder; an ``error`` matcher cannot hold ``{{``; a broken IPv6 URL is a spec
error (highbar crashes); YAML keys that are not text and tags other than the plain ones are
errors (timestamps stay text).
Where it is more lenient: ``${VAR}`` inside an ``x-`` key under ``agent`` is not expanded
(highbar expands, and fails on a missing variable there).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from pydantic import ValidationError

from ...errors import Problem, SpecError, clip, did_you_mean
from ..jsonsource import place as _place
from ..validation import problems_from
from ..yamlsource import YamlError, YamlSource, load_yaml
from . import models
from .models import ALLOWED_KEYS, MATCHER_KEYS, REGEX_KEYS
from .build import SECRET_MIN_LENGTH, Builder, clean
from .spec import TRACE_FIELDS, HighbarSpec, Template, resolve_min_pass

Path_ = tuple[str | int, ...]

MAX_BYTES = 20 * 1024 * 1024
EXTENSION_PREFIX = "x-"
MATCHERS_TEXT = ", ".join(sorted(MATCHER_KEYS))

_ENV_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)
_SEGMENT = re.compile(r"(\w+)((?:\[\d+\])*)")
_RESPONSE_PATH = re.compile(r"[^.\s]+(?:\.[^.\s]+)*")
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PLACEHOLDERS_HELP = "(placeholders here: {{message}}, {{test.id}}, {{test.name}}, {{session.<key>}})"
ALL_PLACEHOLDERS = frozenset({"message", "test.id", "test.name", "session"})
SETUP_PLACEHOLDERS = frozenset({"test.id", "test.name"})
TEARDOWN_PLACEHOLDERS = frozenset({"test.id", "test.name", "session"})
_TEMPLATE_ONLY = (
    "templates are only resolved in triggers; here '{{...}}' would be compared as literal text"
)


@dataclass(frozen=True)
class HighbarProblem(Problem):
    """A problem rendered the highbar way: ``file: place: message (line N)``.

    The file and path come first, exactly as highbar prints them; the line follows.
    """

    column: int | None = None

    def render(self, file: str) -> str:
        where = f" {self.place}:" if self.place else ""
        at = ""
        if self.line:
            at = f" (line {self.line}, column {self.column})" if self.column else f" (line {self.line})"
        return f"{file}:{where} {self.message}{at}"


def load_highbar(path: Path, environ: Mapping[str, str]) -> HighbarSpec:
    """Read, validate and build ``path``; raises :class:`SpecError` naming every problem.

    ``environ`` is where ``${NAME}`` under ``agent`` is looked up (``os.environ`` plus
    ``.env``, as the caller decides).
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise SpecError(str(path), [HighbarProblem("", f"file is larger than {MAX_BYTES // 2**20} MB")])
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(str(path), [HighbarProblem("", f"cannot read: not UTF-8 text (byte {exc.start})")]) from None
    except OSError as exc:
        raise SpecError(str(path), [HighbarProblem("", f"cannot read: {exc.strerror or exc}")]) from None
    return load_highbar_text(text, path, environ)


def load_highbar_text(text: str, path: Path, environ: Mapping[str, str]) -> HighbarSpec:
    """:func:`load_highbar` for text already read (``path`` names it in messages)."""
    path = Path(path)
    try:
        source = load_yaml(text)
    except YamlError as exc:
        raise SpecError(str(path), [HighbarProblem(exc.place, str(exc), exc.line, exc.column)]) from None
    return validate_source(source, path, environ)


def validate_source(source: YamlSource, path: Path, environ: Mapping[str, str]) -> HighbarSpec:
    """Validate parsed YAML; raises :class:`SpecError` with every problem, else builds the spec."""
    checker = _Validator(source, environ)
    checker.spec(source.data)
    problems = [HighbarProblem(p.place, p.message, p.line) for p in source.problems] + checker.problems
    if problems:
        problems = [_redact(p, checker.env_names) for p in problems]
        problems.sort(key=lambda p: p.line if p.line is not None else 1 << 30)
        raise SpecError(str(path), _dedupe(problems))
    assert checker.agent is not None
    try:
        model = models.Spec.model_validate(clean(source.data, checker.agent))
    except ValidationError as exc:  # the checks above missed something: still a spec error, never a crash
        found = problems_from(exc, models.Spec, source.line)
        raise SpecError(str(path), [HighbarProblem(p.place, p.message, p.line) for p in found]) from None
    return Builder(source, path, checker.regexes, checker.templates, checker.env_names).build(model)


# --- messages helpers ---------------------------------------------------------------------


def _t(value: Any) -> str:
    """highbar's ``got <type>``, with YAML's words for null and mappings."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _user_keys(raw: Mapping[str, Any]) -> list[str]:
    return [key for key in raw if not str(key).startswith(EXTENSION_PREFIX)]


def _stem(key: str) -> str:
    """Fold the slips people make: case, hyphens, a dropped or extra plural (highbar's rule)."""
    stem = key.lower().replace("-", "_")
    for suffix in ("es", "s"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


_NEAR_MISSES = {_stem(key): key for key in MATCHER_KEYS}


def near_matcher(key: str) -> str | None:
    """The matcher key ``key`` was probably meant to be (``contain``, ``Matches``), or None."""
    intended = _NEAR_MISSES.get(_stem(key))
    return intended if intended is not None and intended != key else None


def _has_template(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, dict):
        return any(_has_template(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_template(v) for v in value)
    return False


def compile_regex(pattern: str) -> re.Pattern[str] | str:
    """The compiled pattern, or the reason it does not compile."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        return str(exc)
    except (OverflowError, RecursionError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _redact(problem: HighbarProblem, env_names: Mapping[str, str]) -> HighbarProblem:
    """An error that quotes a value (a URL) must not show what came from ``${NAME}``."""
    message = redact(problem.message, env_names)
    if message == problem.message:
        return problem
    return HighbarProblem(problem.place, message, problem.line, problem.column)


def redact(text: str, env_names: Mapping[str, str]) -> str:
    """``text`` with each expanded value (as is, stripped, URL-quoted, repr-escaped) as ``${NAME}``."""
    forms: dict[str, str] = {}
    for value, name in env_names.items():
        for form in (value, value.strip(), quote(value, safe=""), quote_plus(value), repr(value)[1:-1]):
            if len(form) >= SECRET_MIN_LENGTH:
                forms.setdefault(form, name)
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, f"${{{forms[form]}}}")
    return text


def _dedupe(problems: list[HighbarProblem]) -> list[Problem]:
    seen: set[tuple[str, str, int | None]] = set()
    out: list[Problem] = []
    for p in problems:
        key = (p.place, p.message, p.line)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def parse_template(inner: str) -> tuple[tuple[str | int, ...] | None, str | None]:
    """``(path, None)`` for the inside of a valid ``{{previous...}}``, else ``(None, reason)``."""
    body = inner.strip()
    if not body.startswith("previous."):
        return None, "not a template: a trigger can only use {{previous.function_calls[N]...}}"
    tokens: list[str | int] = []
    for segment in body[len("previous."):].split("."):
        match = _SEGMENT.fullmatch(segment)
        if match is None:
            return None, f"invalid path segment '{clip(segment)}'"
        tokens.append(match.group(1))
        tokens.extend(int(index) for index in re.findall(r"\[(\d+)\]", match.group(2)))
    if tokens[0] != "function_calls":
        return None, f"no key '{clip(tokens[0])}' (the only key is function_calls)"
    if len(tokens) > 1 and not isinstance(tokens[1], int):
        return None, f"cannot read '{clip(tokens[1])}' from the list of calls: index it, like function_calls[0]"
    if len(tokens) > 2 and tokens[2] not in TRACE_FIELDS:
        return None, f"a call has no field '{clip(tokens[2])}' (fields: {', '.join(TRACE_FIELDS)})"
    return tuple(tokens), None


# --- the checks -----------------------------------------------------------------------------


class _Validator:
    def __init__(self, source: YamlSource, environ: Mapping[str, str]) -> None:
        self.source = source
        self.environ = environ
        self.problems: list[HighbarProblem] = []
        self.env_names: dict[str, str] = {}
        self.unset: list[Path_] = []  # values with a ${VAR} that is not set: not checked further
        self.agent: dict[str, Any] | None = None  # the agent mapping with ${VAR} expanded
        self.managed = True
        self.calls_from = "traces"
        self.has_traces = False
        self.regexes: dict[str, re.Pattern[str]] = {}
        self.templates: dict[Path_, tuple[Template, ...]] = {}
        self.default_runs = 1

    # reporting

    def err(self, where: Path_, message: str, at: Path_ | None = None) -> None:
        """A problem at ``where`` (its place in the spec), on the line of ``at`` (default ``where``)."""
        line = self.source.line(where if at is None else at)
        self.problems.append(HighbarProblem(_place(where) or "spec", message, line))

    def need(self, value: Any, types: type | tuple[type, ...], where: Path_, what: str, at: Path_ | None = None) -> bool:
        """``value`` is of ``types`` (a bool is not an int); else ``<where>: <what>, got <type>``."""
        expected = types if isinstance(types, tuple) else (types,)
        if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
            self.err(where, f"{what}, got {_t(value)}", at)
            return False
        return True

    def keys(self, raw: Mapping[str, Any], kind: str, where: Path_) -> None:
        allowed = ALLOWED_KEYS[kind]
        for key in raw:
            name = str(key)
            if name in allowed or name.startswith(EXTENSION_PREFIX):
                continue
            hint = ""
            if kind == "response" and (intended := near_matcher(name)):
                hint = f" — did you mean '{intended}'?"
            hint = hint or did_you_mean(name, sorted(allowed))
            if not hint:
                hint = f" (allowed: {', '.join(sorted(allowed))})"
            self.err(where, f"unknown key '{clip(name)}'{hint}", where + (key,))

    def tainted(self, where: Path_) -> bool:
        """The value at ``where`` holds an unset ``${VAR}`` (already reported)."""
        return any(p[: len(where)] == where for p in self.unset)

    # spec

    def spec(self, raw: Any) -> None:
        root: Path_ = ()
        if raw is None:
            self.err(root, "the file is empty: a spec is a mapping with 'agent' and 'suites'")
            return
        if not self.need(raw, dict, root, "must be a mapping with 'agent' and 'suites'"):
            return
        self.keys(raw, "spec", root)
        if "defaults" in raw:
            defaults = raw["defaults"]
            if self.need(defaults, dict, ("defaults",), "must be a mapping"):
                self.keys(defaults, "defaults", ("defaults",))
                if "runs" in defaults and self.runs(defaults["runs"], ("defaults",), ("defaults", "runs")):
                    self.default_runs = defaults["runs"]
        if "agent" not in raw:
            self.err(root, "missing 'agent' (how to start and reach the agent)")
        else:
            self.agent_(raw["agent"])
        suites = raw.get("suites")
        observing: list[Path_] = []
        if not suites:
            self.err(root, "has no tests (add a suite under 'suites')", ("suites",) if "suites" in raw else root)
        elif self.need(suites, list, ("suites",), "must be a list of suites"):
            for i, suite in enumerate(suites):
                observing += self.suite(suite, ("suites", i))
        if self.agent is not None and not self.managed and not self.has_traces and self.calls_from == "traces" and observing:
            self.err(
                ("agent",),
                "attach mode (no 'start') needs 'traces', the file the agent writes: "
                f"{_place(observing[0])} checks function_calls",
            )

    # agent

    def agent_(self, raw: Any) -> None:
        A: Path_ = ("agent",)
        if not self.need(raw, dict, A, "must be a mapping"):
            return
        self.keys(raw, "agent", A)
        raw = self.expand(raw, A)
        self.agent = raw

        if "endpoint" not in raw:
            self.err(A, "missing 'endpoint' (the URL each trigger is sent to)")
        elif self.text(raw, "endpoint"):
            self.url(raw["endpoint"], "endpoint")
        self.managed = "start" in raw
        if "start" in raw and self.text(raw, "start") and not self.tainted(A + ("start",)):
            try:
                shlex.split(raw["start"])
            except ValueError as exc:
                self.err(A, f"start is not a valid command line: {exc}", A + ("start",))
        if raw.get("health") is not None:
            if self.need(raw["health"], str, A, "health must be a string (a URL)", A + ("health",)):
                self.url(raw["health"], "health")

        if "calls_from" in raw:
            value = raw["calls_from"]
            if value in ("traces", "reply"):
                self.calls_from = value
            else:
                self.err(A, f"calls_from must be 'traces' or 'reply', got {clip(repr(value))}", A + ("calls_from",))
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
                self.err(A, "'traces' is not read with calls_from: reply (tool calls come in the reply)", A + ("traces",))
            else:
                self.text(raw, "traces")

        has_session = "session" in raw
        if has_session:
            self.session(raw["session"])
        for key, default, minimum in (("startup_timeout", 15000, 1), ("settle_time", 500, 0), ("timeout", 60000, 1)):
            if key == "startup_timeout" and not self.managed:
                continue
            value = raw.get(key, default)
            if self.need(value, int, A, f"{key} must be an integer (milliseconds)", A + (key,)) and value < minimum:
                qualifier = "a positive" if minimum > 0 else "a non-negative"
                self.err(A, f"{key} must be {qualifier} integer (milliseconds), got {value}", A + (key,))
        self.request(raw.get("request"), has_session)
        if "response" in raw:
            value = raw["response"]
            if self.need(value, str, A, "response must be a string (a path like data.reply)", A + ("response",)):
                if not _RESPONSE_PATH.fullmatch(value):
                    self.err(
                        A,
                        "response must be a dotted path to the reply text, like data.reply or "
                        f"choices.0.message.content, got {clip(repr(value))}",
                        A + ("response",),
                    )
        if "correlate" in raw:
            self.correlate(raw["correlate"], has_session)

    def expand(self, value: Any, where: Path_) -> Any:
        """Replace ``${NAME}`` from ``environ``, once (no re-expansion); record each value."""
        if isinstance(value, dict):
            schema = where in {("agent",), ("agent", "request"), ("agent", "session"),
                               ("agent", "session", "setup"), ("agent", "session", "teardown")}  # fmt: skip
            return {
                key: item if schema and str(key).startswith(EXTENSION_PREFIX) else self.expand(item, where + (key,))
                for key, item in value.items()
            }
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

        expanded = _ENV_VAR.sub(variable, value)
        for name in missing:
            self.err(where, f"environment variable {name} is not set")
        if missing:
            self.unset.append(where)
        return expanded

    def text(self, raw: Mapping[str, Any], key: str) -> bool:
        A: Path_ = ("agent",)
        value = raw[key]
        if not self.need(value, str, A, f"{key} must be a string", A + (key,)):
            return False
        if not value.strip():
            self.err(A, f"{key} cannot be empty", A + (key,))
            return False
        return True

    def url(self, url: str, key: str) -> None:
        A: Path_ = ("agent",)
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

    def request(self, raw: Any, has_session: bool) -> None:
        R: Path_ = ("agent", "request")
        if raw is None:
            return
        if not self.need(raw, dict, R, "must be a mapping"):
            return
        self.keys(raw, "request", R)
        method = raw.get("method", "POST")
        if self.need(method, str, R, "method must be a string", R + ("method",)):
            if method.upper() not in ("POST", "PUT", "PATCH") and not self.tainted(R + ("method",)):
                self.err(R, f"method must be POST, PUT or PATCH, got {clip(repr(method))}", R + ("method",))
        headers = raw.get("headers", {})
        if self.need(headers, dict, R, "headers must be a mapping", R + ("headers",)):
            H = R + ("headers",)
            for name, value in headers.items():
                if not _HEADER_NAME.fullmatch(name):
                    self.err(H, f"{clip(repr(name))} is not a valid header name", H + (name,))
                if not isinstance(value, str):
                    self.err(H, f"{clip(name)} must be a string (quote it), got {_t(value)}", H + (name,))
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
        body = raw.get("body", {"message": "{{message}}"})
        B = R + ("body",)
        try:
            json.dumps(body, allow_nan=False)
        except ValueError as exc:
            self.err(B, f"must be JSON: {exc}")
        if self.placeholders(body, B, ALL_PLACEHOLDERS, has_session) and not _uses_placeholder(body, "message"):
            self.err(B, "never uses {{message}}, so the trigger would not be sent")

    def placeholders(self, value: Any, where: Path_, allowed: frozenset[str], has_session: bool) -> bool:
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
        for match in _PLACEHOLDER.finditer(value):
            name = match.group(1)
            kind = "session" if name.startswith("session.") and len(name) > len("session.") else name
            shown = clip(match.group(0))
            if kind not in ALL_PLACEHOLDERS or name == "session":
                known = ["message", "test.id", "test.name", "session.<key>"]
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) if len(name) <= 100 else []
                hint = f" — did you mean '{{{{{close[0]}}}}}'?" if close else ""
                self.err(where, f"unknown placeholder '{shown}'{hint} {_PLACEHOLDERS_HELP}")
            elif kind not in allowed:
                self.err(where, f"'{shown}' is not available here")
            elif kind == "session" and not has_session:
                self.err(where, f"'{shown}' needs agent.session, whose setup returns it")
            else:
                continue
            ok = False
        return ok

    def session(self, raw: Any) -> None:
        S: Path_ = ("agent", "session")
        if not self.need(raw, dict, S, "must be a mapping with setup and/or teardown"):
            return
        self.keys(raw, "session", S)
        if "setup" not in raw and "teardown" not in raw:
            self.err(S, "needs setup or teardown")
        if "setup" in raw:
            self.hook(raw["setup"], S + ("setup",), SETUP_PLACEHOLDERS)
        if "teardown" in raw:
            self.hook(raw["teardown"], S + ("teardown",), TEARDOWN_PLACEHOLDERS)

    def hook(self, raw: Any, where: Path_, allowed: frozenset[str]) -> None:
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
            self.err(where, f"python must be 'module:function', got {clip(repr(target))}", where + ("python",))

    def correlate(self, raw: Any, has_session: bool) -> None:
        C: Path_ = ("agent", "correlate")
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

    def suite(self, raw: Any, where: Path_) -> list[Path_]:
        """Check a suite; returns the places of its tests that observe tool calls."""
        if not self.need(raw, dict, where, "a suite must be a mapping"):
            return []
        self.keys(raw, "suite", where)
        self.optional_name(raw, where)
        tests = raw.get("tests")
        if not tests:
            self.err(where, "has no tests", where + ("tests",) if "tests" in raw else where)
            return []
        if not self.need(tests, list, where, "tests must be a list", where + ("tests",)):
            return []
        return [where + ("tests", j) for j, test in enumerate(tests) if self.test(test, where + ("tests", j))]

    def optional_name(self, raw: Mapping[str, Any], where: Path_) -> None:
        name = raw.get("name")
        if name is not None:
            self.need(name, str, where, "name must be a string", where + ("name",))

    def runs(self, value: Any, where: Path_, at: Path_) -> bool:
        if not _is_int(value) or value < 1:
            self.err(where, f"runs must be a whole number of at least 1, got {clip(repr(value))}", at)
            return False
        return True

    def test(self, raw: Any, where: Path_) -> bool:
        """Check a test; True when it observes tool calls."""
        if not self.need(raw, dict, where, "a test must be a mapping"):
            return False
        self.keys(raw, "test", where)
        self.optional_name(raw, where)
        observes = False
        if "turns" in raw:
            if "trigger" in raw:
                self.err(where, "a test has either 'trigger' or 'turns', not both", where + ("trigger",))
            if "expect" in raw:
                self.err(where, "with 'turns', each turn has its own 'expect'", where + ("expect",))
            if raw.get("variations"):
                self.err(where, "'variations' is not supported on multi-turn tests", where + ("variations",))
            observes = self.turns(raw["turns"], where)
        else:
            self.trigger(raw, where, first=True)
            if "expect" not in raw:
                self.err(where, "asserts nothing — add an 'expect' (function_calls: [] checks that no tool is called)")
            else:
                found = self.expect(raw["expect"], where + ("expect",))
                observes = bool(found and found[1])
            variations = raw.get("variations")
            if variations is not None and self.need(
                variations, int, where, "variations must be a non-negative integer", where + ("variations",)
            ) and variations < 0:
                self.err(where, f"variations must be a non-negative integer, got {variations}", where + ("variations",))
        runs_ok = "runs" in raw and self.runs(raw["runs"], where, where + ("runs",))
        if "min_pass" in raw:
            value = raw["min_pass"]
            whole = _is_int(value) and value >= 1
            fraction = isinstance(value, float) and 0 < value <= 1
            if not (whole or fraction):
                self.err(
                    where,
                    "min_pass must be a whole number of at least 1 or a fraction of runs (0 < f <= 1), "
                    f"got {clip(repr(value))}",
                    where + ("min_pass",),
                )
            elif "runs" not in raw or runs_ok:
                runs = raw["runs"] if runs_ok else self.default_runs
                count = resolve_min_pass(value, runs)
                if count > runs:
                    self.err(where, f"min_pass {count} is more than its {runs} runs", where + ("min_pass",))
        if "markers" in raw:
            self.markers(raw["markers"], where)
        return observes

    def markers(self, value: Any, where: Path_) -> None:
        at = where + ("markers",)
        if not self.need(value, list, where, "markers must be a list of marker names", at):
            return
        for k, name in enumerate(value):
            # pytest takes identifiers that do not start with '_' as marker names
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                self.err(where, f"marker names must be words like 'smoke' or 'slow', got {clip(repr(name))}", at + (k,))

    def trigger(self, raw: Mapping[str, Any], where: Path_, first: bool) -> None:
        at = where + ("trigger",)
        if "trigger" not in raw:
            self.err(where, "missing 'trigger' (the message sent to the agent)")
            return
        trigger = raw["trigger"]
        if not self.need(trigger, str, where, "trigger must be a string", at):
            return
        if not trigger.strip():
            self.err(where, "trigger cannot be empty", at)
            return
        found: list[Template] = []
        end = 0
        for match in _TEMPLATE.finditer(trigger):
            end = match.end()
            shown = clip(match.group(0))
            path, reason = parse_template(match.group(1))
            if path is None:
                self.err(where, f"template '{shown}': {reason}", at)
            elif first:
                self.err(
                    where,
                    f"template '{shown}' needs an earlier turn: {{{{previous...}}}} reads the calls of the "
                    "turns before this one in 'turns'",
                    at,
                )
            else:
                found.append(Template(match.group(0), path))
        if "{{" in trigger[end:]:
            self.err(where, "unclosed '{{' in the trigger (a template looks like {{previous.function_calls[0].result}})", at)
        if found:
            self.templates[where] = tuple(found)

    def turns(self, raw: Any, where: Path_) -> bool:
        at = where + ("turns",)
        if not self.need(raw, list, where, "turns must be a list", at):
            return False
        if not raw:
            self.err(where, "turns cannot be empty", at)
            return False
        asserts = False
        observes = False
        broken = False
        for k, turn in enumerate(raw):
            tw = at + (k,)
            if not self.need(turn, dict, tw, "a turn must be a mapping"):
                broken = True
                continue
            self.keys(turn, "turn", tw)
            self.trigger(turn, tw, first=k == 0)
            self.optional_name(turn, tw)
            if "expect" in turn:
                found = self.expect(turn["expect"], tw + ("expect",))
                asserts = asserts or found is not None
                observes = observes or bool(found and found[1])
                broken = broken or found is None
        if not asserts and not broken:
            self.err(where, "asserts nothing — no turn has an 'expect'", at)
        return observes

    def expect(self, raw: Any, where: Path_) -> tuple[bool, bool] | None:
        """Check an expect; None when it is broken, else ``(asserts something, observes calls)``."""
        if not self.need(raw, dict, where, "expect must be a mapping"):
            return None
        self.keys(raw, "expect", where)
        if not _user_keys(raw):
            self.err(
                where,
                "asserts nothing — use function_calls, response, forbid, or function_calls: [] "
                "to check that no tool is called",
            )
            return None
        has_calls = False
        if "function_calls" in raw:
            calls = raw["function_calls"]
            if self.need(calls, list, where, "function_calls must be a list", where + ("function_calls",)):
                has_calls = True
                for n, call in enumerate(calls):
                    self.call(call, where + ("function_calls", n))
        for key in ("ordered", "exclusive"):
            if key not in raw:
                continue
            if self.need(raw[key], bool, where, f"{key} must be true or false", where + (key,)):
                if "function_calls" not in raw:
                    self.err(where, f"{key} needs function_calls (the calls it applies to)", where + (key,))
        forbid = "forbid" in raw
        if forbid:
            names = raw["forbid"]
            if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
                self.err(where, "forbid must be a non-empty list of tool names", where + ("forbid",))
        if "response" in raw:
            self.response(raw["response"], where)
        observes = has_calls or forbid
        return True, observes

    def response(self, raw: Any, where: Path_) -> None:
        at = where + ("response",)
        if raw is None or (isinstance(raw, dict) and not _user_keys(raw)):
            self.err(where, f"response has no matcher (use {MATCHERS_TEXT})", at)
            return
        if not self.need(raw, dict, where, "response must be a mapping", at):
            return
        self.keys(raw, "response", at)
        for key, value in raw.items():
            if key not in MATCHER_KEYS:
                continue
            if not self.need(value, str, at, f"{key} must be a string", at + (key,)):
                continue
            if not value and key != "equals":
                # "" is in every answer: a check that cannot fail
                self.err(at, f"{key} cannot be empty", at + (key,))
            elif "{{" in value:
                self.err(at + (key,), _TEMPLATE_ONLY)
            elif key in REGEX_KEYS:
                self.regex(value, at + (key,), lambda reason: f"invalid regex: {reason}")

    def regex(self, pattern: str, at: Path_, message: Any, where: Path_ | None = None) -> None:
        compiled = compile_regex(pattern)
        if isinstance(compiled, str):
            self.err(at if where is None else where, message(compiled), at)
        else:
            self.regexes[pattern] = compiled

    def call(self, raw: Any, where: Path_) -> None:
        if not self.need(raw, dict, where, "a function_calls entry must be a mapping"):
            return
        self.keys(raw, "function_call", where)
        if "name" not in raw:
            self.err(where, "missing 'name' (the tool expected to be called)")
        else:
            self.call_name(raw["name"], where)
        for key in ("params", "result"):
            value = raw.get(key)
            if value is None:
                continue
            if not self.need(value, dict, where, f"{key} must be a mapping of expected values", where + (key,)):
                continue
            if _has_template(value):
                self.err(where + (key,), _TEMPLATE_ONLY)
            self.expected(value, where + (key,))
        if "error" in raw:
            self.call_error(raw["error"], where)

    def call_name(self, raw: Any, where: Path_) -> None:
        at = where + ("name",)
        if isinstance(raw, str):
            if not raw.strip():
                self.err(where, "function_call 'name' cannot be empty", at)
        elif isinstance(raw, list):
            if not raw:
                self.err(where, "function_call 'name' cannot be an empty list", at)
            elif not all(isinstance(name, str) and name.strip() for name in raw):
                self.err(
                    where, f"function_call 'name' list must contain only non-empty strings, got {clip(repr(raw))}", at
                )
        else:
            self.err(where, f"function_call 'name' must be a string or a list of strings, got {_t(raw)}", at)

    def call_error(self, raw: Any, where: Path_) -> None:
        at = where + ("error",)
        if isinstance(raw, bool):
            return
        if isinstance(raw, dict) and raw and not set(raw) <= MATCHER_KEYS:
            near = [(key, intended) for key in raw if (intended := near_matcher(str(key)))]
            if near and all(key in MATCHER_KEYS or near_matcher(str(key)) for key in raw):
                key, intended = near[0]
                self.err(at, f"unknown matcher '{clip(key)}' — did you mean '{intended}'?", at + (key,))
                return
        if not isinstance(raw, dict) or not raw or not set(raw) <= MATCHER_KEYS:
            self.err(
                at,
                'error must be true, false or a matcher such as {contains: "Timeout"}; a bare text would '
                "be ambiguous between equals and contains",
            )
            return
        if _has_template(raw):
            self.err(at, _TEMPLATE_ONLY)
        self.expected(raw, at)

    def expected(self, value: Any, where: Path_) -> None:
        """highbar's ``validate_expected``: matchers well formed and unambiguous, at any depth."""
        if not isinstance(value, dict):
            return
        keys = [str(key) for key in value]
        known = [key for key in keys if key in MATCHER_KEYS]
        unknown = [key for key in keys if key not in MATCHER_KEYS]
        if known and unknown:
            self.err(
                where,
                f"mixes matcher keys {sorted(known)} with other keys {sorted(unknown)}. "
                "Use only matcher keys, or wrap a literal dict as {equals: {...}}",
            )
            return
        if not known:
            for key, item in value.items():
                intended = near_matcher(key)
                if intended:
                    self.err(
                        where,
                        f"unknown matcher '{clip(key)}' — did you mean '{intended}'? "
                        "For a literal dict with this key, wrap it as {equals: {...}}",
                        where + (key,),
                    )
                else:
                    self.expected(item, where + (key,))
            return
        for key in REGEX_KEYS:  # the operand of equals is a literal and is not inspected
            if key not in value:
                continue
            pattern = value[key]
            if not isinstance(pattern, str):
                self.err(where, f"'{key}' needs a regex string, got {_t(pattern)}", where + (key,))
                continue
            self.regex(
                pattern,
                where + (key,),
                lambda reason, key=key, pattern=pattern: f"invalid regex in '{key}' ({clip(repr(pattern))}): {reason}",
                where,
            )


def _uses_placeholder(value: Any, name: str) -> bool:
    if isinstance(value, dict):
        return any(_uses_placeholder(item, name) for item in value.values())
    if isinstance(value, list):
        return any(_uses_placeholder(item, name) for item in value)
    return isinstance(value, str) and any(m.group(1) == name for m in _PLACEHOLDER.finditer(value))


__all__ = [
    "HighbarProblem",
    "load_highbar",
    "load_highbar_text",
    "validate_source",
    "parse_template",
    "near_matcher",
    "redact",
]
