"""Deterministic (no LLM) rule engine and stream encoders for the example chat agent."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

CREATED = 1700000000
DEFAULT_MODEL = "semantictest-agent"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


@dataclass
class ToolCall:
    """One function call requested by the assistant."""

    id: str
    name: str
    arguments: dict[str, Any]

    @property
    def arguments_json(self) -> str:
        return _dumps(self.arguments)


@dataclass
class Reply:
    """Outcome of one assistant turn; ``special`` is "error" or "garbage"."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    special: str | None = None
    delay: float = 0.0

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def message_text(msg: Any) -> str:
    """Text of an OpenAI (str or content parts) or AI SDK UI (``parts``) message."""
    if not isinstance(msg, dict):
        return ""
    content = msg.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else msg.get("parts") or []
    return "".join(
        str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type", "text") == "text"
    )


def _has(low: str, word: str) -> bool:
    return re.search(rf"\b{word}\b", low) is not None


def _city(text: str) -> str | None:
    """City after the last "in", e.g. "weather in new york today?" -> "New York"."""
    hits = list(re.finditer(r"\bin\s+", text, re.I))
    if not hits:
        return None
    rest = text[hits[-1].end() :]
    m = re.match(
        r"([a-z][a-z .'-]*?)\s*(?:\b(?:today|tomorrow|right now|now|please)\b|[?.!,;]|$)", rest, re.I
    )
    return " ".join(w.capitalize() for w in m.group(1).split()) if m else None


def _event(text: str) -> dict[str, str]:
    """Loosely parse title/date/time from e.g. "book a meeting with bob tomorrow at 2pm"."""
    low = text.lower()
    quoted = re.search(r"[\"“']([^\"”']{2,})[\"”']", text)
    who = re.search(r"\bwith\s+([a-z][\w'-]*)", text, re.I)
    title = quoted.group(1) if quoted else f"Meeting with {who.group(1).capitalize()}" if who else "Meeting"
    date = re.search(rf"\b(today|tomorrow|{_WEEKDAYS}|\d{{4}}-\d{{2}}-\d{{2}})\b", low)
    time_ = "14:00"
    if m := re.search(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b", low):
        hour = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
        time_ = f"{hour:02d}:{m.group(2) or '00'}"
    elif m := re.search(r"\bat\s+(\d{1,2}):(\d{2})\b", low):
        time_ = f"{int(m.group(1)):02d}:{m.group(2)}"
    elif _has(low, "noon"):
        time_ = "12:00"
    return {"title": title, "date": date.group(1) if date else "today", "time": time_}


def _say_time(hhmm: str) -> str:
    """ "14:00" -> "2 PM", "09:30" -> "9:30 AM"."""
    hour, minute = (int(x) for x in hhmm.split(":"))
    label = f"{hour % 12 or 12}" + (f":{minute:02d}" if minute else "")
    return f"{label} {'PM' if hour >= 12 else 'AM'}"


def _scheduled_text(ev: dict[str, str]) -> str:
    when = ev["date"] if ev["date"] in ("today", "tomorrow") else f"on {ev['date'].capitalize()}"
    return f"I've scheduled your meeting for {_say_time(ev['time'])} {when}."


def respond(messages: list[dict[str, Any]]) -> Reply:
    """Compute the assistant reply for a conversation (stateless)."""
    user_idx = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"]
    if not user_idx:
        return Reply("Hello! How can I help you today?")
    last = user_idx[-1]
    text = message_text(messages[last]).strip()
    low = text.lower()
    answered = any(isinstance(m, dict) and m.get("role") == "tool" for m in messages[last + 1 :])
    counter = sum(
        len(m.get("tool_calls") or [])
        for m in messages
        if isinstance(m, dict) and m.get("role") == "assistant"
    )

    def call(name: str, args: dict[str, Any]) -> ToolCall:
        nonlocal counter
        counter += 1
        return ToolCall(f"call_{counter}", name, args)

    if _has(low, "garbage"):
        return Reply(special="garbage")
    if _has(low, "error"):
        return Reply(special="error")
    reply = _route(text, low, answered, [message_text(messages[i]) for i in user_idx[:-1]], call)
    reply.delay = 2.0 if _has(low, "slow") else 0.0
    return reply


def _route(text: str, low: str, answered: bool, history: list[str], call: Any) -> Reply:
    if re.search(r"\bwhat(?:'s|\s+is)\s+my\s+name\b", low):
        for earlier in reversed(history):
            if m := re.search(r"\bmy name is\s+([a-z][\w'-]*)", earlier, re.I):
                return Reply(f"Your name is {m.group(1)[0].upper() + m.group(1)[1:]}.")
        return Reply("I don't know your name yet.")
    if m := re.search(r"\bmy name is\s+([a-z][\w'-]*)", text, re.I):
        return Reply(f"Nice to meet you, {m.group(1)[0].upper() + m.group(1)[1:]}!")
    if _has(low, "weather"):
        city = _city(text)
        if city is None:
            return Reply("Which city would you like the weather for?")
        if answered:
            return Reply(f"The weather in {city} is 22°C and sunny.")
        return Reply(None, [call("get_weather", {"city": city})])
    if _has(low, "delete"):
        if answered:
            return Reply("The records have been deleted.")
        m = re.search(r"\bdelete\s+(.+?)[.!?]*$", text, re.I)
        return Reply(None, [call("delete_records", {"target": m.group(1) if m else "all"})])
    if re.search(r"\b(schedule|meeting|book)", low):
        ev = _event(text)
        if answered:
            return Reply(_scheduled_text(ev))
        return Reply(
            _scheduled_text(ev),
            [call("check_calendar", {"date": ev["date"], "time": ev["time"]}), call("create_event", ev)],
        )
    if re.search(r"\b(hello|hi)\b", low):
        return Reply("Hello! How can I help you today?")
    return Reply(f"You said: {text}")


def run_tool(tc: ToolCall) -> Any:
    """Fake, deterministic tool implementations used by the server-side agent loop."""
    args = tc.arguments
    return {
        "get_weather": {"city": args.get("city"), "temperature": 22, "unit": "celsius", "condition": "sunny"},
        "check_calendar": {"date": args.get("date"), "available": True},
        "create_event": {"event_id": "evt_1", "status": "created", **args},
    }.get(tc.name, {"deleted": 42})


def run_agent(messages: list[dict[str, Any]], first: Reply) -> tuple[list[tuple[ToolCall, Any]], Reply]:
    """Execute tool calls server-side until a text-only reply (max 3 rounds)."""
    history, steps, reply = list(messages), [], first
    for _ in range(3):
        if not reply.tool_calls:
            break
        history.append(
            {
                "role": "assistant",
                "content": reply.content,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments_json},
                    }
                    for c in reply.tool_calls
                ],
            }
        )
        for c in reply.tool_calls:
            result = run_tool(c)
            steps.append((c, result))
            history.append({"role": "tool", "tool_call_id": c.id, "content": _dumps(result)})
        reply = respond(history)
    return steps, reply


