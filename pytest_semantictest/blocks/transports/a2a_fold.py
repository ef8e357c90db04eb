"""A2A payloads of both protocol versions folded into one :class:`Reply`.

Each payload is validated with ``a2a-sdk``'s own types: v0.3 with its pydantic models
(``a2a.compat.v0_3.types``), v1.0 with its protobuf messages (``a2a.types``, through protobuf's JSON
reader). The reply is then built from the payload as received (a v1.0 ``Value`` would turn ``1`` into
``1.0``), in one place for both versions:

- an event's ``kind`` is the v0.3 name for both (``task``, ``message``, ``status-update``,
  ``artifact-update``); its ``data`` is the payload as it came;
- ``state`` is spelled the v0.3 way for both (``TASK_STATE_INPUT_REQUIRED`` is ``input-required``);
- a reply that is only a Message is a complete answer: ``final`` true and ``state`` ``completed`` (no
  task was made, so ``task_id`` stays null).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...json_types import JSONObject, JSONValue
from .reply import Reply
from .tool_calls import ToolCallShapes, calls_in

FINAL_STATES = frozenset(
    {"completed", "failed", "canceled", "cancelled", "rejected", "input-required", "auth-required"}
)
V03_KINDS = frozenset({"task", "message", "status-update", "artifact-update"})
V1_KINDS = {
    "task": "task",
    "message": "message",
    "statusUpdate": "status-update",
    "artifactUpdate": "artifact-update",
}


def state_name(state: JSONValue) -> str:
    """A task state in the v0.3 spelling (``TASK_STATE_COMPLETED`` -> ``completed``)."""
    text = str(state or "")
    if text.startswith("TASK_STATE_"):
        text = text[len("TASK_STATE_") :].lower().replace("_", "-")
    return text or "unspecified"


def fold_payload(data: str, reply: Reply, version: str, shapes: ToolCallShapes) -> None:
    """One JSON-RPC response (a stream event's data, or a whole body) of the given protocol version."""
    try:
        payload = json.loads(data)
    except ValueError:
        reply.event("unknown", data[:500])
        return
    if not isinstance(payload, dict):
        reply.event("unknown", payload)
        return
    if _is_rpc_error(payload):
        _rpc_error(payload, reply)
        return
    result = payload.get("result")
    found = _validated(result, version, reply)
    if isinstance(found, str):  # a known kind that does not validate: the reason is the problem
        reply.event(_kind_of(result, version), result)
        reply.problem(found)
        return
    if found is None:
        # kept, not a problem: a kind a later protocol adds; a reply with nothing else never completes
        kind = result.get("kind") if isinstance(result, dict) else None
        reply.event(f"unknown:{kind}" if kind else "unknown", result)
        return
    kind, body = found
    reply.event(kind, result)
    fold(reply, kind, body, shapes)


def _is_rpc_error(payload: JSONObject) -> bool:
    """An error object, or an ``error`` key without a ``result``."""
    return isinstance(payload.get("error"), dict) or ("error" in payload and "result" not in payload)


def _validated(result: JSONValue, version: str, reply: Reply) -> tuple[str, JSONObject] | str | None:
    """``result`` read as the version asked for; in the other version's shape it is read too, and
    that is a problem naming the version the agent seems to speak."""
    found = _v1(result) if version == "1.0" else _v03(result)
    if not isinstance(found, str) and found is not None:
        return found
    other = _v03(result) if version == "1.0" else _v1(result)
    if not isinstance(other, tuple):
        return found
    reply.problem(
        f"the agent answered an A2A {version} request with an A2A {_other(version)} {other[0]}: "
        f"name a2a_version: {_other(version)} in the front matter if that is the version it speaks"
    )
    return other


def _kind_of(result: JSONValue, version: str) -> str:
    if isinstance(result, dict) and version == "1.0" and len(result) == 1:
        return V1_KINDS.get(next(iter(result)), "unknown")
    return str(result.get("kind")) if isinstance(result, dict) else "unknown"


def _other(version: str) -> str:
    return "0.3" if version == "1.0" else "1.0"


def _rpc_error(payload: JSONObject, reply: Reply) -> None:
    error = payload.get("error")
    reply.event("error", payload)
    reply.error = error
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    reply.problem(f"JSON-RPC error {code}: {message}")


def _v03(result: JSONValue) -> tuple[str, JSONObject] | str | None:
    """(kind, result) if ``result`` validates as a v0.3 streaming result (Task, Message or an event);
    why not if it has a v0.3 kind but does not validate; None for anything else."""
    from a2a.compat.v0_3 import types as a2a
    from pydantic import ValidationError

    if not isinstance(result, dict) or result.get("kind") not in V03_KINDS:
        return None
    try:
        a2a.SendStreamingMessageSuccessResponse.model_validate({"jsonrpc": "2.0", "id": 0, "result": result})
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(str(p) for p in e['loc'][2:])}: {e['msg']}" for e in exc.errors()[:3])
        return f"a {result['kind']} that does not validate as A2A 0.3: {errors}"
    return str(result.get("kind")), result


