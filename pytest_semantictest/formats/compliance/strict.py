"""Strict checks over the observed response (the ``observed`` slot); :mod:`.strict_yaml` builds
them from a case's ``**Strict:**`` YAML.

Keys: ``status``, ``headers``, ``body`` (JSONPath -> expression), ``format`` (sse, json),
``content_type``, ``chunks`` (a list: each entry matches some chunk; a mapping: every chunk),
``final_chunk``, ``final_event``, ``events`` (a list: entries match events in that order; a
mapping ``type: expression``), ``concatenated_content``, ``response`` (status, content,
agent, headers, body, content_type), and ``spans`` (the agent's OpenTelemetry spans:
:mod:`.strict_spans`). An unknown key is a collection problem with a
did-you-mean; a failed check is a :class:`~pytest_semantictest.model.Failure` naming the
YAML line, with operator, expected and actual for the diff.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from ...databus import DataBus
from ...errors import clip
from ...json_types import JSONObject, JSONValue
from ...model import CheckResult, Failure
from ...paths import compiled_jsonpath
from .expr import Expr

SLOT = "observed"
Entry = list[tuple[str, Expr, int]]
"""A mapping of paths to expressions, flattened: (path, expression, line)."""
Observed: TypeAlias = JSONObject
"""The ``observed`` slot: what the response blocks saw, as plain JSON (``ok``, ``status``, ``headers``,
``json``, ``stream``, ``chunks``, ``events``, ``reply``, ...)."""
Getter: TypeAlias = Callable[[Observed], "tuple[bool, JSONValue] | str"]
"""What a :class:`ValueCheck` reads of the observed response: (found, value), or why it cannot be read."""


def check_path(path: str) -> str | None:
    """Why ``path`` is not a usable JSONPath, or None."""
    try:
        compiled_jsonpath(path)
    except Exception as exc:  # jsonpath-ng raises its own lexer/parser errors  # noqa: BLE001
        return f"invalid path {clip(path)!r}: {clip(str(exc), 80)}"
    return None


def lookup(doc: JSONValue, path: str) -> tuple[bool, list[JSONValue]]:
    """(found, values): ``choices[*].x`` finds every element's ``x``."""
    if path in ("$", ""):
        return True, [doc]
    values = [match.value for match in compiled_jsonpath(path).find(doc)]
    return bool(values), values


def mismatches(doc: JSONValue, entry: Entry) -> list[tuple[str, str, int]]:
    """(path, why, line) for each part of ``entry`` that ``doc`` does not satisfy."""
    out = []
    for path, expr, line in entry:
        found, values = lookup(doc, path) if isinstance(doc, (dict, list)) else (False, [])
        why = expr.test(found, values)
        if why is not None:
            out.append((path, why, line))
    return out


def _failure(
    check: str, why: str, expr: Expr | None, actual: JSONValue, line: int | None, **details: str
) -> Failure:
    return Failure(check, why, expr.raw if expr else None, actual, expr.op if expr else None, line, details)


class _Base:
    line: int | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({SLOT})

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        observed = bus.get(SLOT)
        if not isinstance(observed, dict) or not observed.get("ok"):
            return CheckResult()  # no response at all: ResponseCheck reports it
        return CheckResult(self.failures(observed))

    def failures(self, observed: Observed) -> list[Failure]:
        raise NotImplementedError


@dataclass
class ValueCheck(_Base):
    """One expression against one observed value (status, content type, final event, ...)."""

    label: str
    get: Getter
    expr: Expr
    line: int | None = None

    def describe(self) -> str:
        return f"{self.label}: {self.expr.describe()}"

    def failures(self, observed: Observed) -> list[Failure]:
        got = self.get(observed)
        if isinstance(got, str):
            return [_failure(self.label, got, self.expr, None, self.line)]
        found, value = got
        why = self.expr.test(found, [value] if found else [])
        return (
            [] if why is None else [_failure(self.label, why, self.expr, value if found else None, self.line)]
        )


@dataclass
class DocCheck(_Base):
    """A JSONPath expression against the body (or the final chunk)."""

    label: str
    source: str
    path: str
    expr: Expr
    line: int | None = None

    def describe(self) -> str:
        return f"{self.label}: {self.expr.describe()}"

    def failures(self, observed: Observed) -> list[Failure]:
        doc = _document(observed, self.source)
        if isinstance(doc, str):
            return [_failure(self.label, doc, self.expr, None, self.line)]
        found, values = lookup(doc, self.path)
        why = self.expr.test(found, values)
        if why is None:
            return []
        actual = (values[0] if len(values) == 1 else values) if found else None
        return [_failure(self.label, why, self.expr, actual, self.line)]


def _document(observed: Observed, source: str) -> JSONValue:
    if observed.get("reply") is not None and source in (
        "reply",
        "body",
    ):  # a2a, realtime: the assembled reply
        return observed["reply"]
    if source == "reply":
        return "only a2a and realtime cases have a reply: check a completions response with body"
    if source == "final_chunk":
        if not observed.get("stream"):
            return (
                f"the response is not an SSE stream ({content_type_text(observed)}), so it has no final chunk"
            )
        return (
            observed.get("final_chunk")
            if observed.get("final_chunk") is not None
            else "the stream has no JSON chunks"
        )
    if observed.get("stream"):
        return "the response is an SSE stream, not a JSON body: check it with chunks, final_chunk or events"
    if not observed.get("is_json"):
        return f"the response body is not JSON ({clip(observed.get('text') or '', 80)!r})"
    return observed.get("json")


