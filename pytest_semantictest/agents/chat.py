"""Conversation turns with an agent: OpenAI-style chat completions or the highbar protocol.

``openai``: every turn POSTs ``{model, messages, ...options}`` with the whole history (the agent
is stateless); attachments become content parts. ``highbar``: every turn sends the new user
message only (the agent keeps the conversation, keyed by the ``X-Highbar-Test`` execution id),
through the session's agent pool when the agent was acquired there (tool calls from its traces).
Both give a :class:`Reply` with the text, tool calls (``{name, arguments, result, error}``) and
whether the agent awaits input. Every request goes through the one agent exchange
(:mod:`pytest_semantictest.agents.exchange`), directly or through the pool's ``LiveAgent``.
"""

from __future__ import annotations

import base64
import dataclasses
import mimetypes
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ..json_types import JSONObject, JSONValue
from .config import AgentConfig
from .errors import AgentError
from .protocol import AgentReply, send, send_json
from .replies import not_chat_completion, openai_message
from .traces import ToolCall

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..step import StepContext

    Attachment: TypeAlias = Mapping[str, JSONValue] | BaseModel
    """An attachment as a format wrote it: its keys, or its format's typed model (Yao)."""

PROTOCOLS = ("openai", "highbar")
DEFAULT_AWAITING_TOOLS = ("request_confirmation", "ask_user", "get_user_input")


@dataclass
class ChatTarget:
    """The agent under test as conversation steps reach it."""

    config: AgentConfig
    protocol: str = "openai"
    key: str | None = None
    """The agent pool key when the suite acquires the agent (it starts it, or reads its traces)."""
    model: str | None = None
    body: JSONObject = field(default_factory=dict)
    """Extra fields of every OpenAI-style request."""
    awaiting_tools: tuple[str, ...] = DEFAULT_AWAITING_TOOLS
    awaiting_pattern: str | None = None
    description: str | None = None
    tools: tuple[str, ...] = ()

    @property
    def endpoint(self) -> str:
        return self.config.endpoint


@dataclass
class Reply:
    """The agent's reply as a conversation turn reads it (from the exchange's ``AgentReply``, or the
    pool's ``LiveAgent`` turn): text, tool calls as turn records write them, whether it awaits input."""

    text: str
    tool_calls: list[JSONObject]
    awaiting_input: bool | None
    data: JSONValue
    elapsed_ms: float
    session: JSONObject = field(default_factory=dict)


def user_message(text: JSONValue, attachments: Sequence[Attachment] = ()) -> JSONObject:
    """A user message spec: ``{role, content, attachments?}`` (attachments are read when sent)."""
    message: JSONObject = {"role": "user", "content": text}
    if attachments:
        message["attachments"] = [_attachment_dict(a) for a in attachments]
    return message


def _attachment_dict(item: Attachment) -> JSONObject:
    if isinstance(item, Mapping):
        return dict(item)
    return {k: v for k, v in item.model_dump().items() if v is not None}


def message_specs(value: JSONValue | BaseModel, attachments: Sequence[Attachment] = ()) -> list[JSONObject]:
    """Input as written (text, a message, a list of messages) -> message specs; attachments go
    with the last user message."""
    if isinstance(value, str):
        return [user_message(value, attachments)]
    items = value if isinstance(value, list) else [value]
    messages = [dict(m) if isinstance(m, Mapping) else m.model_dump(exclude_none=True) for m in items]
    if attachments:
        last = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        if last is None:
            messages.append(user_message("", attachments))
        else:
            last["attachments"] = [*last.get("attachments", []), *(_attachment_dict(a) for a in attachments)]
    return messages


