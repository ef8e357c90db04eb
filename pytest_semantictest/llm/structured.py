"""JSON Schemas for structured output: every key required, nothing else allowed (what OpenAI's
strict mode asks for)."""

from __future__ import annotations

from typing import Any


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema with exactly ``properties``, all required."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def response_schema(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    """The ``json_schema`` of a response format: ``name`` and a strict object of ``properties``."""
    return {"name": name, "schema": strict_object(properties)}
