"""The run's OTLP receiver: OTLP over HTTP (``POST /v1/traces``, protobuf or JSON, gzip or not) on
127.0.0.1, spans kept by trace id for the tests that sent them (``docs/traces.md``).

Decoding is ``opentelemetry-proto``'s; OTLP/JSON's hex trace and span ids are turned into the
base64 that protobuf's JSON mapping reads. A malformed payload is answered ``400`` with what was
wrong, an unknown content type ``415``, a body over :data:`MAX_BODY` ``413``: never a crash, and the
receiver goes on. At most :data:`MAX_SPANS` spans are kept; past that the oldest traces are dropped
and counted (:attr:`SpanReceiver.dropped`).

Under xdist the receiver runs in the controller (agents shared by workers export to one place); a
worker reads its tests' spans with ``GET /semantictest/spans?trace=ID&wait=S&quiet=S``
(:class:`~.source.RemoteSpans`).
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..json_types import JSONValue
from .attribution import Attribution, Unattributed
from .model import Span, raw_spans, to_span

_Raw = tuple[object, str]  # an OTLP span message and its service name

MAX_BODY = 64 * 1024 * 1024
MAX_SPANS = 500_000
TRACES_PATH = "/v1/traces"
SPANS_PATH = "/semantictest/spans"
EXECUTIONS_PATH = "/semantictest/executions"


class OtlpError(ValueError):
    """A payload that is not an OTLP trace export: the message says what was wrong."""


def decode(body: bytes, content_type: str, encoding: str = "") -> list[tuple[str, object, str]]:
    """The spans of one export request, as :func:`~.model.raw_spans` gives them; raises OtlpError
    naming what is wrong."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if encoding.strip().lower() == "gzip":
        try:
            body = gzip.decompress(body)
        except (OSError, EOFError, zlib.error) as exc:
            raise OtlpError(f"the gzip body cannot be read: {exc}") from None
    request = ExportTraceServiceRequest()
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/x-protobuf":
        try:
            request.ParseFromString(body)
        except DecodeError as exc:
            raise OtlpError(f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from None
    elif kind == "application/json":
        try:
            data = json.loads(body)
            json_format.ParseDict(_base64_ids(data), request)
        except (ValueError, TypeError, json_format.ParseError) as exc:
            raise OtlpError(f"not an OTLP/JSON ExportTraceServiceRequest: {exc}") from None
    else:
        raise OtlpError(
            f"content type {content_type!r}: OTLP over HTTP is application/x-protobuf or application/json"
        )
    return raw_spans(request)


_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _base64_ids(data: JSONValue) -> JSONValue:
    """OTLP/JSON writes ids as hex; protobuf's JSON mapping reads bytes as base64."""
    if not isinstance(data, dict):
        raise OtlpError("the body is not a JSON object")
    for resource in data.get("resourceSpans") or []:
        for scope in (resource or {}).get("scopeSpans") or []:
            for span in (scope or {}).get("spans") or []:
                for holder in [span, *(span.get("links") or [])]:
                    for key in _ID_KEYS:
                        value = holder.get(key)
                        if isinstance(value, str) and value:
                            try:
                                holder[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
                            except ValueError:
                                raise OtlpError(f"{key} {value!r} is not hex") from None
    return data


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many exporters at once (the default 5 resets connections under load)


class SpanReceiver:
    """The receiver: :meth:`start` binds 127.0.0.1 (``port`` 0: any free port) and serves in a thread."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.dropped = 0
        self.rejected = 0
        self._traces: OrderedDict[str, list[_Raw]] = OrderedDict()
        self._count = 0
        self._last: dict[str, float] = {}
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self.attribution = Attribution()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the receiver starts on first use)."""
        server = self.start()
        return f"http://127.0.0.1:{server.server_address[1]}"

    def start(self) -> ThreadingHTTPServer:
        if self._server is None:
            server = _Server(("127.0.0.1", self.port), _handler(self))
            threading.Thread(target=server.serve_forever, name="semantictest-otlp", daemon=True).start()
            self._server = server
        return self._server

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def add(self, spans: list[tuple[str, object, str]]) -> None:
        now = time.monotonic()
        with self._changed:
            for trace_id, raw, service in spans:
                kept = self._traces.get(trace_id)
                if kept is None:
                    kept = self._traces[trace_id] = []
                    self.attribution.arrived(trace_id, now)  # (a foreign trace: for the one-at-a-time rule)
                kept.append((raw, service))
                self._last[trace_id] = now
            self._count += len(spans)
            while self._count > MAX_SPANS and self._traces:
                old, gone = self._traces.popitem(last=False)
                self._last.pop(old, None)
                self.attribution.forget(old)
                self._count -= len(gone)
                self.dropped += len(gone)
            self._changed.notify_all()

    def _kept(self, trace_id: str) -> list[_Raw]:
        """A trace's spans as kept (under the lock)."""
        return self._traces.get(trace_id, [])

    def begin(self, trace_id: str, at_ns: int | None = None) -> None:
        """An execution of ours starts: its trace id, and its window for foreign traces. (Under the
        attribution's own lock, not the spans': an execution's start never waits for an export to be
        taken in.)"""
        self.attribution.begin(trace_id, at_ns)

    def end(self, trace_id: str, at_ns: int | None = None) -> None:
        self.attribution.end(trace_id, at_ns)

    def spans(
        self,
        trace_id: str,
        wait_s: float = 0.0,
        quiet_s: float = 0.0,
        roots: int = 0,
        parents: Collection[str] = (),
    ) -> list[Span]:
        """The spans of ``trace_id`` (:meth:`read`, without the word on unattributed traces)."""
        return self.read(trace_id, wait_s, quiet_s, roots, parents)[0]

    def read(
        self,
        trace_id: str,
        wait_s: float = 0.0,
        quiet_s: float = 0.0,
        roots: int = 0,
        parents: Collection[str] = (),
    ) -> tuple[list[Span], Unattributed]:
        """The spans of ``trace_id`` and of the foreign traces the one-at-a-time rule gives it
        (:mod:`.attribution`), and what that rule could not attribute. With ``wait_s``: waits up to that
        long until ``roots`` root spans of requests the test made (spans whose parent is one of
        ``parents``, the span ids its ``traceparent`` headers carried, or root spans of its foreign
        traces; a service's root span ends its handling of a request and is exported after every span
        under it) have come, and then until none came for ``quiet_s`` (exporters send in batches);
        never longer than ``wait_s`` in all."""
        deadline = time.monotonic() + wait_s
        wanted = {bytes.fromhex(p) for p in parents} if roots else set()
        with self._changed:
            while True:
                owned, foreign_roots, unattributed = self.attribution.attributed(trace_id, self._kept)
                found = [
                    *self._traces.get(trace_id, []),
                    *(r for t in owned for r in self._traces.get(t, [])),
                ]
                now = time.monotonic()
                if now >= deadline:
                    break
                last = max((self._last.get(t, 0.0) for t in [trace_id, *owned]), default=0.0) or now
                quiet_for = now - last
                seen = bool(found) or unattributed.traces > 0
                rooted = seen and (not wanted or _roots(found, wanted) + foreign_roots >= roots)
                if rooted and (quiet_for >= quiet_s or not found):  # (only unattributable: said at once)
                    break
                left = deadline - now
                if rooted:
                    left = min(left, quiet_s - quiet_for)
                self._changed.wait(max(0.005, left))
        return [to_span(raw, service) for raw, service in found], unattributed


def _roots(found: list[_Raw], parents: set[bytes]) -> int:
    """How many of a trace's spans have one of ``parents`` as their parent."""
    spans: list[Any] = [raw for raw, _ in found]  # (OTLP span messages)
    return len([raw for raw in spans if raw.parent_span_id in parents])


def _spans_query(query: dict[str, list[str]]) -> tuple[str, float, float, int, list[str]] | None:
    """What a worker asks of ``GET /semantictest/spans``, or None when it cannot be read."""
    try:
        trace_id = query["trace"][0]
        wait_s = min(60.0, float(query.get("wait", ["0"])[0]))
        quiet_s = min(10.0, float(query.get("quiet", ["0"])[0]))
        roots = int(query.get("roots", ["0"])[0])
        parents = [p for p in query.get("parents", [""])[0].split(",") if p]
    except (KeyError, ValueError):
        return None
    return trace_id, wait_s, quiet_s, roots, parents


def _execution_event(receiver: SpanReceiver, query: dict[str, list[str]]) -> str | None:
    """Tell ``receiver`` of an execution's start or end; what is wrong with the query, or None."""
    try:
        trace_id, event, at = query["trace"][0], query["event"][0], int(query["at"][0])
    except (KeyError, ValueError):
        return "give trace=ID, event=begin or end, at=NANOSECONDS"
    if event not in ("begin", "end"):
        return "event is begin or end"
    (receiver.begin if event == "begin" else receiver.end)(trace_id, at)
    return None


def _accepted(content_type: str) -> tuple[bytes, str]:
    """An ``ExportTraceServiceResponse`` in the encoding the export came in."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    if content_type.startswith("application/json"):
        return b"{}", "application/json"
    return ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf"


def _length(header: str | None) -> int:
    """A content-length header's value, -1 when absent or not a number."""
    try:
        return int(header or -1)
    except ValueError:
        return -1


def _handler(receiver: SpanReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (quiet)
            pass

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str) -> None:
            receiver.rejected += 1
            self._send(status, json.dumps({"code": 3, "message": message}).encode(), "application/json")

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            if path == EXECUTIONS_PATH:
                return self._execution()
            if path != TRACES_PATH:
                return self._error(404, f"only {TRACES_PATH} is served here")
            length = _length(self.headers.get("content-length"))
            if length < 0:
                return self._error(411, "a content-length is required")
            if length > MAX_BODY:
                return self._error(413, f"a body over {MAX_BODY} bytes")
            body = self.rfile.read(length)
            content_type = self.headers.get("content-type") or ""
            try:
                spans = decode(body, content_type, self.headers.get("content-encoding") or "")
            except OtlpError as exc:
                return self._error(415 if "content type" in str(exc) else 400, str(exc))
            receiver.add(spans)
            self._send(200, *_accepted(content_type))

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path != SPANS_PATH:
                return self._error(404, f"only {SPANS_PATH} is served here")
            asked = _spans_query(parse_qs(url.query))
            if asked is None:
                return self._error(400, "give trace=ID, and wait=SECONDS and quiet=SECONDS if wanted")
            found, unattributed = receiver.read(*asked)
            body = {"spans": [asdict(s) for s in found], "unattributed": asdict(unattributed)}
            self._send(200, json.dumps(body).encode(), "application/json")

        def _execution(self) -> None:
            """A worker's execution starts or ends (``?trace=ID&event=begin|end&at=NS``)."""
            self.rfile.read(int(self.headers.get("content-length") or 0))
            problem = _execution_event(receiver, parse_qs(urlsplit(self.path).query))
            if problem:
                return self._error(400, problem)
            self._send(200, b"{}", "application/json")

    return Handler
