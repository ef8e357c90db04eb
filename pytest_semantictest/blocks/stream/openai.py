"""The ``sse-openai`` stream format: OpenAI (and compatible) chat-completion streams.

Text comes from ``choices[0].delta.content``. Tool-call argument fragments are accumulated
by ``index`` and JSON-parsed once at the end. A single non-streamed ``chat.completion`` JSON
object is accepted too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...json_types import JSONObject, JSONValue
from .parsed import Accumulator
from .sse import decode_event, loads, parse_events

FORMAT = "sse-openai"


@dataclass
class _Call:
    chunk: JSONObject
    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)
    args: JSONValue = None  # complete arguments given as an object (no fragments)

    def take(self, fragment: JSONObject) -> None:
        """What a fragment adds: the call's id and name (the first ones given), its arguments."""
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        if not self.id and isinstance(fragment.get("id"), str) and fragment["id"]:
            self.id = fragment["id"]
        name = function.get("name")
        if not self.name and isinstance(name, str) and name:
            self.name = name
        self._take_arguments(function.get("arguments"))

    def _take_arguments(self, arguments: JSONValue) -> None:
        """A string is a fragment of the arguments' JSON; an object is the whole arguments."""
        if isinstance(arguments, str):
            self.parts.append(arguments)
        elif isinstance(arguments, dict):
            self.args = arguments


def _error_text(error: JSONValue) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)
    return str(error)


class _Accumulator(Accumulator):
    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[JSONValue, _Call] = {}
        self.last_key: JSONValue = None
        self.messages = 0

    def feed(self, payload: JSONValue) -> bool:
        """Consume one decoded payload; False when it is not an OpenAI chunk."""
        if not isinstance(payload, dict):
            return False
        choices = payload.get("choices")
        if not isinstance(choices, list):
            if "error" in payload:
                self.error(_error_text(payload["error"]))
                return True
            return False
        for choice in choices:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._choice(choice)
        return True

    def _choice(self, choice: JSONObject) -> None:
        delta = choice.get("delta")
        streamed = isinstance(delta, dict)
        source = delta if streamed else choice.get("message")
        if isinstance(source, dict):
            self.add_text(source.get("content"))
            if not streamed:
                self.messages += 1
            tool_calls = source.get("tool_calls")
            if isinstance(tool_calls, list):
                for pos, fragment in enumerate(tool_calls):
                    if isinstance(fragment, dict):
                        self._fragment(fragment, None if streamed else (self.messages, pos))
            legacy = source.get("function_call")
            if isinstance(legacy, dict):
                self._fragment({"index": "function_call", "function": legacy}, None)
        reason = choice.get("finish_reason")
        if reason:
            self.chunks.append({"type": "finish", "reason": reason})

    def _key(self, fragment: JSONObject, fixed: JSONValue) -> JSONValue:
        """The call a fragment belongs to: the ``fixed`` key of a whole message's call, else its
        ``index``, else its ``id``, else the call it continues, else a new one."""
        if fixed is not None:
            return fixed
        index = fragment.get("index")
        if isinstance(index, (int, str)) and not isinstance(index, bool):
            return index
        call_id = fragment.get("id")
        if isinstance(call_id, str) and call_id:  # no index: match by id, else a new call
            return self._key_of_id(call_id)
        return self._unkeyed(fragment)

    def _key_of_id(self, call_id: str) -> JSONValue:
        for key, call in self.calls.items():
            if call.id == call_id:
                return key
        return ("id", call_id)

    def _unkeyed(self, fragment: JSONObject) -> JSONValue:
        """A fragment with neither index nor id continues the previous call, unless it names a tool
        and that call already has a name: then it starts a new one."""
        function = fragment.get("function")
        named = isinstance(function, dict) and isinstance(function.get("name"), str)
        last = self.calls.get(self.last_key)
        if last is not None and not (named and last.name):
            return self.last_key  # a continuation of the previous call
        return ("n", len(self.calls))

    def _fragment(self, fragment: JSONObject, fixed: JSONValue) -> None:
        key = self._key(fragment, fixed)
        self.last_key = key
        call = self.calls.get(key)
        if call is None:
            chunk: JSONObject = {"type": "tool-call", "toolCallId": None, "toolName": None}
            call = self.calls[key] = _Call(chunk)
            self.chunks.append(chunk)
        call.take(fragment)

    def tool_calls(self) -> list[JSONObject]:
        out = []
        for call in self.calls.values():
            call.chunk.update(toolCallId=call.id, toolName=call.name)
            args = call.args
            if args is None:
                args = self.arguments(call.parts, call.name, call.id)
            out.append({"id": call.id, "name": call.name or "", "args": args})
        return out


def _payloads(body: str) -> tuple[list[JSONValue], list[str], int]:
    """Decoded payloads, undecodable ones, and the number of events seen."""
    stripped = body.strip()
    if stripped[:1] in ("{", "["):  # a whole JSON document (non-streamed response)
        try:
            whole = loads(stripped)
        except ValueError:
            pass
        else:
            items = whole if isinstance(whole, list) else [whole]
            return items, [], len(items)
    events, _ = parse_events(body)
    payloads: list[JSONValue] = []
    bad: list[str] = []
    for event in events:
        values, failed = decode_event(event, loads)
        payloads.extend(values)
        bad.extend(failed)
    return payloads, bad, len(events)


def parse_openai(body: str) -> JSONObject:
    """Parse an OpenAI chat-completion stream into ``{text, toolCalls, chunks, metadata}``."""
    payloads, bad, n_events = _payloads(body)
    acc = _Accumulator()
    recognised = sum(1 for payload in payloads if acc.feed(payload))
    tool_calls = acc.tool_calls()
    unread = None
    if n_events and not recognised:
        if bad:
            unread = (
                f"No {FORMAT} chunks found: {len(bad)} data payload(s) were not JSON (first: {bad[0][:80]!r})"
            )
        else:
            unread = (
                f"No {FORMAT} chunks found in {n_events} event(s) (no 'choices'); is the stream format right?"
            )
    return acc.output(FORMAT, tool_calls, len(bad), unread)
