"""SemanticTest assertion operators: ``(actual, expected) -> None or a failure message``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from ..paths import MISSING
from .text import json_text
from .regex import user_regex


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def strict_equal(a: Any, b: Any) -> bool:
    """Deep equality without type coercion: 200 != "200", 1 == 1.0, True != 1."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))):
            return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def json_type(value: Any) -> str:
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


def show(v: Any) -> str:
    return "undefined" if v is MISSING else repr(v)


@lru_cache(maxsize=512)
def compile_regex(pattern: str, flags: str = "") -> re.Pattern[str]:
    """Compile a JavaScript-style pattern with flags like ``i``, ``m``, ``s``."""
    value = 0
    for f in flags:
        value |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "u": 0, "g": 0}.get(f, 0)
    return user_regex(pattern, value)


def _numeric(symbol: str, test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], str | None]:
    def check(actual: Any, expected: Any) -> str | None:
        if not _is_number(actual):
            return f"Expected a number to compare {symbol} {expected!r}, got {show(actual)}"
        return None if test(actual, expected) else f"Expected {actual!r} to be {symbol} {expected!r}"

    return check


def _contains_item(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        return isinstance(item, str) and item in container
    if isinstance(container, Mapping):
        return isinstance(item, str) and item in container
    if isinstance(container, (list, tuple)):
        for element in container:
            if strict_equal(element, item):
                return True
            if isinstance(item, str) and isinstance(element, Mapping):
                if item in (element.get("name"), element.get("toolName")):
                    return True
            if isinstance(item, str) and isinstance(element, str) and item in element:
                return True
    return False


def _scalar_text(actual: Any) -> Any:
    """A number or boolean as its JSON text (``200`` -> ``"200"``), for the text operators."""
    return json_text(actual) if isinstance(actual, (int, float)) else actual


def _contains(actual: Any, expected: Any) -> str | None:
    actual = _scalar_text(actual)
    if not isinstance(actual, (str, list, tuple, Mapping)):
        return f"Expected a string or list to contain {expected!r}, got {show(actual)}"
    return None if _contains_item(actual, expected) else f"Expected {show(actual)} to contain {expected!r}"


def _not_contains(actual: Any, expected: Any) -> str | None:
    if actual is MISSING or actual is None:
        return None
    if _contains_item(_scalar_text(actual), expected):
        return f"Expected {show(actual)} not to contain {expected!r}"
    return None


def _length(kind: str) -> Callable[[Any, Any], str | None]:
    def check(actual: Any, expected: Any) -> str | None:
        if not isinstance(actual, (str, list, tuple, Mapping)):
            return f"Expected a string or list for {kind}, got {show(actual)}"
        n = len(actual)
        ok = n >= expected if kind == "minLength" else n <= expected
        sign = ">=" if kind == "minLength" else "<="
        return None if ok else f"Expected length {n} to be {sign} {expected}"

    return check


def _matches(negate: bool) -> Callable[[Any, Any], str | None]:
    def check(actual: Any, expected: Any) -> str | None:
        if actual is MISSING or actual is None:
            return f"Expected a string to match /{expected}/, got {show(actual)}"
        actual = json_text(actual)  # a number, object or list: its JSON text, as the trace shows it
        found = compile_regex(expected).search(actual) is not None
        if found == negate:
            verb = "not to match" if negate else "to match"
            return f"Expected {actual!r} {verb} /{expected}/"
        return None

    return check


def _predicate(name: str, test: Callable[[Any], bool]) -> Callable[[Any, Any], str | None]:
    def check(actual: Any, expected: Any) -> str | None:
        want = expected is not False
        if test(actual) == want:
            return None
        label = name if want else f"not {name}"
        return f"Expected {show(actual)} to be {label}"

    return check


def _is_empty(v: Any) -> bool:
    return isinstance(v, (str, list, tuple, Mapping)) and len(v) == 0


OPERATORS: dict[str, Callable[[Any, Any], str | None]] = {
    "equals": lambda a, e: None if strict_equal(a, e) else f"Expected {show(a)} to equal {e!r}",
    "notEquals": lambda a, e: f"Expected {show(a)} not to equal {e!r}" if strict_equal(a, e) else None,
    "gt": _numeric(">", lambda a, e: a > e),
    "gte": _numeric(">=", lambda a, e: a >= e),
    "lt": _numeric("<", lambda a, e: a < e),
    "lte": _numeric("<=", lambda a, e: a <= e),
    "contains": _contains,
    "notContains": _not_contains,
    "minLength": _length("minLength"),
    "maxLength": _length("maxLength"),
    "matches": _matches(False),
    "notMatches": _matches(True),
    "isNull": _predicate("null", lambda v: v is None),
    "isNotNull": _predicate("not null", lambda v: v is not None and v is not MISSING),
    "isDefined": _predicate("defined", lambda v: v is not MISSING),
    "isUndefined": _predicate("undefined", lambda v: v is MISSING),
    "isTrue": _predicate("true", lambda v: v is True),
    "isFalse": _predicate("false", lambda v: v is False),
    "isEmpty": _predicate("empty", _is_empty),
    "isNotEmpty": _predicate("not empty", lambda v: isinstance(v, (str, list, tuple, Mapping)) and len(v) > 0),
}

_NUMERIC = {"gt", "gte", "lt", "lte"}
_LENGTH = {"minLength", "maxLength"}
_PREDICATES = {k for k in OPERATORS if k.startswith("is")}


def validate_operand(op: str, expected: Any) -> str | None:
    """Why ``expected`` cannot be used with ``op`` (checked at collection), or None."""
    if op in _NUMERIC and not _is_number(expected):
        return f"'{op}' needs a number, got {expected!r}"
    if op in _LENGTH and not (isinstance(expected, int) and not isinstance(expected, bool) and expected >= 0):
        return f"'{op}' needs a whole number >= 0, got {expected!r}"
    if op in ("matches", "notMatches"):
        if not isinstance(expected, str):
            return f"'{op}' needs a regular expression string, got {expected!r}"
        try:
            compile_regex(expected)
        except re.error as exc:
            return f"'{op}' has an invalid regular expression {expected!r}: {exc}"
    if op in _PREDICATES and not isinstance(expected, bool):
        return f"'{op}' takes true or false, got {expected!r}"
    return None


def apply(op: str, actual: Any, expected: Any) -> str | None:
    """Evaluate one operator; None when it holds, else the failure message."""
    return OPERATORS[op](actual, expected)
