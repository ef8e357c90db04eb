"""Reading a reply body: the text to check, and (beyond highbar) tool calls it carries.

Text rules are highbar's: a JSON object (by Content-Type, or because it parses as one)
gives ``response_path`` or the first of ``response, message, content, text, reply``
(a scalar, not null); anything else is the text as it came. Beyond highbar, an OpenAI
chat completion gives ``choices[0].message.content`` and its ``tool_calls``; a request made over the
OpenAI protocol (a Yao conversation turn) reads those fields only (:func:`openai_reply`); and a
``{"reply": ..., "tool_calls": [{"name", "arguments"|"args", "result"?, "error"?}]}``
reply gives its calls, so an agent needs no tracing SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from ..json_types import JSONObject, JSONValue
from ..paths import PathError, require_path, split_dotted
from ..shown import shorten
from .errors import AgentError
from .traces import ToolCall, error_text

REPLY_KEYS = ("response", "message", "content", "text", "reply")


@dataclass(frozen=True)
class ParsedReply:
    text: str
    data: JSONValue  # the parsed JSON, or None for plain text
    tool_calls: list[ToolCall] | None  # None: the reply says nothing about tool calls


def excerpt(text: str, limit: int = 200) -> str:
    return shorten(text, limit)


def parse_reply(raw: str, content_type: str, response_path: str | None) -> ParsedReply:
    """Text and tool calls of a non-empty 2xx body (a request over the OpenAI protocol reads
    :func:`openai_reply` instead). Raises ``AgentError``."""
    data, parsed = _json_body(raw, content_type)
    if not parsed:
        if response_path is not None:
            raise AgentError(
                f"the reply is not a JSON object, so response path '{response_path}' cannot be read. "
                f"Got: {excerpt(raw)!r}"
            )
        return ParsedReply(raw, None, None)
    calls = tool_calls_of(data)
    if response_path is not None:
        return ParsedReply(_text_at(data, response_path, calls), data, calls)
    if isinstance(data, dict):
        return ParsedReply(_object_text(data, calls), data, calls)
    if data is None:
        raise AgentError("the reply is JSON null: there is no text to check")
    return ParsedReply(data if isinstance(data, str) else raw, data, calls)


def _json_body(raw: str, content_type: str) -> tuple[JSONValue, bool]:
    """The body's JSON, and whether the reply is read as JSON: it says it is JSON, or it is an object."""
    declared = content_type == "application/json" or content_type.endswith("+json")
    try:
        data: JSONValue = json.loads(raw)
    except ValueError:
        if declared:
            raise AgentError(
                f"the reply says it is JSON but is not valid JSON. Got: {excerpt(raw)!r}"
            ) from None
        return None, False
    return data, declared or isinstance(data, dict)


def _text_at(data: JSONValue, response_path: str, calls: list[ToolCall] | None) -> str:
    """The text at the configured response path."""
    try:
        value = require_path(data, split_dotted(response_path))
    except PathError as e:
        raise AgentError(f"response path '{response_path}': {e}") from None
    if value is None and calls:
        value = ""  # a reply that is only tool calls
    if value is None:
        raise AgentError(f"response path '{response_path}' is null")
    return _as_text(value)


def _object_text(data: JSONObject, calls: list[ToolCall] | None) -> str:
    """The text of a JSON object reply: the first reply key it has, else an OpenAI chat completion's."""
    for key in REPLY_KEYS:
        if key in data:
            return _implicit_text(key, data[key])
    message = openai_message(data)
    if message is not None:
        return _openai_text(message, calls)
    keys = ", ".join(str(key) for key in data) or "none"
    raise AgentError(
        f"the JSON reply has none of {', '.join(REPLY_KEYS)} (keys: {keys}); "
        "set the response path to the reply text"
    )


def openai_reply(raw: str) -> ParsedReply:
    """An OpenAI chat completion's text (``choices[0].message.content``) and tool calls, read from the
    protocol's fields only: a ``response`` or ``text`` key next to them is no part of what the model
    said. A body that is not a JSON object comes back as it is, with no text, for the caller to say
    what it is (:func:`not_chat_completion`); an object without ``choices[0].message`` raises
    ``AgentError``."""
    try:
        data: JSONValue = json.loads(raw)
    except ValueError:
        return ParsedReply("", None, None)
    if not isinstance(data, dict):
        return ParsedReply("", data, None)
    message = openai_message(data)
    if message is None:
        keys = ", ".join(str(key) for key in data) or "none"
        raise AgentError(
            "the reply is not an OpenAI chat completion: it has no choices[0].message object "
            f"(keys: {excerpt(keys)}). Got: {excerpt(raw)!r}"
        )
    calls = tool_calls_of(data)
    return ParsedReply(_openai_text(message, calls), data, calls)


