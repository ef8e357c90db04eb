"""W3C trace context for the requests a test sends, so the spans an agent exports can be told apart
by test (``docs/traces.md``).

While the run's OTLP receiver is on, each execution of a case runs inside :func:`tracing`: its
execution id becomes a trace id, and every request made through the plugin's HTTP clients
(:mod:`.http_clients`) carries a ``traceparent`` header with it, unless the test set one itself. An
agent whose framework continues incoming trace context then exports that execution's spans under
that trace id. Outside :func:`tracing` nothing is added, so runs without the receiver send exactly
what the spec says.

:data:`EXPORT_ENV` is what an agent the plugin starts gets in its environment to export to the
receiver (empty while none runs).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

HEADER = "traceparent"
CURRENT: ContextVar[str | None] = ContextVar("semantictest_trace_id", default=None)
SENT: dict[str, list[str]] = {}
"""Trace id -> the parent span ids its requests carried (an agent's root span for a request names one)."""
EXPORT_ENV: dict[str, str] = {}
"""``OTEL_EXPORTER_OTLP_ENDPOINT`` and friends while the receiver runs (set by the runtime)."""
ANNOUNCE: list[Callable[[str, str], None]] = []
"""Told ``(trace id, "begin" | "end")`` as an execution starts and ends (set by the runtime: the
receiver keeps each execution's window, for spans that carry no trace context of ours)."""
_HEX32 = re.compile(r"[0-9a-f]{32}")


def trace_id_for(execution_id: str) -> str:
    """The trace id of an execution: its id when that is already 32 lowercase hex digits (not all
    zero, which W3C forbids), else a hash of it."""
    if _HEX32.fullmatch(execution_id) and execution_id.strip("0"):
        return execution_id
    return hashlib.sha256(execution_id.encode("utf-8")).hexdigest()[:32]


def traceparent(trace_id: str) -> str:
    """A ``traceparent`` value: version 00, the trace, a fresh parent span id (kept in :data:`SENT`),
    sampled."""
    parent = os.urandom(8).hex()
    SENT.setdefault(trace_id, []).append(parent)
    return f"00-{trace_id}-{parent}-01"


def sent(trace_id: str) -> list[str]:
    """The parent span ids the requests of ``trace_id`` carried so far."""
    return list(SENT.get(trace_id, ()))


@contextmanager
def tracing(execution_id: str) -> Iterator[str]:
    """Requests made inside carry ``execution_id``'s trace id; yields that trace id."""
    trace_id = trace_id_for(execution_id)
    token = CURRENT.set(trace_id)
    for tell in ANNOUNCE:
        tell(trace_id, "begin")
    try:
        yield trace_id
    finally:
        CURRENT.reset(token)
        for tell in ANNOUNCE:
            tell(trace_id, "end")


def current() -> str | None:
    """The trace id of the execution running here, if the receiver is on."""
    return CURRENT.get()


async def add_traceparent(request: httpx.Request) -> None:
    """An httpx request hook: the running execution's ``traceparent``, unless the request has one."""
    sync_add_traceparent(request)


def sync_add_traceparent(request: httpx.Request) -> None:
    trace_id = CURRENT.get()
    if trace_id is not None and HEADER not in request.headers:
        request.headers[HEADER] = traceparent(trace_id)


def with_traceparent(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` and, while an execution is traced, its ``traceparent`` (for clients that are not
    httpx: a WebSocket's opening request)."""
    out = dict(headers)
    trace_id = CURRENT.get()
    if trace_id is not None and not any(k.lower() == HEADER for k in out):
        out[HEADER] = traceparent(trace_id)
    return out
