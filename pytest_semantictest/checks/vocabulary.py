"""The matchers: one implementation of each comparison a check makes, whatever format spelt it.

Each format's table maps its spelling onto these, with its own messages:

- SemanticTest operators (``equals``, ``gt``, ``notContains``, ``isEmpty``): :data:`.operators.OPERATORS`;
- highbar matchers (``equals``, ``icontains``, ``not_matches``): :data:`.matchers.CONDITIONS`;
- Yao assertion types (``equals``, ``contains``, ``regex``, ``type``): :data:`.assertions.EVALUATORS`;
- compliance expressions (``contains("x")``, ``type(string)``, ``/re/i``): ``formats/compliance/expr.py``.

Where the tools a format follows define a word differently, the difference is a matcher of its own
here, named for what it does (``contains`` is four rules: :func:`holds_item`, :func:`member_or_text`,
:func:`member_or_substring`, :func:`deep_contains`), never a copy in the format.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from ..json_types import JSONValue
from ..paths import MISSING
from .regex import user_regex
from .text import json_text

# --- values ---------------------------------------------------------------------------------------


def is_number(value: object) -> bool:
    """An int or float, not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a: JSONValue, b: JSONValue) -> bool:
    """Deep JSON equality without type coercion: 200 != "200", 1 == 1.0, True != 1."""
    if is_number(a) and is_number(b):
        return bool(a == b)
    if not _same_kind(a, b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _same_kind(a: JSONValue, b: JSONValue) -> bool:
    """Of one type, or both objects, or both arrays (a list and a tuple compare)."""
    return (
        type(a) is type(b)
        or (isinstance(a, dict) and isinstance(b, dict))
        or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)))
    )


def json_type(value: object) -> str:
    """JSON type name: booleans are not numbers; whole numbers are ``integer``; MISSING is ``undefined``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "undefined" if value is MISSING else type(value).__name__


def has_type(expected: str, value: JSONValue) -> bool:
    """``value`` is of the JSON type ``expected``; an integer is a ``number`` too."""
    found = json_type(value)
    return found == expected or (expected == "number" and found == "integer")


def is_empty(value: object) -> bool:
    """A string, list or object with nothing in it."""
    return isinstance(value, (str, list, tuple, Mapping)) and len(value) == 0


def has_length(value: object) -> bool:
    return isinstance(value, (str, list, tuple, Mapping))


# --- patterns -------------------------------------------------------------------------------------

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "u": 0, "g": 0}


@lru_cache(maxsize=512)
def compile_regex(pattern: str, flags: str = "") -> re.Pattern[str]:
    """Compile a JavaScript-style pattern with flags like ``i``, ``m``, ``s`` (others are ignored)."""
    value = 0
    for flag in flags:
        value |= _FLAGS.get(flag, 0)
    return user_regex(pattern, value)


def searches(pattern: str | re.Pattern[str], text: str) -> bool:
    """The pattern is found somewhere in ``text``."""
    compiled = pattern if isinstance(pattern, re.Pattern) else user_regex(pattern)
    return compiled.search(text) is not None


def scalar_text(value: object) -> str | None:
    """The text of a string or number (Python's ``str``: ``True``, ``1.5``); None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return None


# --- containment: the four rules the formats' tools follow --------------------------------------


def holds_item(container: JSONValue, item: JSONValue) -> bool:
    """SemanticTest's rule: a substring of text, a key of an object, or an item of a list (equal, a
    tool call of that name, or a string that contains it)."""
    if isinstance(container, str):
        return isinstance(item, str) and item in container
    if isinstance(container, Mapping):
        return isinstance(item, str) and item in container
    if isinstance(container, (list, tuple)):
        return any(_element_holds(element, item) for element in container)
    return False


def _element_holds(element: JSONValue, item: JSONValue) -> bool:
    """A list's element holds ``item``: equal to it, a tool call of that name, or a string containing it."""
    if json_equal(element, item):
        return True
    if isinstance(item, str) and isinstance(element, Mapping):
        return item in (element.get("name"), element.get("toolName"))
    return isinstance(item, str) and isinstance(element, str) and item in element


def member_or_text(actual: JSONValue, needle: JSONValue, fold: bool) -> bool | None:
    """highbar's rule: membership in a list (``fold``: a string equal ignoring case), else a
    substring of a scalar's text; None when ``actual`` has neither (null, an object)."""
    if isinstance(actual, (list, tuple)):
        if fold and isinstance(needle, str):
            want = needle.casefold()
            return any(isinstance(item, str) and item.casefold() == want for item in actual)
        return needle in actual
    text = scalar_text(actual)
    if text is None:
        return None
    if fold:
        return str(needle).casefold() in text.casefold()
    return str(needle) in text


def member_or_substring(haystack: JSONValue, needle: JSONValue) -> bool:
    """Yao's rule: in a list, an item or a substring of an item's text; else a substring of the
    value's text (JSON for anything that is not a string)."""
    if isinstance(haystack, list):
        return needle in haystack or (isinstance(needle, str) and any(needle in as_text(h) for h in haystack))
    return as_text(needle) in as_text(haystack)


def deep_contains(value: JSONValue, needle: JSONValue) -> bool:
    """The compliance rule: a substring of text; in a list, an equal item or one that contains it;
    in an object, a value that does."""
    if isinstance(value, str):
        return isinstance(needle, str) and needle in value
    if isinstance(value, list):
        return any(json_equal(item, needle) or deep_contains(item, needle) for item in value)
    if isinstance(value, dict):
        return any(deep_contains(item, needle) for item in value.values())
    return False


def as_text(value: object) -> str:
    """The text a value is read as: a string itself, nothing for null, else its JSON."""
    return "" if value is None or value is MISSING else json_text(value)