_JSON_KINDS = {
    str: "string",
    list: "list",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def not_chat_completion(raw: str, data: JSONValue, content_type: str, stream_asked: bool) -> str | None:
    """Why a 2xx reply to an OpenAI-style request is not that protocol's JSON (an object), naming what
    came back; None when it is an object. A body of ``data:``/``event:`` lines is an event stream,
    whatever its Content-Type says."""
    if isinstance(data, dict):
        return None
    media = content_type.split(";")[0].strip().lower() or "no Content-Type"
    if media == "text/event-stream" or raw.lstrip().startswith(("data:", "event:")):
        ended = "data: [DONE]" in raw or "data:[DONE]" in raw
        what = f"an event stream ({media})" + (
            "" if ended else " that ends before its [DONE] event (truncated)"
        )
        what += (
            ", which conversation turns do not read: remove 'stream' from the request's options"
            if stream_asked
            else ", which the request did not ask for"
        )
    elif data is None:
        what = f"{media} text"
    else:
        what = f"a JSON {_JSON_KINDS.get(type(data), type(data).__name__)}"
    return f"the agent's reply is not an OpenAI chat completion (a JSON object): it is {what}. Got: {excerpt(raw)!r}"


def tool_calls_of(data: JSONValue) -> list[ToolCall] | None:
    """Tool calls an OpenAI chat completion or a simple ``tool_calls`` reply carries."""
    if not isinstance(data, dict):
        return None
    message = openai_message(data)
    if message is not None:
        return _openai_calls(message)
    if "tool_calls" not in data:
        return None
    items = data["tool_calls"]
    if items is None:
        return []
    if not isinstance(items, list):
        raise AgentError(f"the reply's 'tool_calls' must be a list, got {type(items).__name__}")
    return [_call(item, f"tool_calls[{i}]") for i, item in enumerate(items)]


def _openai_calls(message: JSONObject) -> list[ToolCall]:
    """A chat completion message's ``tool_calls``, then its legacy ``function_call``."""
    calls = []
    for i, item in enumerate(message.get("tool_calls") or []):
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            raise AgentError(f"choices[0].message.tool_calls[{i}] has no 'function' object")
        calls.append(_call(function, f"choices[0].message.tool_calls[{i}].function"))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        calls.append(_call(legacy, "choices[0].message.function_call"))
    return calls


def openai_message(data: Mapping[str, JSONValue]) -> JSONObject | None:
    """``choices[0].message`` of an OpenAI chat completion, when it is an object."""
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return message
    return None


def _openai_text(message: JSONObject, calls: list[ToolCall] | None) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    if content is None:
        if calls:
            return ""  # a reply that is only tool calls
        raise AgentError("choices[0].message.content is null and there are no tool calls")
    return _as_text(content)


def _call(item: JSONValue, where: str) -> ToolCall:
    if not isinstance(item, dict):
        raise AgentError(f"{where} must be an object, got {type(item).__name__}")
    name = item.get("name", item.get("fn"))
    if not isinstance(name, str) or not name:
        raise AgentError(f"{where} has no 'name'")
    return ToolCall(name, _call_arguments(item, where), item.get("result"), error_text(item.get("error")))


def _call_arguments(item: JSONObject, where: str) -> JSONObject:
    """A call's ``arguments`` (or ``args``): an object, or JSON text of one; empty when absent."""
    args: JSONValue = item.get("arguments", item.get("args", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            raise AgentError(f"{where}.arguments is not valid JSON: {excerpt(args)!r}") from None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise AgentError(f"{where}.arguments must be an object, got {type(args).__name__}")
    return args


def _implicit_text(key: str, value: JSONValue) -> str:
    if value is None:
        raise AgentError(f"the reply's '{key}' is null: there is no text to check")
    if isinstance(value, (dict, list)):
        kind = "list" if isinstance(value, list) else "JSON object"
        raise AgentError(
            f"the reply's '{key}' is a {kind}, not text; set the response path to the reply text"
        )
    return _as_text(value)


def _as_text(value: JSONValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