def usage(messages: list[dict[str, Any]], reply: Reply) -> dict[str, int]:
    """Fake token usage: whitespace-separated words."""
    prompt = sum(len(message_text(m).split()) for m in messages)
    completion = len((reply.content or "").split()) + 5 * len(reply.tool_calls)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def split_text(text: str) -> list[str]:
    """Split into word-sized deltas that concatenate back to ``text``."""
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def split_fragments(s: str, parts: int = 3) -> list[str]:
    """Split a string into ``parts`` roughly equal fragments (at least 2 when possible)."""
    size = max(1, -(-len(s) // parts))
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def completion_id(messages: list[dict[str, Any]]) -> str:
    return "chatcmpl-" + hashlib.sha1(_dumps(messages).encode()).hexdigest()[:12]


def openai_completion(reply: Reply, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Non-streaming ``chat.completion`` object."""
    msg: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        msg["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
            for c in reply.tool_calls
        ]
    return {
        "id": completion_id(messages),
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": usage(messages, reply),
    }


def openai_chunks(
    reply: Reply, model: str, messages: list[dict[str, Any]], include_usage: bool = False
) -> Iterator[str]:
    """SSE ``chat.completion.chunk`` events; tool arguments arrive in several fragments."""
    base = {
        "id": completion_id(messages),
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
    }

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        return f"data: {_dumps({**base, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': finish}]})}\n\n"

    yield event({"role": "assistant", "content": "" if reply.content else None})
    for piece in split_text(reply.content or ""):
        yield event({"content": piece})
    for i, c in enumerate(reply.tool_calls):
        for j, frag in enumerate(split_fragments(c.arguments_json)):
            tc: dict[str, Any] = {"index": i, "function": {"arguments": frag}}
            if j == 0:
                tc = {
                    "index": i,
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": frag},
                }
            yield event({"tool_calls": [tc]})
    yield event({}, reply.finish_reason)
    if include_usage:
        yield f"data: {_dumps({**base, 'choices': [], 'usage': usage(messages, reply)})}\n\n"
    yield "data: [DONE]\n\n"


def vercel_data_stream(steps: list[tuple[ToolCall, Any]], final: Reply, use: dict[str, int]) -> Iterator[str]:
    """AI SDK data stream protocol v1 lines (``0:``, ``9:``, ``a:``, ``d:``)."""
    for c, result in steps:
        yield f"9:{_dumps({'toolCallId': c.id, 'toolName': c.name, 'args': c.arguments})}\n"
        yield f"a:{_dumps({'toolCallId': c.id, 'result': result})}\n"
    for piece in split_text(final.content or ""):
        yield f"0:{_dumps(piece)}\n"
    finish = {
        "finishReason": "stop",
        "usage": {"promptTokens": use["prompt_tokens"], "completionTokens": use["completion_tokens"]},
    }
    yield f"d:{_dumps(finish)}\n"


def ui_message_stream(steps: list[tuple[ToolCall, Any]], final: Reply, message_id: str) -> Iterator[str]:
    """AI SDK 5 UI message stream (SSE JSON events ending with ``[DONE]``)."""

    def ev(obj: dict[str, Any]) -> str:
        return f"data: {_dumps(obj)}\n\n"

    yield ev({"type": "start", "messageId": message_id})
    yield ev({"type": "start-step"})
    for c, result in steps:
        yield ev({"type": "tool-input-start", "toolCallId": c.id, "toolName": c.name})
        for frag in split_fragments(c.arguments_json):
            yield ev({"type": "tool-input-delta", "toolCallId": c.id, "inputTextDelta": frag})
        yield ev(
            {"type": "tool-input-available", "toolCallId": c.id, "toolName": c.name, "input": c.arguments}
        )
        yield ev({"type": "tool-output-available", "toolCallId": c.id, "output": result})
    if steps:
        yield ev({"type": "finish-step"})
        yield ev({"type": "start-step"})
    if final.content:
        yield ev({"type": "text-start", "id": "text_1"})
        for piece in split_text(final.content):
            yield ev({"type": "text-delta", "id": "text_1", "delta": piece})
        yield ev({"type": "text-end", "id": "text_1"})
    yield ev({"type": "finish-step"})
    yield ev({"type": "finish", "finishReason": "stop"})
    yield "data: [DONE]\n\n"
