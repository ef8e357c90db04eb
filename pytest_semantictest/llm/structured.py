"""Structured output: the JSON schema we ask a model for, derived from the pydantic model that
parses its answer, and that parsing with a message the client can re-ask with.

The schemas are in the form OpenAI's strict mode asks for: every key required, nothing else
allowed, no ``$ref``s, optional values as ``["type", "null"]``. Titles, defaults and numeric
bounds are left out (the bounds are checked when the answer is parsed; leaving them out keeps the
schema, and so the replay cache's keys, what the recorded answers were asked with).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from functools import cache
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..json_types import JSONValue

M = TypeVar("M", bound=BaseModel)

_LEFT_OUT = frozenset({"title", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def strict_object(properties: dict[str, JSONValue]) -> dict[str, JSONValue]:
    """An object schema with exactly ``properties``, all required."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def response_schema(name: str, properties: dict[str, JSONValue]) -> dict[str, JSONValue]:
    """The ``json_schema`` of a response format: ``name`` and a strict object of ``properties``."""
    return {"name": name, "schema": strict_object(properties)}


def model_schema(
    model: type[BaseModel],
    name: str,
    *,
    keys: Mapping[str, Sequence[str]] | None = None,
    exclude: Collection[str] = (),
) -> dict[str, JSONValue]:
    """The ``json_schema`` of a response format for answers ``model`` parses.

    ``keys`` turns a mapping field (``dict[str, X]``) into an object with exactly those keys, each
    an ``X`` (a judge scores exactly the criteria it was given); ``exclude`` leaves fields out
    (the model's defaults apply when they are not asked for).
    """
    full = _json_schema(model)
    defs = full.get("$defs", {})
    properties: dict[str, JSONValue] = {}
    for field, schema in full["properties"].items():
        if field in exclude:
            continue
        strict = _strict(schema, defs)
        if keys and field in keys:
            strict = strict_object({key: strict["additionalProperties"] for key in keys[field]})
        properties[field] = strict
    return response_schema(name, properties)


@cache
def _json_schema(model: type[BaseModel]) -> dict[str, JSONValue]:
    """pydantic's schema of ``model``, made once (a judge asks for one per call); never changed:
    :func:`_strict` builds new dicts."""
    return model.model_json_schema()


def _strict(schema: Mapping[str, JSONValue], defs: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
    if "$ref" in schema:
        return _strict(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    out = {key: value for key, value in schema.items() if key not in _LEFT_OUT}
    members = out.pop("anyOf", None)
    if members is not None:
        out.update(_strict_union(members, defs))
    if "properties" in out:  # a model: its fields (its docstring is for people, not the model)
        return strict_object({k: _strict(v, defs) for k, v in out["properties"].items()})
    for nested in ("additionalProperties", "items"):  # the schema of a mapping's values, a list's items
        if isinstance(out.get(nested), Mapping):
            out[nested] = _strict(out[nested], defs)
    return out


def _strict_union(members: list[JSONValue], defs: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
    """An ``anyOf``: of bare types, one ``type`` list; else the strict form of each member."""
    strict = [_strict(m, defs) for m in members]
    if all(set(m) == {"type"} and isinstance(m["type"], str) for m in strict):
        return {"type": [m["type"] for m in strict]}
    return {"anyOf": strict}


def parse_answer(model: type[M], text: str, what: str) -> M:
    """``text`` (a model's JSON answer) validated by ``model``; a ValueError saying what is wrong
    (``not a valid <what> (<path>: <problem>; ...)``, the first five) when it is not one, for the
    client's re-ask. (Files people write get :func:`~pytest_semantictest.problems.problems_from` instead.)"""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise ValueError(f"not a valid {what} ({problems})") from None
