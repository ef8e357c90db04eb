"""The ``agent:`` block validated by its model: :class:`CheckedAgent` is :class:`.models.Agent` (the
schema) with highbar's check on each field, worded as highbar words it
(``agent: timeout must be an integer (milliseconds), got str``).

A check raises :class:`AgentProblem`, a ``ValueError`` pydantic keeps in the error's context, so
:mod:`.validate_agent` turns each error into one problem line with its place and source line; a value
with several problems (headers, placeholders in a body) raises them together as one
``ValidationError``, which pydantic places under the field. What the checks need beyond the value
(the environment, the values holding an unset ``${VAR}``, which sibling keys are written) comes in
the validation context, an :class:`AgentContext`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, get_args

from annotated_types import Ge
from pydantic import BaseModel, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import ErrorDetails, InitErrorDetails

from ...agents.config import start_line
from ...errors import clip
from ...json_types import JSONValue
from . import models
from .agent_values import (
    AgentProblem,
    Found,
    header_problems,
    milliseconds_problem,
    placeholder_problems,
    url_problem,
)
from .rules import (
    ALL_PLACEHOLDERS,
    EXTENSION_PREFIX,
    RESPONSE_PATH,
    SETUP_PLACEHOLDERS,
    TEARDOWN_PLACEHOLDERS,
    Path_,
    type_name,
    uses_placeholder,
)

CALLS_FROM: tuple[str, ...] = get_args(models.Agent.model_fields["calls_from"].annotation)
_T = TypeVar("_T", str, dict[str, JSONValue])


class Unchecked(ValueError):
    """A value holding an unset ``${VAR}``: that is reported already, and the value is not checked."""


@dataclass(frozen=True)
class AgentContext:
    """What the agent block's checks need besides the block (its ``${VAR}`` already expanded)."""

    environ: Mapping[str, str]
    written_start: JSONValue  # ``start`` as written: its secrets go in after the line is split
    secrets: list[str]
    unset: Sequence[Path_]  # the places of values with an unset ${VAR}
    managed: bool  # 'start' is written: the plugin starts the agent
    calls_from: str
    has_session: bool

    @classmethod
    def of(
        cls,
        agent: Mapping[str, JSONValue],
        written_start: JSONValue,
        environ: Mapping[str, str],
        secrets: list[str],
        unset: Sequence[Path_],
    ) -> AgentContext:
        calls_from = agent.get("calls_from")
        return cls(
            environ,
            written_start,
            secrets,
            unset,
            managed="start" in agent,
            calls_from=calls_from if isinstance(calls_from, str) and calls_from in CALLS_FROM else "traces",
            has_session="session" in agent,
        )

    def tainted(self, where: Path_) -> bool:
        """The value at ``where`` holds an unset ``${VAR}`` (already reported)."""
        return any(p[: len(where)] == where for p in self.unset)


def _context(info: ValidationInfo) -> AgentContext:
    if not isinstance(info.context, AgentContext):
        raise TypeError("the agent block is validated with an AgentContext")
    return info.context


def init_details(err: ErrorDetails, prefix: Path_ = ()) -> InitErrorDetails:
    """A pydantic error as pydantic takes it back (to raise it again), placed under ``prefix``."""
    details = InitErrorDetails(type=err["type"], loc=(*prefix, *err["loc"]), input=err["input"])
    if "ctx" in err:
        details["ctx"] = err["ctx"]
    return details


def _raise_all(value: JSONValue, found: Found) -> None:
    """Raise every problem found in one value at once, each at its place inside the value."""
    if found:
        raise ValidationError.from_exception_data(
            "agent",
            [
                InitErrorDetails(type="value_error", loc=where, input=value, ctx={"error": problem})
                for where, problem in found
            ],
        )


def _need(value: JSONValue, kind: type[_T], what: str, *, at_owner: bool) -> _T:
    """``value``, which must be a ``kind`` (text or a mapping); else ``<what>, got <type>``."""
    if not isinstance(value, kind):
        raise AgentProblem(f"{what}, got {type_name(value)}", at_owner=at_owner)
    return value


def _text(value: JSONValue, key: str) -> str:
    """A key's value that must be non-blank text."""
    text = _need(value, str, f"{key} must be a string", at_owner=True)
    if not text.strip():
        raise AgentProblem(f"{key} cannot be empty", at_owner=True)
    return text


