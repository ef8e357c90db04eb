"""The ``sse-vercel`` stream format: Vercel AI SDK streams.

Understands both the data-stream protocol (``0:"text"``, ``9:{...}``, ``a:{...}`` ...; bare
lines or inside ``data:``) and the newer JSON ``type`` events sent over SSE (``text-delta``,
``tool-input-delta``, ``tool-output-available`` ...). Streamed tool inputs are accumulated by
``toolCallId`` and JSON-parsed once at the end.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from ...json_types import JSONObject, JSONValue
from .parsed import Accumulator
from .sse import decode_event, loads, parse_events

FORMAT = "sse-vercel"
_CODE = re.compile(r"^([0-9a-z]):(.*)$", re.S)
_MISSING: Final = object()


@dataclass
class _Call:
    id: str | None
    chunk: JSONObject
    name: str | None = None
    parts: list[str] = field(default_factory=list)
    args: JSONValue = None
    result: JSONValue = _MISSING
    error: str | None = None


def _decode(data: str) -> tuple[str, JSONValue]:
    """``(code, value)`` for a data-stream line, ``("json", event)`` for a typed event."""
    stripped = data.strip()
    match = _CODE.match(stripped)
    if match:
        return match.group(1), loads(match.group(2))
    value = loads(stripped)
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return "json", value
    raise ValueError("not a Vercel AI SDK stream part")


def _is_error_result(result: JSONValue) -> bool:
    return isinstance(result, dict) and bool(result.get("error") or result.get("status") == "error")


class _Accumulator(Accumulator):
    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, _Call] = {}
        self.tool_errors = 0

    def call(self, ev: JSONObject) -> _Call:
        call_id = ev.get("toolCallId")
        key = call_id if isinstance(call_id, str) else f"\0{len(self.calls)}"
        call = self.calls.get(key)
        if call is None:
            chunk = {"type": "tool-call", "toolCallId": call_id, "toolName": None}
            call = self.calls[key] = _Call(call_id if isinstance(call_id, str) else None, chunk)
            self.chunks.append(chunk)
        name = ev.get("toolName")
        if not call.name and isinstance(name, str) and name:
            call.name = name
        return call

    def delta(self, ev: JSONObject, key: str) -> None:
        value = ev.get(key)
        if isinstance(value, str):
            self.call(ev).parts.append(value)

    def complete(self, ev: JSONObject, *keys: str) -> None:
        call = self.call(ev)
        for key in keys:
            if key in ev and ev[key] is not None:
                call.args = ev[key]
                return

    def result(self, ev: JSONObject, *keys: str) -> None:
        call = self.call(ev)
        value = next((ev[k] for k in keys if k in ev), None)
        call.result = value
        self.chunks.append({"type": "tool-result", "toolCallId": call.id, "result": value})
        if _is_error_result(value) or ev.get("isError") is True:
            self.tool_errors += 1

    def tool_error(self, ev: JSONObject) -> None:
        call = self.call(ev)
        message = str(ev.get("errorText") or ev.get("error") or ev.get("message") or "tool error")
        call.error = message
        self.tool_errors += 1
        self.chunks.append({"type": "tool-error", "toolCallId": call.id, "error": message})

    def stream_error(self, value: JSONValue) -> None:
        if isinstance(value, dict):
            value = value.get("errorText") or value.get("error") or value.get("message") or value
        self.error(str(value))

    def finish(self, reason: JSONValue) -> None:
        self.chunks.append({"type": "finish", "reason": reason})

    def code(self, code: str, value: JSONValue) -> None:
        ev = value if isinstance(value, dict) else {}
        if code == "0":
            self.add_text(value)
        elif code == "9":
            self.complete(ev, "args")
        elif code == "b":
            self.call(ev)
        elif code == "c":
            self.delta(ev, "argsTextDelta")
        elif code == "a":
            self.result(ev, "result")
        elif code == "d":
            self.finish(ev.get("finishReason"))
        elif code == "3":
            self.stream_error(value)
        # e: finish step, f: start step, 2: data, 8: annotations, g-k: reasoning/sources/files

    def typed(self, ev: JSONObject) -> None:
        """One JSON ``type`` event; everything without a handler (start, start-step, finish-step,
        reasoning, data-*) is ignored."""
        handle = _TYPED.get(ev["type"])
        if handle is not None:
            handle(self, ev)

    def _text_delta(self, ev: JSONObject) -> None:
        self.add_text(ev.get("delta", ev.get("textDelta")))

    def _input_available(self, ev: JSONObject) -> None:
        self.complete(ev, "input", "args")

    def _input_delta(self, ev: JSONObject) -> None:
        self.delta(ev, "inputTextDelta")

    def _call_delta(self, ev: JSONObject) -> None:
        self.delta(ev, "argsTextDelta")

    def _output_available(self, ev: JSONObject) -> None:
        self.result(ev, "output", "result")

    def _tool_failed(self, ev: JSONObject) -> None:
        """A tool that failed; one whose input did not validate still shows the input it got."""
        if ev["type"] == "tool-input-error" and isinstance(ev.get("input"), dict):
            self.complete(ev, "input")
        self.tool_error(ev)

    def _finish_event(self, ev: JSONObject) -> None:
        self.finish(ev.get("finishReason"))

    def tool_calls(self) -> list[JSONObject]:
        out = []
        for call in self.calls.values():
            call.chunk["toolName"] = call.name
            args = call.args
            if isinstance(args, str):
                call.parts, args = [args], None
            if args is None:
                args = self.arguments(call.parts, call.name, call.id)
            item: JSONObject = {"id": call.id, "name": call.name or "", "args": args}
            if call.result is not _MISSING:
                item["result"] = call.result
            if call.error is not None:
                item["error"] = call.error
            out.append(item)
        return out


_TYPED: dict[str, Callable[[_Accumulator, JSONObject], object]] = {
    "text-delta": _Accumulator._text_delta,
    "tool-call": _Accumulator._input_available,
    "tool-input-available": _Accumulator._input_available,
    "tool-input-start": _Accumulator.call,
    "tool-call-streaming-start": _Accumulator.call,
    "tool-input-delta": _Accumulator._input_delta,
    "tool-call-delta": _Accumulator._call_delta,
    "tool-result": _Accumulator._output_available,
    "tool-output-available": _Accumulator._output_available,
    "tool-output-error": _Accumulator._tool_failed,
    "tool-error": _Accumulator._tool_failed,
    "tool-input-error": _Accumulator._tool_failed,
    "finish": _Accumulator._finish_event,
    "error": _Accumulator.stream_error,
}
"""The handler of each JSON ``type`` event (both the UI message stream's names and the older ones)."""


def parse_vercel(body: str) -> JSONObject:
    """Parse a Vercel AI SDK stream into ``{text, toolCalls, chunks, metadata}``."""
    events, _ = parse_events(body)
    acc = _Accumulator()
    bad: list[str] = []
    recognised = 0
    for event in events:
        parts, failed = decode_event(event, _decode)
        bad.extend(failed)
        for code, value in parts:
            recognised += 1
            if code == "json":
                acc.typed(value)
            else:
                acc.code(code, value)
    tool_calls = acc.tool_calls()
    unread = None
    if events and not recognised:
        unread = (
            f"No {FORMAT} parts found in {len(events)} event(s) (first: {events[0].data[:80]!r}); "
            "is the stream format right?"
        )
    return acc.output(FORMAT, tool_calls, len(bad), unread, toolErrorCount=acc.tool_errors)
