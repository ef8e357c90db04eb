"""A case's ``**Strict:**`` YAML compiled to the checks of :mod:`.strict` (at collection).

An unknown key, a misspelt operator, a bad path or regular expression is a problem naming the
YAML line with a did-you-mean.
"""

from __future__ import annotations

from ...errors import Problem, clip, did_you_mean
from ...json_types import JSONValue
from ...model import Check
from .expr import Expr, ExprError, compile_expr
from .models import Strict
from .strict import (
    ChunksCheck,
    DocCheck,
    Entry,
    EventsCheck,
    EventTypeCheck,
    Getter,
    Observed,
    ValueCheck,
    check_path,
    content_type_text,
)

KEYS = (
    "status",
    "headers",
    "body",
    "format",
    "content_type",
    "chunks",
    "final_chunk",
    "final_event",
    "events",
    "concatenated_content",
    "response",
    "reply",
    "spans",
)
RESPONSE_KEYS = ("status", "content", "agent", "headers", "body", "content_type")
STREAM_KEYS = frozenset({"chunks", "final_chunk", "final_event", "concatenated_content"})
FORMATS = ("sse", "json")


class _Compiler:
    def __init__(self, strict: Strict, where: str) -> None:
        self.strict = strict
        self.where = where
        self.problems: list[Problem] = []
        self.checks: list[Check] = []

    def problem(self, path: tuple[str | int, ...], message: str) -> None:
        self.problems.append(Problem(self.where, message, self.strict.line_of(path)))

    def expr(self, path: tuple[str | int, ...], value: JSONValue) -> Expr | None:
        try:
            return compile_expr(value)
        except ExprError as exc:
            self.problem(path, f"{_place(path)}: {exc}")
            return None

    def entry(self, path: tuple[str | int, ...], mapping: JSONValue, prefix: str = "") -> Entry:
        """A mapping of JSONPaths to expressions, nested mappings joined into longer paths."""
        if not isinstance(mapping, dict):
            self.problem(path, f"{_place(path)} must be a mapping of paths to expected values")
            return []
        out: Entry = []
        for key, value in mapping.items():
            full = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict) and value:
                out.extend(self.entry(path + (key,), value, full))
                continue
            bad = check_path(full)
            if bad:
                self.problem(path + (key,), f"{_place(path)}: {bad}")
                continue
            expr = self.expr(path + (key,), value)
            if expr is not None:
                out.append((full, expr, self.strict.line_of(path + (key,))))
        return out

    def compile(self) -> None:
        for key, value in self.strict.data.items():
            if key not in KEYS:
                self.problem(
                    (key,),
                    f"unknown strict key '{clip(key)}'{did_you_mean(key, KEYS)} "
                    f"(strict keys: {', '.join(KEYS)})",
                )
                continue
            getattr(self, f"_{key}")((key,), value)

    def _value(self, path: tuple[str | int, ...], value: JSONValue, label: str, get: Getter) -> None:
        expr = self.expr(path, value)
        if expr is not None:
            self.checks.append(ValueCheck(label, get, expr, self.strict.line_of(path)))

    def _status(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        expr = self.expr(path, value)
        if expr is None:
            return
        plain = [o for o in (expr.options or (expr,)) if o.op == "equals"]
        if any(not isinstance(o.arg, int) or isinstance(o.arg, bool) for o in plain):
            self.problem(
                path,
                f"{_place(path)} must be a status code or a list of them, like 200 or [200, 201], "
                f"got {clip(repr(value))}",
            )
            return
        self.checks.append(ValueCheck(_place(path), _status, expr, self.strict.line_of(path)))

    def _headers(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        if not isinstance(value, dict):
            self.problem(path, f"{_place(path)} must be a mapping of header names to expected values")
            return
        for name, expected in value.items():
            expr = self.expr(path + (name,), expected)
            if expr is not None:
                self.checks.append(
                    ValueCheck(
                        f"header {name}", _header(str(name), expr), expr, self.strict.line_of(path + (name,))
                    )
                )

    def _body(self, path: tuple[str | int, ...], value: JSONValue, source: str = "body") -> None:
        if not isinstance(value, dict):
            expr = self.expr(path, value)
            if expr is not None:
                self.checks.append(DocCheck(_place(path), source, "$", expr, self.strict.line_of(path)))
            return
        for doc_path, expr, line in self.entry(path, value):
            self.checks.append(DocCheck(f"{_place(path)} {doc_path}", source, doc_path, expr, line))

    def _final_chunk(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        self._body(path, value, "final_chunk")

    def _reply(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        """An a2a or realtime case's assembled reply (state, text, events[*].kind, artifacts, ...)."""
        self._body(path, value, "reply")

    def _format(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        if value not in FORMATS:
            self.problem(
                path,
                f"format must be sse or json, not {clip(repr(value))}{did_you_mean(str(value), FORMATS)}",
            )
            return
        self.checks.append(ValueCheck("format", _format, compile_expr(value), self.strict.line_of(path)))

    def _content_type(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        expr = self.expr(path, value)
        if expr is not None:
            self.checks.append(
                ValueCheck(_place(path), _header("content-type", expr), expr, self.strict.line_of(path))
            )

    def _chunks(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        if isinstance(value, dict):
            entry = self.entry(path, value)
            if entry:
                self.checks.append(ChunksCheck([entry], every=True, line=self.strict.line_of(path)))
            return
        entries = self._listed(
            path,
            value,
            "chunks must be a list of expected chunks (each matches some chunk) "
            "or a mapping (every chunk matches)",
        )
        if entries:
            self.checks.append(ChunksCheck(entries, line=self.strict.line_of(path)))

    def _listed(self, path: tuple[str | int, ...], value: JSONValue, problem: str) -> list[Entry]:
        """The entries of a non-empty list of mappings (empty ones left out); else ``problem``."""
        if not isinstance(value, list) or not value:
            self.problem(path, problem)
            return []
        return [e for n, item in enumerate(value) if (e := self.entry(path + (n,), item))]

    def _final_event(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        self._value(path, value, "final_event", _final_event)

    def _concatenated_content(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        self._value(path, value, _place(path), _content)

    def _events(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        if isinstance(value, dict):
            for kind, expected in value.items():
                expr = self.expr(path + (kind,), expected)
                if expr is not None:
                    self.checks.append(EventTypeCheck(str(kind), expr, self.strict.line_of(path + (kind,))))
            return
        entries = self._listed(
            path,
            value,
            "events must be a list of expected events (- type: handoff ...) or a "
            "mapping of event types to expectations (handoff: not_exists)",
        )
        if entries:
            self.checks.append(EventsCheck(entries, self.strict.line_of(path)))

    def _spans(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        from .strict_spans import compile_spans

        compile_spans(self, path, value)

    def _response(self, path: tuple[str | int, ...], value: JSONValue) -> None:
        if not isinstance(value, dict):
            self.problem(path, f"response must be a mapping with any of {', '.join(RESPONSE_KEYS)}")
            return
        for key, inner in value.items():
            where = path + (key,)
            if key not in RESPONSE_KEYS:
                self.problem(
                    where,
                    f"unknown key 'response.{clip(key)}'{did_you_mean(key, RESPONSE_KEYS)} "
                    f"(response keys: {', '.join(RESPONSE_KEYS)})",
                )
            elif key == "content":
                self._value(where, inner, "response.content", _content)
            elif key == "agent":
                self._value(where, inner, "response.agent", _agent)
            else:
                getattr(self, f"_{key}")(where, inner)


def _place(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")


def _media(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def _header(name: str, expr: Expr) -> Getter:
    """A header's value; a plain text expectation also matches ignoring case and ``; params``."""

    def get(observed: Observed) -> tuple[bool, JSONValue]:
        headers = observed.get("headers") or {}
        value = headers.get(name.lower())
        if value is None:
            return False, None
        if expr.op == "equals" and isinstance(expr.arg, str) and _media(value) == _media(expr.arg):
            return True, expr.arg
        return True, value

    return get


def _format(observed: Observed) -> tuple[bool, JSONValue] | str:
    return True, "sse" if observed.get("stream") else "json" if observed.get("is_json") else observed.get(
        "content_type"
    )


def _status(observed: Observed) -> tuple[bool, JSONValue]:
    return True, observed.get("status")


def _final_event(observed: Observed) -> tuple[bool, JSONValue] | str:
    if not observed.get("stream"):
        return f"expected an SSE stream, got {content_type_text(observed)}"
    return observed.get("final_event") is not None, observed.get("final_event")


def _content(observed: Observed) -> tuple[bool, JSONValue]:
    return observed.get("content") is not None, observed.get("content")


def _agent(observed: Observed) -> tuple[bool, JSONValue]:
    return observed.get("agent") is not None, observed.get("agent")


def compile_strict(strict: Strict, where: str) -> tuple[list[Check], list[Problem]]:
    """The checks a strict block asks for, and the problems found in it."""
    compiler = _Compiler(strict, where)
    compiler.compile()
    return compiler.checks, compiler.problems


def wants_stream(strict: Strict | None) -> bool:
    """Whether the strict block checks a stream (so an ``**Input:**`` request streams)."""
    return strict is not None and (bool(STREAM_KEYS & set(strict.data)) or strict.data.get("format") == "sse")
