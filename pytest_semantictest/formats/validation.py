"""Turn pydantic validation errors into path-addressed problems with a did-you-mean."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import Problem, did_you_mean
from .jsonsource import place

_TYPE_WORDS = {
    "string_type": "must be a string",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "missing": "is required",
}


def free_key(key: Any) -> bool:
    """Keys users may add anywhere: ``x-`` extensions and ``$schema``."""
    return isinstance(key, str) and (key.startswith("x-") or key == "$schema")


def strip_free_keys(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if not free_key(k)}
    return data


def _model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The pydantic model that owns the last key of ``loc`` (to suggest its fields)."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return None
        current = _inner_model(field.annotation)
        if current is None:
            return None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def problems_from(
    exc: ValidationError, model: type[BaseModel], line_of: Callable[[Sequence[str | int]], int | None]
) -> list[Problem]:
    """One problem per pydantic error, addressed by JSON path, with the source line."""
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if not (isinstance(p, str) and "[" in p and p.endswith("]"))]
        kind = err["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1])
            owner = _model_at(model, loc)
            fields = list(owner.model_fields) if owner else []
            problems.append(
                Problem(place(loc[:-1]), f"unknown key '{key}'{did_you_mean(key, fields)}", line_of(loc))
            )
            continue
        if kind == "missing":
            problems.append(Problem(place(loc[:-1]), f"'{loc[-1]}' is required", line_of(loc[:-1])))
            continue
        message = _TYPE_WORDS.get(kind, err["msg"])
        if kind not in _TYPE_WORDS and message.startswith("Value error, "):
            message = message[len("Value error, "):]
        got = err.get("input")
        if kind in _TYPE_WORDS and got is not None:
            message += f", got {_short(got)}"
        problems.append(Problem(place(loc), message, line_of(loc)))
    return _dedupe(problems)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.place, p.message) not in seen:
            seen.add((p.place, p.message))
            out.append(p)
    return out