def content_type_text(observed: Observed) -> str:
    return f"content-type {observed.get('content_type') or 'not given'}"


@dataclass
class ChunksCheck(_Base):
    """``chunks:`` as a list (each entry matches some chunk) or a mapping (every chunk matches)."""

    entries: list[Entry]
    every: bool = False
    line: int | None = None

    def describe(self) -> str:
        return "chunks"

    def failures(self, observed: Observed) -> list[Failure]:
        if not observed.get("stream"):
            return [
                Failure(
                    "chunks", f"expected an SSE stream, got {content_type_text(observed)}", line=self.line
                )
            ]
        chunks = observed.get("chunks") or []
        if not chunks:
            return [Failure("chunks", "the stream has no JSON chunks", line=self.line)]
        out = []
        for n, entry in enumerate(self.entries):
            if self.every:
                for index, chunk in enumerate(chunks):
                    for path, why, line in mismatches(chunk, entry):
                        out.append(
                            Failure(
                                f"chunks {path}",
                                f"chunk {index + 1} of {len(chunks)}: {why}",
                                line=line,
                                details={"chunk": _json(chunk)},
                            )
                        )
                        break
                continue
            if not any(not mismatches(chunk, entry) for chunk in chunks):
                closest = min(chunks, key=lambda c: len(mismatches(c, entry)))
                reasons = "; ".join(f"{p}: {w}" for p, w, _ in mismatches(closest, entry))
                out.append(
                    Failure(
                        f"chunks[{n}]",
                        f"no chunk of {len(chunks)} matches {_entry_text(entry)}",
                        line=entry[0][2],
                        details={"closest chunk": _json(closest), "why": reasons},
                    )
                )
        return out


def _json(value: JSONValue) -> str:
    return clip(json.dumps(value, ensure_ascii=False, default=str), 500)


def _entry_text(entry: Entry) -> str:
    return "{" + ", ".join(f"{path}: {expr.describe()}" for path, expr, _ in entry) + "}"


@dataclass
class EventsCheck(_Base):
    """``events:`` entries matched, in order, by the events of the response or stream."""

    entries: list[Entry]
    line: int | None = None

    def describe(self) -> str:
        return "events"

    def failures(self, observed: Observed) -> list[Failure]:
        events = [e for e in observed.get("events") or [] if isinstance(e, dict)]
        start = 0
        for n, entry in enumerate(self.entries):
            hit = next((i for i in range(start, len(events)) if not mismatches(events[i], entry)), None)
            if hit is None:
                later = " after the events matched by the entries above" if n else ""
                seen = [
                    {k: e.get(k) for k in ("type", "from", "to", "agent", "status") if k in e} for e in events
                ]
                return [
                    Failure(
                        f"events[{n}]",
                        f"no event{later} matches {_entry_text(entry)}",
                        line=entry[0][2],
                        details={"events seen": _json(seen) if seen else "none"},
                    )
                ]
            start = hit + 1
        return []


@dataclass
class EventTypeCheck(_Base):
    """``events: {handoff: not_exists}``: an expression over the events of one type."""

    type: str
    expr: Expr
    line: int | None = None

    def describe(self) -> str:
        return f"events {self.type}: {self.expr.describe()}"

    def failures(self, observed: Observed) -> list[Failure]:
        matching = [
            e for e in observed.get("events") or [] if isinstance(e, dict) and e.get("type") == self.type
        ]
        why = self.expr.test(bool(matching), [matching] if matching else [])
        return [] if why is None else [_failure(f"events {self.type}", why, self.expr, matching, self.line)]


@dataclass
class ResponseCheck:
    """A response arrived (else the case is an ERROR), and ``**Expected:**`` holds.

    ``failure``: the request must be rejected (status >= 400, or the connection refused);
    ``success``: status below 400.
    """

    expected: str | None = None
    line: int | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({SLOT, "response"})  # it reports a request that failed

    def describe(self) -> str:
        return f"expected: {self.expected or 'a response'}"

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        observed = bus.get(SLOT)
        observed = observed if isinstance(observed, dict) else {}
        if not observed.get("ok"):
            if self.expected == "failure":
                return CheckResult()  # refused: rejected all the same
            request = bus.get("response.request.url")
            return CheckResult(
                error=f"no response from {request or 'the server'}: {observed.get('error') or 'no status'}"
            )
        status = observed.get("status", 0)
        if self.expected == "failure" and status < 400:
            return CheckResult(
                [
                    Failure(
                        "expected: failure",
                        f"the request was accepted (status {status}) but the case expects it to be rejected",
                        ">= 400",
                        status,
                        "status >= 400",
                        self.line,
                    )
                ]
            )
        if self.expected == "success" and status >= 400:
            return CheckResult(
                [
                    Failure(
                        "expected: success",
                        f"the request was rejected with status {status}",
                        "< 400",
                        status,
                        "status < 400",
                        self.line,
                    )
                ]
            )
        return CheckResult()