def _v1(result: JSONValue) -> tuple[str, JSONObject] | str | None:
    """(kind, inner object) if ``result`` validates as a v1.0 StreamResponse (``{"task": ...}`` and its
    siblings) or as a bare Task (what GetTask and CancelTask answer); why not if it has one of their
    shapes but does not validate; None for anything else."""
    if not isinstance(result, dict) or "kind" in result:
        return None
    wrapped = len(result) == 1 and next(iter(result)) in V1_KINDS
    if not wrapped and not ("id" in result and "status" in result):
        return None
    problem = _v1_problem(result, wrapped)
    if problem is not None:
        return problem
    if wrapped:
        key, inner = next(iter(result.items()))
        return V1_KINDS[key], inner
    return "task", result


def _v1_problem(result: JSONObject, wrapped: bool) -> str | None:
    """Why ``result`` does not validate as a v1.0 StreamResponse (``wrapped``) or Task; None if it does."""
    from a2a.types import a2a_pb2
    from google.protobuf import json_format

    target: Any = a2a_pb2.StreamResponse() if wrapped else a2a_pb2.Task()
    try:
        json_format.ParseDict(result, target)
    except json_format.ParseError as exc:
        what = V1_KINDS[next(iter(result))] if wrapped else "task"
        return f"a {what} that does not validate as A2A 1.0: {exc}"
    return None


def fold(reply: Reply, kind: str, body: JSONObject, shapes: ToolCallShapes) -> None:
    """One Task, Message, status update or artifact update (either version's fields) into the reply."""
    fold_kind = _FOLDS.get(kind)
    if fold_kind is not None:
        fold_kind(reply, body, shapes)


def _fold_task(reply: Reply, body: JSONObject, shapes: ToolCallShapes) -> None:
    reply.task_id, reply.context_id = body.get("id") or reply.task_id, body.get("contextId")
    _status(reply, body.get("status"), shapes)
    for artifact in body.get("artifacts") or []:
        _artifact(reply, artifact, False, shapes)


def _fold_message(reply: Reply, body: JSONObject, shapes: ToolCallShapes) -> None:
    reply.context_id = body.get("contextId") or reply.context_id
    reply.messages.append(body)
    _parts(reply, body.get("parts"), shapes)
    reply.state = reply.state if reply.task_id else "completed"
    reply.final = True  # a Message is the whole answer


def _fold_status_update(reply: Reply, body: JSONObject, shapes: ToolCallShapes) -> None:
    reply.task_id, reply.context_id = body.get("taskId") or reply.task_id, body.get("contextId")
    _status(reply, body.get("status"), shapes)
    reply.final = reply.final or bool(body.get("final"))


def _fold_artifact_update(reply: Reply, body: JSONObject, shapes: ToolCallShapes) -> None:
    reply.task_id = body.get("taskId") or reply.task_id
    if isinstance(body.get("artifact"), dict):
        _artifact(reply, body["artifact"], bool(body.get("append")), shapes)


_FOLDS: dict[str, Callable[[Reply, JSONObject, ToolCallShapes], None]] = {
    "task": _fold_task,
    "message": _fold_message,
    "status-update": _fold_status_update,
    "artifact-update": _fold_artifact_update,
}
"""How each kind of result (the v0.3 names, for both versions) changes the reply."""


def _status(reply: Reply, status: JSONValue, shapes: ToolCallShapes) -> None:
    status = status if isinstance(status, dict) else {}
    reply.state = state_name(status.get("state"))
    if reply.state in FINAL_STATES:
        reply.final = True
    message = status.get("message")
    if isinstance(message, dict):
        reply.messages.append(message)
        reply.tool_calls.extend(_calls(message.get("parts"), shapes))
    if reply.state in ("failed", "rejected") and isinstance(message, dict):
        reply.error = _text_of(message.get("parts")) or reply.state


def _artifact(reply: Reply, artifact: JSONObject, append: bool, shapes: ToolCallShapes) -> None:
    known = next((a for a in reply.artifacts if a.get("artifactId") == artifact.get("artifactId")), None)
    if known is not None and append:
        known["parts"] = [*known.get("parts", []), *artifact.get("parts", [])]
    elif known is not None:
        known.clear()
        known.update(artifact)
    else:
        reply.artifacts.append(dict(artifact))
    _parts(reply, artifact.get("parts"), shapes)


def _text(part: JSONObject) -> str | None:
    if part.get("kind", "text") == "text" and isinstance(part.get("text"), str):
        return str(part["text"])
    return None


def _data(part: JSONObject) -> tuple[bool, JSONValue]:
    if part.get("kind", "data") == "data" and "data" in part:
        return True, part["data"]
    return False, None


def _parts(reply: Reply, parts: JSONValue, shapes: ToolCallShapes) -> None:
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        text = _text(part)
        if text is not None:
            reply.texts.append(text)
        found, data = _data(part)
        if found:
            reply.data.append(data)
    reply.tool_calls.extend(_calls(parts, shapes))


def _calls(parts: JSONValue, shapes: ToolCallShapes) -> list[JSONObject]:
    out: list[JSONObject] = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict):
            found, data = _data(part)
            if found:
                out.extend(calls_in(data, shapes))
    return out


def _text_of(parts: JSONValue) -> str:
    return "".join(_text(p) or "" for p in parts if isinstance(p, dict)) if isinstance(parts, list) else ""