def _url(value: str, key: str, context: AgentContext) -> str:
    """``value`` if it is an http(s) URL (a value with an unset ``${VAR}`` is not looked into)."""
    if not context.tainted(("agent", key)) and (problem := url_problem(value, key)):
        raise AgentProblem(problem, at_owner=True)
    return value


class _Extensible(BaseModel):
    """A mapping of the block whose ``x-`` keys are the writer's own: dropped before its keys are
    checked."""

    @model_validator(mode="before")
    @classmethod
    def _without_extensions(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if not str(key).startswith(EXTENSION_PREFIX)}
        return data


class CheckedHook(_Extensible, models.PythonHook):
    """A session hook written as ``{python: 'module:function'}``."""

    @field_validator("python", mode="before")
    @classmethod
    def _module_function(cls, value: JSONValue) -> JSONValue:
        value = _need(value, str, "python must be 'module:function'", at_owner=True)
        module, colon, function = value.partition(":")
        if not colon or not module.strip() or not function.strip() or ":" in function:
            raise AgentProblem(f"python must be 'module:function', got {clip(repr(value))}", at_owner=True)
        return value


_HOOK_PLACEHOLDERS = {"setup": SETUP_PLACEHOLDERS, "teardown": TEARDOWN_PLACEHOLDERS}


class CheckedSession(_Extensible, models.Session):
    """``agent.session``: the setup and teardown hooks run around each test."""

    @model_validator(mode="wrap")
    @classmethod
    def _setup_or_teardown(cls, data: Any, handler: Any) -> Any:
        """A session needs a hook; said after the problems of its keys (a misspelt ``setup``)."""
        if isinstance(data, dict) and "setup" not in data and "teardown" not in data:
            errors: list[InitErrorDetails] = []
            try:
                handler(data)
            except ValidationError as exc:
                errors = [init_details(err) for err in exc.errors(include_url=False)]
            needs = AgentProblem("needs setup or teardown")
            errors.append(InitErrorDetails(type="value_error", loc=(), input=data, ctx={"error": needs}))
            raise ValidationError.from_exception_data("session", errors)
        return handler(data)

    @field_validator("setup", "teardown", mode="before")
    @classmethod
    def _hook(cls, value: JSONValue, info: ValidationInfo) -> JSONValue | models.PythonHook:
        """A command line (its placeholders checked) or ``{python: 'module:function'}``."""
        context = _context(info)
        assert info.field_name is not None
        if isinstance(value, str):
            if context.tainted(("agent", "session", info.field_name)):
                return value
            try:
                argv = shlex.split(value)
            except ValueError as exc:
                raise AgentProblem(f"not a valid command line: {exc}") from None
            if not argv:
                raise AgentProblem("cannot be empty")
            _raise_all(
                value, placeholder_problems(value, _HOOK_PLACEHOLDERS[info.field_name], has_session=True)
            )
            return value
        _need(value, dict, "must be a command or {python: 'module:function'}", at_owner=False)
        return CheckedHook.model_validate(value, context=context)


