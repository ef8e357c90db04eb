"""Pydantic validation errors as path-addressed problems with a did-you-mean, and how a path is shown.

Shared by the formats (a spec file's errors) and the blocks (a block config's errors)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import UnionType
from typing import Any, Union

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from .errors import Problem, clip, did_you_mean
from .shown import shorten

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

_LIMIT_WORDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}


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


def _clean_loc(model: type[BaseModel], loc: Sequence[str | int]) -> tuple[list[str | int], int | None]:
    """Drop pydantic's union member tags (``'str'``, ``'dict[str,str]'``) from ``loc``.

    Returns the JSON path and, when the error is inside a union field, the length of the
    path up to that field (so the errors of the union's members can be merged).
    """
    out: list[str | int] = []
    union_at: int | None = None
    current: Any = model
    parts = list(loc)
    i = 0
    while i < len(parts):
        part = parts[i]
        i += 1
        if current is None:  # past what the model tells: keep keys and indexes, not pydantic's tags
            if not _is_tag(part):
                out.append(part)
            continue
        out.append(part)
        current, union = _step(current, part)
        if union and i < len(parts) and isinstance(parts[i], str) and union_at is None:
            union_at = len(out)
            i += 1  # the member tag
    return out, union_at


def _is_tag(part: str | int) -> bool:
    """Whether a part of pydantic's ``loc`` is one of its tags (``'dict[str,str]'``), not a key."""
    return isinstance(part, str) and "[" in part and part.endswith("]")


def _step(current: Any, part: str | int) -> tuple[Any, bool]:
    """The type under ``part`` of the type ``current`` (None: not known), and whether ``part`` is a
    union field (pydantic's ``loc`` then names the member next)."""
    if isinstance(part, int):
        return _item_type(current), False
    field = getattr(current, "model_fields", {}).get(part) if isinstance(current, type) else None
    if field is None:
        return None, False
    annotation = field.annotation
    members = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if isinstance(annotation, UnionType | type(Union[int, str])) and len(members) > 1:
        return None, True
    is_list = getattr(annotation, "__origin__", None) is list
    return (annotation if is_list else _inner_model(annotation)), False


def _item_type(annotation: Any) -> Any:
    """The item type of a ``list[X]`` annotation; None for anything else."""
    args = getattr(annotation, "__args__", None)
    return args[0] if getattr(annotation, "__origin__", None) is list and args else None


def problems_from(
    exc: ValidationError, model: type[BaseModel], line_of: Callable[[Sequence[str | int]], int | None]
) -> list[Problem]:
    """One problem per pydantic error, addressed by JSON path, with the source line."""
    problems: list[Problem] = []
    unions: dict[tuple[str | int, ...], list[tuple[list[str | int], ErrorDetails]]] = {}
    for err in exc.errors(include_url=False):
        loc, union_at = _clean_loc(model, err["loc"])
        if union_at is not None:
            unions.setdefault(tuple(loc[:union_at]), []).append((loc, err))
            continue
        problems.append(_problem(err, loc, model, line_of))
    for field_loc, errs in unions.items():
        problems += _union_problems(field_loc, errs, model, line_of)
    return _dedupe(_drop_implied_missing(problems))


def _union_problems(
    field_loc: tuple[str | int, ...],
    errs: list[tuple[list[str | int], ErrorDetails]],
    model: type[BaseModel],
    line_of: Callable[[Sequence[str | int]], int | None],
) -> list[Problem]:
    """The errors of a union field's members as the user needs them: what is wrong inside the value
    when it has a member's shape, else one line naming every shape it may have."""
    deeper = [(loc, err) for loc, err in errs if len(loc) > len(field_loc)]
    if deeper:
        return [_problem(err, loc, model, line_of) for loc, err in deeper]
    words = [_TYPE_WORDS.get(err["type"], err["msg"]).removeprefix("must be ") for _, err in errs]
    if "a number" in words:
        words = [w for w in words if w != "a whole number"]
    message = "must be " + " or ".join(dict.fromkeys(words)) + f", got {_short(errs[0][1].get('input'))}"
    return [Problem(place(field_loc), message, line_of(field_loc))]


def _drop_implied_missing(problems: list[Problem]) -> list[Problem]:
    """``unknown key 'pipline' — did you mean 'pipeline'?`` already says ``'pipeline' is required``."""
    suggested = {
        (p.place, p.message.rpartition(" — did you mean ")[2].removesuffix("?"))
        for p in problems
        if p.message.startswith("unknown key ") and " — did you mean " in p.message
    }
    return [
        p
        for p in problems
        if not (
            p.message.endswith(" is required")
            and (p.place, p.message.removesuffix(" is required")) in suggested
        )
    ]


def _problem(
    err: Any,
    loc: list[str | int],
    model: type[BaseModel],
    line_of: Callable[[Sequence[str | int]], int | None],
) -> Problem:
    kind = err["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        owner = _model_at(model, loc)
        fields = list(owner.model_fields) if owner else []
        return Problem(place(loc[:-1]), f"unknown key '{clip(key)}'{did_you_mean(key, fields)}", line_of(loc))
    if kind == "missing":
        return Problem(place(loc[:-1]), f"'{loc[-1]}' is required", line_of(loc[:-1]))
    if kind in _LIMIT_WORDS:
        bound = next(iter((err.get("ctx") or {}).values()), "?")
        return Problem(
            place(loc), f"must be {_LIMIT_WORDS[kind]} {bound}, got {_short(err.get('input'))}", line_of(loc)
        )
    message = _TYPE_WORDS.get(kind, err["msg"])
    if kind not in _TYPE_WORDS and message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    got = err.get("input")
    if kind in _TYPE_WORDS and got is not None:
        message += f", got {_short(got)}"
    return Problem(place(loc), message, line_of(loc))


def _short(value: Any) -> str:
    return shorten(repr(value), 60)


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.place, p.message) not in seen:
            seen.add((p.place, p.message))
            out.append(p)
    return out


def place(path: Sequence[str | int]) -> str:
    """``("tests", 1, "pipeline")`` -> ``tests[1].pipeline``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            key = clip(part) if part else '""'  # one line, and a huge key does not make a huge message
            out += f".{key}" if out else key
    return out
