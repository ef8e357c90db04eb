"""Block registry: built-in blocks, entry-point blocks and blocks registered at run time."""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points

from .base import Block

ENTRY_POINT_GROUP = "pytest_semantictest.blocks"

_BUILTIN: dict[str, str] = {
    "HttpRequest": "http_request:HttpRequest",
    "JsonParser": "json_parser:JsonParser",
    "StreamParser": "stream.block:StreamParser",
    "ValidateContent": "validate_content:ValidateContent",
    "ValidateTools": "validate_tools:ValidateTools",
    "LLMJudge": "llm_judge:LLMJudge",
    "Loop": "loop:Loop",
    "MockData": "mock_data:MockData",
    "AgentTurn": "agent_turn:AgentTurn",
    "AgentSessionEnd": "agent_turn:AgentSessionEnd",
    "ChatTurn": "chat_turn:ChatTurn",
    "Conversation": "conversation:Conversation",
    "SimulatedConversation": "simulated_conversation:SimulatedConversation",
    "ChatRequest": "chat_request:ChatRequest",
    "ChatResponse": "chat_response:ChatResponse",
    "TransportRequest": "transport_request:TransportRequest",
    "Spans": "spans:Spans",
    "McpCall": "mcp_call:McpCall",
}

_INTERNAL: dict[str, str] = {"YaoHook": "yao_hook:YaoHook", "McpRequest": "mcp_call:McpRequest"}
"""Blocks a format's compiler puts in a pipeline (not listed among the blocks a spec may name)."""

_registered: dict[str, type[Block]] = {}
_loaded_entry_points = False


def register_block(cls: type[Block], name: str | None = None) -> type[Block]:
    """Register a block class under ``name`` (default ``cls.name`` or the class name).

    Usable as a decorator from ``conftest.py``.
    """
    if not (isinstance(cls, type) and issubclass(cls, Block)):
        raise TypeError(f"{cls!r} is not a subclass of pytest_semantictest.Block")
    key = name or cls.name or cls.__name__
    _registered[key] = cls
    return cls


def _load_entry_points() -> None:
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _registered.setdefault(ep.name, ep.load())


def known_blocks() -> list[str]:
    _load_entry_points()
    return sorted(set(_BUILTIN) | set(_registered))


def get_block(name: str) -> type[Block] | None:
    """The block class for ``name``, or None when no block has that name."""
    if name in _registered:
        return _registered[name]
    where = _BUILTIN.get(name) or _INTERNAL.get(name)
    if where is not None:
        module, _, attr = where.partition(":")
        cls: type[Block] = getattr(import_module(f"{__package__}.{module}"), attr)
        _registered[name] = cls
        return cls
    _load_entry_points()
    return _registered.get(name)
