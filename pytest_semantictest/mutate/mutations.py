"""The mutations, each named (``docs/mutation.md``), and which of them a recorded reply admits: tool
mutations only where the reply carries whole tool calls, text ones where it has text, truncation
only for a stream."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..json_types import JSONValue
from ..shown import shorten
from .body import (
    Body,
    Part,
    Path,
    args_path,
    call_name,
    call_slots,
    decoded_args,
    get,
    parse,
    put,
    text_slots,
)

SURE = "Sure."
REFUSAL = "I'm sorry, but I can't help with that."
UNEXPECTED_TOOL = "unexpected_tool"
ERROR_BODY = b'{"error": {"message": "mutation: the agent failed"}}'
KINDS = (
    "drop_tool_call",
    "add_tool_call",
    "change_argument",
    "drop_argument",
    "reorder_tool_calls",
    "reply_empty",
    "reply_sure",
    "reply_refusal",
    "truncate_stream",
    "error_status",
    "slow_reply",
)


@dataclass(frozen=True)
class Recorded:
    """One reply as the agent sent it: status, headers (without transfer encodings), decoded body;
    or what ``raised`` when no reply came."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    raised: BaseException | None = None
    slow: bool = False
    """The mutation ``slow_reply``: replaying it raises a timeout at once (nobody waits)."""

    @property
    def content_type(self) -> str:
        return next((v for k, v in self.headers if k.lower() == "content-type"), "")


@dataclass(frozen=True)
class Mutation:
    """One fault: its kind (a name in :data:`KINDS`), what it changed, in words, and the mutated reply."""

    kind: str
    change: str
    reply: Recorded = field(repr=False)


def mutations(reply: Recorded, forbidden: tuple[str, ...] = ()) -> list[Mutation]:
    """Every mutation that makes sense for ``reply`` (none for a reply that failed or was not 2xx)."""
    if reply.raised is not None or not (200 <= reply.status < 300 or reply.status == 101):
        return []  # (101: a realtime session, recorded as its server events)
    body = parse(reply.body, reply.content_type)
    found = _tool_mutations(body, forbidden) + _text_mutations(body)
    if body.kind in ("sse", "lines") and len(body.parts) > 1:
        found.append(
            ("truncate_stream", "the stream ends before its final event", _without(body, len(body.parts) - 1))
        )
    result = [Mutation(kind, change, replace(reply, body=edited.dump())) for kind, change, edited in found]
    result.append(
        Mutation(
            "error_status",
            "HTTP 500 with an error body",
            Recorded(500, (("content-type", "application/json"),), ERROR_BODY),
        )
    )
    result.append(Mutation("slow_reply", "no reply before the timeout", replace(reply, slow=True)))
    return result


Edit = tuple[str, str, Body]


def _edited(body: Body, change: Callable[[Body], None]) -> Body:
    copy = body.copy()
    change(copy)
    return copy


def _text_mutations(body: Body) -> list[Edit]:
    slots = text_slots(body)
    texts = [get(body.parts[i].value, p) for i, p in slots]
    if not any(isinstance(t, str) and t for t in texts):
        return []
    first = next(n for n, t in enumerate(texts) if t)
    return _reply_edits(body, slots, first, "".join(t for t in texts if isinstance(t, str)))


def _reply_edits(body: Body, slots: list[tuple[int, Path]], first: int, joined: str) -> list[Edit]:
    """The reply text (``joined``) replaced: empty, "Sure!" and a refusal (each unless it is that
    already); the new text goes in the ``first`` slot that had text, the other slots are emptied."""

    def setting(new: str) -> Callable[[Body], None]:
        def apply(b: Body) -> None:
            for n, (i, p) in enumerate(slots):
                put(b.parts[i], p, new if n == first else "")

        return apply

    found: list[Edit] = [("reply_empty", "the reply text is empty", _edited(body, setting("")))]
    if joined != SURE:
        found.append(("reply_sure", f"the reply text is {SURE!r}", _edited(body, setting(SURE))))
    if joined != REFUSAL:
        found.append(
            ("reply_refusal", f"the reply text is a refusal ({REFUSAL!r})", _edited(body, setting(REFUSAL)))
        )
    return found


