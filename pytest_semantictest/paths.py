"""Paths into JSON values: one form, one lookup, a thin parser per way people write them.

A parsed path is a tuple of segments: a ``str`` is a key, an ``int`` an index (a list's, or a key
written as a number: ``{"0": ...}``). Each dialect parses onto that form:

=========================================  ==============================  =====================
written                                    where                           parser
=========================================  ==============================  =====================
``users[0].name``, ``items[-1]``, ``.length``  references, DataBus, assertions  :func:`split_path`
``choices.0.message.content``              agent config (``response``,     :func:`split_dotted`
                                           ``{{session.key}}``)
``function_calls[0].args.city``            highbar's ``{{previous...}}``   :func:`split_indexed`
``$.a.b[0]`` (and ``$..x``, ``a[*]``,      Yao ``json_path``, compliance   :func:`simple_jsonpath`,
``[?(@.x)]``)                              ``**Strict:**``                 :func:`compiled_jsonpath`
=========================================  ==============================  =====================

Two lookups read a parsed path: :func:`get_path` (a reference: MISSING when it names nothing, reads
inside a string holding JSON, knows ``length``) and :func:`require_path` (agent config: a
:class:`PathError` saying what was there instead). JSONPaths that select many values (wildcards,
recursive descent, filters) are jsonpath-ng's: :func:`compiled_jsonpath`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from .errors import clip
from .json_types import JSONValue

if TYPE_CHECKING:
    from jsonpath_ng import JSONPath
    from jsonpath_ng.parser import JsonPathParser

Path = tuple[str | int, ...]


class _Missing:
    """The value of a path that names nothing (JavaScript's ``undefined``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()
"""What a lookup gives where a path names nothing (falsy; shown as ``undefined``)."""


class PathError(ValueError):
    """A path step found nothing; the message says what was there instead."""


# --- the dialects -------------------------------------------------------------------------------

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")
_path_cache: dict[str, Path] = {}


def split_path(path: str) -> Path:
    """``users[0].name`` -> ``("users", 0, "name")``; keys keep dashes and colons."""
    cached = _path_cache.get(path)
    if cached is not None:
        return cached
    parts: list[str | int] = []
    for key, index in _SEGMENT.findall(path.strip()):
        parts.append(int(index) if index else key)
    result = tuple(parts)
    if len(_path_cache) < 10000:
        _path_cache[path] = result
    return result


def split_dotted(path: str) -> Path:
    """``choices.0.message.content`` -> ``("choices", 0, "message", "content")``: steps between
    dots, a step of digits an index."""
    return tuple(int(step) if step.isdigit() and str(int(step)) == step else step for step in path.split("."))


_INDEXED = re.compile(r"(\w+)((?:\[\d+\])*)")


def split_indexed(path: str) -> Path:
    """``function_calls[0].args`` -> ``("function_calls", 0, "args")``: word steps between dots,
    each with ``[N]`` indexes; a :class:`PathError` for a step that is not one."""
    parts: list[str | int] = []
    for step in path.split("."):
        match = _INDEXED.fullmatch(step)
        if match is None:
            raise PathError(f"invalid path segment '{clip(step)}'")
        parts.append(match.group(1))
        parts.extend(int(index) for index in re.findall(r"\[(\d+)\]", match.group(2)))
    return tuple(parts)


_SELECTORS = ("..", "*", "?(", "[?")


def simple_jsonpath(path: str) -> Path | None:
    """A JSONPath that names one place (``$.a.b[0]``, ``a.b``, ``$``) as a path; None for one that
    selects (wildcards, recursive descent, filters: :func:`compiled_jsonpath`)."""
    text = path.strip()
    if any(token in text for token in _SELECTORS):
        return None
    if text.startswith("$"):
        text = text[1:].lstrip(".")
    return split_path(text) if text else ()


@lru_cache(maxsize=2)
def _jsonpath_parser(extended: bool) -> tuple[JsonPathParser, threading.Lock]:
    """One jsonpath-ng parser of each kind, and the lock its parses take. Its module-level ``parse``
    builds a new parser per call, and the parser's LALR tables with it (~10 ms of CPU a path); its
    parser keeps a parse's state on itself, hence the lock."""
    if extended:
        from jsonpath_ng.ext.parser import ExtendedJsonPathParser

        return ExtendedJsonPathParser(), threading.Lock()
    from jsonpath_ng.parser import JsonPathParser

    return JsonPathParser(), threading.Lock()


@lru_cache(maxsize=1024)
def compiled_jsonpath(path: str, extended: bool = False) -> JSONPath:
    """jsonpath-ng's parse of ``path`` (``extended``: with filters and functions); raises its errors."""
    parser, lock = _jsonpath_parser(extended)
    with lock:
        return parser.parse(path)


# --- the lookups --------------------------------------------------------------------------------


def _json_text(value: str) -> JSONValue:
    """A string holding a JSON object or array, parsed; MISSING otherwise."""
    text = value.lstrip()
    if not text or text[0] not in "{[":
        return MISSING
    try:
        return json.loads(text)
    except ValueError:
        return MISSING


def get_path(root: JSONValue, parts: Path) -> JSONValue:
    """Walk ``parts`` into nested dicts and lists; MISSING when any step names nothing.

    A path that continues into a string holding JSON (an HTTP response ``body``) reads
    inside it, so ``${login.body.token}`` works without a JsonParser step.
    """
    value = root
    for part in parts:
        value = _step(value, part)
        if value is MISSING:
            return MISSING
    return value


def _step(value: JSONValue, part: str | int) -> JSONValue:
    """What ``part`` names in ``value``: a key, an index, a length; MISSING when nothing."""
    if isinstance(value, str) and part != "length":
        value = _json_text(value)
    if isinstance(value, Mapping):
        return value.get(part if isinstance(part, str) else str(part), MISSING)
    if isinstance(value, (list, tuple)):
        return _item(value, part)
    if isinstance(value, str) and part == "length":
        return len(value)
    return MISSING


def _item(value: list[JSONValue] | tuple[JSONValue, ...], part: str | int) -> JSONValue:
    """A list's item by index (a negative one from the end) or its ``length``; MISSING otherwise."""
    try:
        index = int(part)
    except (TypeError, ValueError):
        return len(value) if part == "length" else MISSING
    return value[index] if -len(value) <= index < len(value) else MISSING


def require_path(data: JSONValue, parts: Path) -> JSONValue:
    """The value at ``parts``; raises :class:`PathError` naming the step that found nothing and
    what was there (the keys of an object, the length of a list)."""
    current = data
    for part in parts:
        step = str(part)
        if isinstance(current, dict):
            if step not in current:
                keys = ", ".join(str(key) for key in current) or "none"
                raise PathError(f"no key '{step}' (keys: {keys})")
            current = current[step]
        elif isinstance(current, list):
            if not step.isdigit():
                raise PathError(f"'{step}' is not an index into a list of {len(current)}")
            index = int(step)
            if index >= len(current):
                raise PathError(f"index {index} is out of range (a list of {len(current)})")
            current = current[index]
        else:
            raise PathError(f"cannot read '{step}' from a {type(current).__name__}")
    return current