class CheckedRequest(_Extensible, models.Request):
    """``agent.request``: how a trigger is sent."""

    @field_validator("method", mode="before")
    @classmethod
    def _method(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        value = _need(value, str, "method must be a string", at_owner=True)
        if _context(info).tainted(("agent", "request", "method")):
            raise Unchecked()
        if value.upper() not in ("POST", "PUT", "PATCH"):
            raise AgentProblem(f"method must be POST, PUT or PATCH, got {clip(repr(value))}", at_owner=True)
        return value.upper()

    @field_validator("headers", mode="before")
    @classmethod
    def _headers(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        context = _context(info)
        value = _need(value, dict, "headers must be a mapping", at_owner=True)
        found = header_problems(value, lambda name: context.tainted(("agent", "request", "headers", name)))
        found += placeholder_problems(value, ALL_PLACEHOLDERS, context.has_session)
        _raise_all(value, found)
        return value

    @field_validator("body", mode="before")
    @classmethod
    def _body(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        """JSON that sends the trigger: it uses ``{{message}}`` and only placeholders known here."""
        found: Found = []
        try:
            json.dumps(value, allow_nan=False)
        except ValueError as exc:
            found.append(((), AgentProblem(f"must be JSON: {exc}")))
        wrong = placeholder_problems(value, ALL_PLACEHOLDERS, _context(info).has_session)
        found += wrong
        if not wrong and not uses_placeholder(value, "message"):
            found.append(((), AgentProblem("never uses {{message}}, so the trigger would not be sent")))
        _raise_all(value, found)
        return value


class CheckedAgent(_Extensible, models.Agent):
    """``agent:``: how the agent is started (or reached), sent a trigger, and read."""

    @field_validator("endpoint", mode="before")
    @classmethod
    def _endpoint(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        """The URL each trigger is sent to."""
        return _url(_text(value, "endpoint"), "endpoint", _context(info))

    @field_validator("health", mode="before")
    @classmethod
    def _health(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        """The URL polled until the agent answers (none: its port is waited for)."""
        if value is None:
            return None
        value = _need(value, str, "health must be a string (a URL)", at_owner=True)
        return _url(value, "health", _context(info))

    @field_validator("start", mode="before")
    @classmethod
    def _start(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        """A command line, split as it will be run: a secret's ``${VAR}`` goes into its argument
        after the split."""
        context = _context(info)
        _text(value, "start")
        written = context.written_start
        if not context.tainted(("agent", "start")):
            line = (
                start_line(written, context.environ, context.secrets) if isinstance(written, str) else value
            )
            assert isinstance(line, str)
            try:
                shlex.split(line)
            except ValueError as exc:
                raise AgentProblem(f"start is not a valid command line: {exc}", at_owner=True) from None
        return value

    @field_validator("calls_from", mode="before")
    @classmethod
    def _calls_from(cls, value: JSONValue) -> JSONValue:
        if value not in CALLS_FROM:
            raise AgentProblem(
                f"calls_from must be 'traces', 'reply' or 'otel', got {clip(repr(value))}", at_owner=True
            )
        return value

    @field_validator("startup_timeout", "settle_time", "timeout", mode="before")
    @classmethod
    def _milliseconds(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        key = info.field_name
        assert key is not None
        if key == "startup_timeout" and not _context(info).managed:
            raise AgentProblem(
                "startup_timeout only applies with 'start' (in attach mode the agent is not started)",
                at_owner=True,
            )
        minimum = next(m.ge for m in cls.model_fields[key].metadata if isinstance(m, Ge))
        assert isinstance(minimum, int)
        if (problem := milliseconds_problem(value, key, minimum)) is not None:
            raise AgentProblem(problem, at_owner=True)
        return value

    @field_validator("traces", mode="before")
    @classmethod
    def _traces(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        """The trace file an agent started elsewhere writes (one the plugin starts is given one)."""
        context = _context(info)
        if context.managed:
            raise AgentProblem(
                "'traces' is for attach mode; with 'start', the trace file is created and passed "
                "to the agent in HIGHBAR_TRACES_URL",
                at_owner=True,
            )
        if context.calls_from == "reply":
            raise AgentProblem(
                "'traces' is not read with calls_from: reply (tool calls come in the reply)", at_owner=True
            )
        return _text(value, "traces")

    @field_validator("session", mode="before")
    @classmethod
    def _session(cls, value: JSONValue, info: ValidationInfo) -> models.Session:
        _need(value, dict, "must be a mapping with setup and/or teardown", at_owner=False)
        return CheckedSession.model_validate(value, context=info.context)

    @field_validator("request", mode="before")
    @classmethod
    def _request(cls, value: JSONValue, info: ValidationInfo) -> models.Request:
        if value is None:
            return models.Request()
        _need(value, dict, "must be a mapping", at_owner=False)
        return CheckedRequest.model_validate(value, context=info.context)

    @field_validator("response", mode="before")
    @classmethod
    def _response(cls, value: JSONValue) -> JSONValue:
        value = _need(value, str, "response must be a string (a path like data.reply)", at_owner=True)
        if not RESPONSE_PATH.fullmatch(value):
            raise AgentProblem(
                "response must be a dotted path to the reply text, like data.reply or "
                f"choices.0.message.content, got {clip(repr(value))}",
                at_owner=True,
            )
        return value

    @field_validator("correlate", mode="before")
    @classmethod
    def _correlate(cls, value: JSONValue, info: ValidationInfo) -> JSONValue:
        """The context keys a trace record must carry to be this test's, each text, a number or a
        placeholder."""
        if not isinstance(value, dict) or not value:
            raise AgentProblem(
                "correlate must be a non-empty mapping of context key to value "
                '(e.g. {conversation_id: "{{session.conversation_id}}"})',
                at_owner=True,
            )
        found: Found = [
            ((key,), AgentProblem("must be text, a number or a placeholder"))
            for key, item in value.items()
            if isinstance(item, bool) or not isinstance(item, (str, int, float))
        ]
        found += placeholder_problems(value, ALL_PLACEHOLDERS, _context(info).has_session)
        _raise_all(value, found)
        return value
