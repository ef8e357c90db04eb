"""Tool calls in the shapes A2A agents put them, as the one tool-call evidence (``name``, ``arguments``,
``call_id``) that strict ``tool_calls`` checks read (docs/compliance.md, "Tool calls across dialects").

Read from an A2A data part (in a message, a status message or an artifact, either protocol version)
and from a WebAgents ``task.progress`` event's payload. Without a file's own shape, the first of these
that fits is taken:

1. ``{"name": "...", "arguments": {...}}`` (also with ``"type": "function_call"``, ``id``/``call_id``);
2. ``{"function": {"name": "...", "arguments": "..."}}`` (an OpenAI tool call, ``id`` beside it);
3. ``{"tool_call": {...}}``, ``{"toolCall": {...}}`` or ``{"tool_calls": [...]}`` around those;
4. ``{"tool": "...", ...}`` or ``{"tool_name": "...", ...}``: the arguments are ``args``,
   ``arguments``, ``input`` or ``parameters`` if one is there, else every other key.

Arguments written as a JSON string are read as JSON. A file whose agent uses another shape names it
in its front matter (``tool_calls: {name: <key>, arguments: <key> | rest, call_id: <key>}``); then only
that shape is read, so nothing else is mistaken for a call.
"""

from __future__ import annotations

import contextlib
import json

from pydantic import BaseModel, ConfigDict, Field

from ...json_types import JSONObject, JSONValue

NAME_KEYS = ("tool", "tool_name")
ARGUMENT_KEYS = ("args", "arguments", "input", "parameters")
WRAPPERS = ("tool_call", "toolCall")


class ToolCallShapes(BaseModel):
    """A file's own tool-call shape (the front matter's ``tool_calls``); ``None`` fields: the defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1)
    """The key whose value names the tool."""
    arguments: str = "rest"
    """The key holding the arguments, or ``rest``: every key but the name and the call id."""
    call_id: str | None = None
    """The key holding the call's id, if the agent sends one."""


DEFAULT = ToolCallShapes()


def shapes_of(value: JSONValue) -> ToolCallShapes:
    """The config's ``tool_calls`` (already validated by the format) as shapes; the defaults if absent."""
    return ToolCallShapes.model_validate(value) if isinstance(value, dict) else DEFAULT


def calls_in(data: JSONValue, shapes: ToolCallShapes) -> list[JSONObject]:
    """The tool calls ``data`` (a data part's value, an event's payload) holds; ``[]`` for none."""
    if not isinstance(data, dict):
        return []
    if shapes.name is not None:
        return _own(data, shapes)
    call = _default(data)
    if call is not None:
        return [call]
    for key in WRAPPERS:
        if isinstance(data.get(key), dict):
            return calls_in(data[key], shapes)
    if isinstance(data.get("tool_calls"), list):
        return [c for item in data["tool_calls"] for c in calls_in(item, shapes)]
    return []


def _own(data: JSONObject, shapes: ToolCallShapes) -> list[JSONObject]:
    name = data.get(str(shapes.name))
    if not isinstance(name, str) or not name:
        return []
    if shapes.arguments == "rest":
        arguments: JSONValue = {k: v for k, v in data.items() if k not in (shapes.name, shapes.call_id)}
    else:
        arguments = data.get(shapes.arguments)
    return [_call(name, arguments, data.get(shapes.call_id) if shapes.call_id else None)]


def _default(data: JSONObject) -> JSONObject | None:
    """The call in the first default shape ``data`` has (a tool call itself, not one around it)."""
    for read in (_name_and_arguments, _openai_function, _tool_key):
        call = read(data)
        if call is not None:
            return call
    return None


def _name_and_arguments(data: JSONObject) -> JSONObject | None:
    """``{"name": "...", "arguments": {...}}``, with ``call_id`` or ``id``."""
    if isinstance(data.get("name"), str) and "arguments" in data:
        return _call(data["name"], data["arguments"], data.get("call_id") or data.get("id"))
    return None


def _openai_function(data: JSONObject) -> JSONObject | None:
    """``{"function": {"name": "...", "arguments": "..."}}`` (an OpenAI tool call), ``id`` beside it."""
    function = data.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return _call(function["name"], function.get("arguments"), data.get("id") or data.get("call_id"))
    return None


def _tool_key(data: JSONObject) -> JSONObject | None:
    """``{"tool": "...", ...}`` or ``{"tool_name": "...", ...}``: the arguments under one of
    ``ARGUMENT_KEYS``, else every other key."""
    for key in NAME_KEYS:
        if isinstance(data.get(key), str) and data[key]:
            given = next((k for k in ARGUMENT_KEYS if k in data), None)
            rest = {k: v for k, v in data.items() if k not in (key, "id", "call_id", "type")}
            return _call(data[key], data[given] if given else rest, data.get("call_id") or data.get("id"))
    return None


def _call(name: str, arguments: JSONValue, call_id: JSONValue) -> JSONObject:
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):  # else kept as written: a check on it says what came
            arguments = json.loads(arguments)
    return {"name": name, "arguments": arguments, "call_id": call_id}