def text_of(message: Mapping[str, JSONValue]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return "" if content is None else str(content)


def history(turns: Sequence[Mapping[str, JSONValue]]) -> list[JSONObject]:
    """The message specs of earlier turns: what was sent, then the agent's reply text."""
    messages: list[JSONObject] = []
    for turn in turns:
        messages.extend(turn.get("sent") or [])
        messages.append({"role": "assistant", "content": turn.get("output") or ""})
    return messages


def materialize(messages: Sequence[Mapping[str, JSONValue]], base_dir: Path | None) -> list[JSONObject]:
    """Message specs -> OpenAI messages: attachments read and turned into content parts."""
    out = []
    for message in messages:
        attachments = message.get("attachments")
        clean = {k: v for k, v in message.items() if k != "attachments"}
        if isinstance(clean.get("content"), list):  # Yao's parts: {"type": "image", "source": "file://..."}
            clean["content"] = [content_part(p, base_dir) if _names_file(p) else p for p in clean["content"]]
        if attachments:
            clean["content"] = _with_attachments(clean.get("content"), attachments, base_dir)
        out.append(clean)
    return out


def _with_attachments(content: JSONValue, attachments: JSONValue, base_dir: Path | None) -> list[JSONValue]:
    """A message's content as parts (its text one part), then its attachments as parts."""
    parts: list[JSONValue] = []
    if isinstance(content, list):
        parts.extend(content)
    elif content:
        parts.append({"type": "text", "text": str(content)})
    parts.extend(content_part(a, base_dir) for a in attachments)
    return parts


def _names_file(part: JSONValue) -> bool:
    """A content part written as an attachment (``type`` image/audio/file/text with ``source``, or an
    image/file with Yao's ``url``), not yet an OpenAI part."""
    if not isinstance(part, Mapping) or part.get("type") not in ("image", "audio", "file", "text"):
        return False
    return (
        isinstance(part.get("source"), str)
        or part.get("type") in ("image", "file")
        and isinstance(part.get("url"), str)
    )


def resolve_source(source: str, base_dir: Path | None) -> Path | None:
    """The local file an attachment names (``file://`` or a plain path), else None (a URL)."""
    if source.startswith(("http://", "https://", "data:")):
        return None
    raw = source.removeprefix("file://")
    path = Path(raw).expanduser()
    return path if path.is_absolute() or base_dir is None else base_dir / path


def content_part(attachment: Mapping[str, JSONValue], base_dir: Path | None) -> JSONObject:
    """One attachment as an OpenAI content part (``image_url``, ``input_audio``, ``file``, ``text``)."""
    kind = attachment.get("type", "file")
    source = str(attachment.get("source") or attachment.get("url") or "")
    path = resolve_source(source, base_dir)
    name = attachment.get("name") or _file_name(path, source)
    if path is None:
        return _linked_part(kind, source, name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AgentError(f"attachment {source}: cannot read {path}: {exc.strerror or exc}") from None
    mime = attachment.get("mime") or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if kind == "text":
        return {"type": "text", "text": data.decode("utf-8", errors="replace")}
    return _inline_part(kind, base64.b64encode(data).decode("ascii"), mime, name, path)


def _file_name(path: Path | None, source: str) -> str:
    """The name an attachment goes by when it gives none: its file's, or the last part of its URL."""
    return path.name if path else source.rsplit("/", 1)[-1]


def _linked_part(kind: JSONValue, source: str, name: JSONValue) -> JSONObject:
    """An attachment at a URL (or a data URL) as it is: an image by its URL, anything else a file."""
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": source}}
    return {"type": "file", "file": {"filename": name, "file_data": source}}


def _inline_part(kind: JSONValue, encoded: str, mime: JSONValue, name: JSONValue, path: Path) -> JSONObject:
    """A local file's base64 ``encoded`` bytes as the part of its kind."""
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}
    if kind == "audio":
        return {
            "type": "input_audio",
            "input_audio": {"data": encoded, "format": path.suffix.lstrip(".") or "wav"},
        }
    return {"type": "file", "file": {"filename": name, "file_data": f"data:{mime};base64,{encoded}"}}


def request_body(
    target: ChatTarget, messages: list[JSONObject], options: Mapping[str, JSONValue]
) -> JSONObject:
    """``{model, messages}`` plus the target's extra fields and the test's options."""
    body: JSONObject = dict(target.body)
    body.update({k: v for k, v in options.items() if k not in ("model", "messages")})
    model = options.get("model") or options.get("connector") or target.model
    if model:
        body["model"] = model
    body["messages"] = messages
    return body


def awaiting_input(
    data: JSONValue, text: str, calls: Sequence[Mapping[str, JSONValue]], target: ChatTarget
) -> bool | None:
    """Whether the agent awaits the user: its reply's ``awaiting_input``, a confirmation tool
    call, or the configured pattern on its text; None when nothing says."""
    if isinstance(data, Mapping):
        for holder in (data, openai_message(data)):
            if isinstance(holder, Mapping) and isinstance(flag := holder.get("awaiting_input"), bool):
                return flag
    if any(str(c.get("name")) in target.awaiting_tools for c in calls):
        return True
    if target.awaiting_pattern:
        from ..checks.regex import user_regex

        return user_regex(target.awaiting_pattern).search(text) is not None
    return None


def call_record(call: ToolCall | Mapping[str, JSONValue]) -> JSONObject:
    """A tool call (a ``ToolCall`` or a dict with ``fn``/``name``, ``args``/``arguments``) as turn
    records write it: ``{name, arguments, result?, error?}``."""
    raw = dict(call) if isinstance(call, Mapping) else dataclasses.asdict(call)
    out = {"name": raw.get("fn") or raw.get("name"), "arguments": raw.get("args", raw.get("arguments", {}))}
    if raw.get("result") is not None:
        out["result"] = raw["result"]
    if raw.get("error"):
        out["error"] = raw["error"]
    return out


async def send_chat(
    ctx: StepContext,
    target: ChatTarget,
    messages: list[JSONObject],
    options: Mapping[str, JSONValue],
    *,
    base_dir: Path | None = None,
    test_name: str = "",
    session: Mapping[str, JSONValue] | None = None,
) -> Reply:
    """Send the conversation's newest user message (highbar) or all of it (openai); raises AgentError."""
    if target.protocol == "highbar":
        return await _highbar(ctx, target, messages, test_name, session)
    body = request_body(target, materialize(messages, base_dir), options)
    reply = await send_json(ctx.http, target.config, body, ctx.execution_id)
    problem = not_chat_completion(
        reply.raw, reply.data, reply.headers.get("content-type", ""), bool(body.get("stream"))
    )
    if problem:  # never the raw text as the reply: a stream's or a page's text would pass a ``contains``
        raise AgentError(target.config.redactor.text(problem))
    return _chat_reply(reply, target)


def _chat_reply(
    reply: AgentReply, target: ChatTarget, session: Mapping[str, JSONValue] | None = None
) -> Reply:
    """The agent's reply as a conversation turn reads it."""
    calls = [call_record(c) for c in reply.tool_calls or []]
    return Reply(
        reply.text,
        calls,
        awaiting_input(reply.data, reply.text, calls, target),
        reply.data,
        reply.elapsed_ms,
        dict(session or {}),
    )


async def _highbar(
    ctx: StepContext,
    target: ChatTarget,
    messages: list[JSONObject],
    test_name: str,
    session: Mapping[str, JSONValue] | None,
) -> Reply:
    import time

    last = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    text = text_of(last) if last is not None else ""
    started = time.perf_counter()
    out = await _live_turn(ctx, target, text, test_name, session)
    if out is not None:
        return _live_reply(out, target, (time.perf_counter() - started) * 1000, session)
    reply = await send(ctx.http, target.config, text, ctx.execution_id, test_name=test_name, session=session)
    return _chat_reply(reply, target, session)


async def _live_turn(
    ctx: StepContext, target: ChatTarget, text: str, test_name: str, session: Mapping[str, JSONValue] | None
) -> JSONObject | None:
    """The turn through the session's running agent for the target (its calls read as highbar reads
    them); None when the session runs none for it."""
    pool = ctx.run_context.agents
    if pool is None or target.key is None:
        return None
    try:
        live = pool.get(target.key)
    except KeyError:
        return None
    return await live.turn(
        ctx.http,
        text,
        ctx.execution_id,
        observe=True,
        test_name=test_name,
        session=dict(session or {}),
    )


def _live_reply(
    out: JSONObject, target: ChatTarget, elapsed: float, session: Mapping[str, JSONValue] | None
) -> Reply:
    """A running agent's turn as a conversation turn reads it."""
    calls = [call_record(c) for c in out.get("calls") or []]
    return Reply(
        out.get("response") or "",
        calls,
        awaiting_input(None, out.get("response") or "", calls, target),
        None,
        elapsed,
        dict(session or {}),
    )


def target_from_mapping(
    raw: Mapping[str, JSONValue], *, cwd: Path | None = None, name: str = "agent"
) -> ChatTarget:
    """A target from already validated keys: ``endpoint``, ``protocol``, ``headers``, ``model``,
    ``body``, ``timeout`` (ms), ``awaiting_input_tools``, ``awaiting_input_pattern``."""
    config = AgentConfig(
        endpoint=str(raw["endpoint"]),
        timeout_ms=int(raw.get("timeout") or 60000),
        request_headers={str(k): str(v) for k, v in (raw.get("headers") or {}).items()},
        settle_time_ms=0,
        cwd=cwd or Path.cwd(),
        name=name,
    )
    tools = raw.get("awaiting_input_tools")
    return ChatTarget(
        config,
        str(raw.get("protocol") or "openai"),
        None,
        raw.get("model"),
        dict(raw.get("body") or {}),
        tuple(tools) if tools is not None else DEFAULT_AWAITING_TOOLS,
        raw.get("awaiting_input_pattern"),
    )