def _argument_edits(body: Body, i: int, p: Path, call: JSONValue, label: str) -> list[Edit]:
    """Each argument of the call at ``p`` in part ``i`` changed to another value, and dropped."""
    where = args_path(call)
    assert where is not None  # (a call slot has readable arguments)
    found: list[Edit] = []
    for key, value in (decoded_args(get(call, where)) or {}).items():
        new = _other(value)
        found.append(
            (
                "change_argument",
                f"{label}: argument {key!r} {_shown(value)} -> {_shown(new)}",
                _edited(body, _set_arg(i, p + where, key, new)),
            )
        )
        found.append(
            (
                "drop_argument",
                f"{label}: argument {key!r} dropped",
                _edited(body, _set_arg(i, p + where, key, None)),
            )
        )
    return found


def _tool_mutations(body: Body, forbidden: tuple[str, ...]) -> list[Edit]:
    slots = call_slots(body)
    calls = [get(body.parts[i].value, p) for i, p in slots]
    found: list[Edit] = []
    for n, ((i, p), call) in enumerate(zip(slots, calls)):
        label = f"tool call #{n + 1} ({call_name(call)})"
        found.append(("drop_tool_call", f"dropped {label}", _drop_call(body, i, p)))
        found += _argument_edits(body, i, p, call, label)
    if slots:
        name = forbidden[0] if forbidden else UNEXPECTED_TOOL
        why = "forbidden" if forbidden else "unexpected"
        found.append(
            ("add_tool_call", f"added a call to the {why} tool {name!r}", _add_call(body, slots[-1], name))
        )
    names = [call_name(c) for c in calls]
    if len(set(names)) > 1:  # (two calls or more, not all of one tool)
        found.append(
            (
                "reorder_tool_calls",
                f"tool calls in reverse order ({', '.join(map(str, reversed(names)))})",
                _edited(body, _reverse(slots, calls)),
            )
        )
    return found


def _shown(value: JSONValue) -> str:
    return shorten(json.dumps(value, ensure_ascii=False), 60)


def _other(value: JSONValue) -> JSONValue:
    """A different value of the same JSON type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return "mutated" if value != "mutated" else "changed"
    if isinstance(value, list):
        return value[:-1] if value else ["mutated"]
    if isinstance(value, dict):
        return {} if value else {"mutated": True}
    return "mutated"


def _set_arg(index: int, where: Path, key: str, new: JSONValue) -> Callable[[Body], None]:
    """Set (``new`` None: drop) argument ``key``, keeping the arguments' form (a dict or a JSON string)."""

    def apply(b: Body) -> None:
        held = get(b.parts[index].value, where)
        args = dict(decoded_args(held) or {})
        if new is None:
            args.pop(key, None)
        else:
            args[key] = new
        put(b.parts[index], where, json.dumps(args, ensure_ascii=False) if isinstance(held, str) else args)

    return apply


def _without(body: Body, index: int) -> Body:
    return Body(body.kind, [p for n, p in enumerate(body.copy().parts) if n != index])


def _drop_call(body: Body, index: int, path: Path) -> Body:
    if not path:
        return _without(body, index)
    copy = body.copy()
    del get(copy.parts[index].value, path[:-1])[path[-1]]
    return copy


def _add_call(body: Body, slot: tuple[int, Path], name: str) -> Body:
    index, path = slot
    copy = body.copy()
    call = json.loads(json.dumps(get(copy.parts[index].value, path)))
    owner = call["function"] if isinstance(call.get("function"), dict) else call
    for key in ("name", "fn", "toolName", "tool_name"):
        if key in owner:
            owner[key] = name
    where = args_path(call)
    if where is not None:
        held = get(call, where)
        put(Part(call), where, "{}" if isinstance(held, str) else {})
    for key in ("id", "toolCallId", "tool_call_id"):
        if isinstance(call.get(key), str):
            call[key] = f"{call[key]}-mutated"
    if not path:
        copy.parts.insert(index + 1, Part(call, copy.parts[index].prefix))
    else:
        position = path[-1]
        assert isinstance(position, int)  # a call in a tool-call list (call_slots)
        get(copy.parts[index].value, path[:-1]).insert(position + 1, call)
    return copy


def _reverse(slots: list[tuple[int, Path]], calls: list[JSONValue]) -> Callable[[Body], None]:
    def apply(b: Body) -> None:
        for (i, p), call in zip(slots, reversed(calls)):
            put(b.parts[i], p, json.loads(json.dumps(call)))

    return apply
