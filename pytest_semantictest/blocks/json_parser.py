"""JsonParser: parses a JSON string into ``parsed``; failures give ``{error, raw}``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .base import Block, BlockError

if TYPE_CHECKING:
    from ..step import StepContext


class JsonParser(Block):
    name = "JsonParser"
    concurrency_safe = True
    inputs = ("body",)
    input_keys = frozenset(inputs)
    outputs = ("parsed",)

    async def process(self, inputs: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
        if "body" not in inputs:
            raise BlockError("JsonParser needs input 'body' (a JSON string); the input named nothing")
        body = inputs["body"]
        if isinstance(body, (dict, list)):
            return {"parsed": body}
        if isinstance(body, bytes):
            body = body.decode("utf-8", "replace")
        if not isinstance(body, str):
            raise BlockError(f"JsonParser needs a string to parse, got {type(body).__name__}")
        try:
            return {"parsed": json.loads(body)}
        except json.JSONDecodeError as exc:
            raise BlockError(f"JSON parse error: {exc.msg} at line {exc.lineno} column {exc.colno}") from None

    def error_output(self, inputs: dict[str, Any], message: str) -> dict[str, Any]:
        return {"error": message, "raw": inputs.get("body")}
