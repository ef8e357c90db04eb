"""SemanticTest's spelling of the matchers (:mod:`.vocabulary`): its assertion operators, each
``(actual, expected) -> None or a failure message`` in the reference runner's words."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..json_types import JSONValue
from ..paths import MISSING
from .text import json_text
from .vocabulary import compile_regex, has_length, holds_item, is_empty, is_number, json_equal

__all__ = ["OPERATORS", "apply", "compile_regex", "show", "validate_operand"]


def show(v: object) -> str:
    return "undefined" if v is MISSING else repr(v)


def _numeric(
    symbol: str, test: Callable[[JSONValue, JSONValue], bool]
) -> Callable[[JSONValue, JSONValue], str | None]:
    def check(actual: JSONValue, expected: JSONValue) -> str | None:
        if not is_number(actual):
            return f"Expected a number to compare {symbol} {expected!r}, got {show(actual)}"
        return None if test(actual, expected) else f"Expected {actual!r} to be {symbol} {expected!r}"

    return check


def _scalar_text(actual: JSONValue) -> JSONValue:
    """A number or boolean as its JSON text (``200`` -> ``"200"``), for the text operators."""
    return json_text(actual) if isinstance(actual, (int, float)) else actual


def _contains(actual: JSONValue, expected: JSONValue) -> str | None:
    actual = _scalar_text(actual)
    if not has_length(actual):
        return f"Expected a string or list to contain {expected!r}, got {show(actual)}"
    return None if holds_item(actual, expected) else f"Expected {show(actual)} to contain {expected!r}"


def _not_contains(actual: JSONValue, expected: JSONValue) -> str | None:
    if actual is MISSING or actual is None:
        return None
    if holds_item(_scalar_text(actual), expected):
        return f"Expected {show(actual)} not to contain {expected!r}"
    return None


def _length(kind: str) -> Callable[[JSONValue, JSONValue], str | None]:
    def check(actual: JSONValue, expected: JSONValue) -> str | None:
        if not has_length(actual):
            return f"Expected a string or list for {kind}, got {show(actual)}"
        n = len(actual)
        ok = n >= expected if kind == "minLength" else n <= expected
        sign = ">=" if kind == "minLength" else "<="
        return None if ok else f"Expected length {n} to be {sign} {expected}"

    return check


def _matches(negate: bool) -> Callable[[JSONValue, JSONValue], str | None]:
    def check(actual: JSONValue, expected: JSONValue) -> str | None:
        if actual is MISSING or actual is None:
            return f"Expected a string to match /{expected}/, got {show(actual)}"
        actual = json_text(actual)  # a number, object or list: its JSON text, as the trace shows it
        found = compile_regex(expected).search(actual) is not None
        if found == negate:
            verb = "not to match" if negate else "to match"
            return f"Expected {actual!r} {verb} /{expected}/"
        return None

    return check


def _predicate(name: str, test: Callable[[JSONValue], bool]) -> Callable[[JSONValue, JSONValue], str | None]:
    def check(actual: JSONValue, expected: JSONValue) -> str | None:
        want = expected is not False
        if test(actual) == want:
            return None
        label = name if want else f"not {name}"
        return f"Expected {show(actual)} to be {label}"

    return check


OPERATORS: dict[str, Callable[[JSONValue, JSONValue], str | None]] = {
    "equals": lambda a, e: None if json_equal(a, e) else f"Expected {show(a)} to equal {e!r}",
    "notEquals": lambda a, e: f"Expected {show(a)} not to equal {e!r}" if json_equal(a, e) else None,
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
    "isEmpty": _predicate("empty", is_empty),
    "isNotEmpty": _predicate("not empty", lambda v: has_length(v) and len(v) > 0),
}

_NUMERIC = {"gt", "gte", "lt", "lte"}
_LENGTH = {"minLength", "maxLength"}
_PREDICATES = {k for k in OPERATORS if k.startswith("is")}


def validate_operand(op: str, expected: JSONValue) -> str | None:
    """Why ``expected`` cannot be used with ``op`` (checked at collection), or None."""
    if op in _NUMERIC and not is_number(expected):
        return f"'{op}' needs a number, got {expected!r}"
    if op in _LENGTH and not _is_count(expected):
        return f"'{op}' needs a whole number >= 0, got {expected!r}"
    if op in ("matches", "notMatches"):
        return _pattern_problem(op, expected)
    if op in _PREDICATES and not isinstance(expected, bool):
        return f"'{op}' takes true or false, got {expected!r}"
    return None


def _is_count(value: JSONValue) -> bool:
    """A whole number >= 0 (not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _pattern_problem(op: str, expected: JSONValue) -> str | None:
    """Why ``expected`` is not a usable regular expression for ``matches``/``notMatches``, or None."""
    if not isinstance(expected, str):
        return f"'{op}' needs a regular expression string, got {expected!r}"
    try:
        compile_regex(expected)
    except re.error as exc:
        return f"'{op}' has an invalid regular expression {expected!r}: {exc}"
    return None


def apply(op: str, actual: JSONValue, expected: JSONValue) -> str | None:
    """Evaluate one operator; None when it holds, else the failure message."""
    return OPERATORS[op](actual, expected)
