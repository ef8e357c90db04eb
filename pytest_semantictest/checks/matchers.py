"""highbar's spelling of the matchers (:mod:`.vocabulary`): ``equals``, ``contains``, ``icontains``,
negatives, regexes; and the subset rule for ``params`` and ``result``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ..json_types import JSONValue
from ..shown import shorten
from .vocabulary import member_or_text, scalar_text, searches


def _search(pattern: re.Pattern[str] | JSONValue, actual: JSONValue) -> bool | None:
    text = scalar_text(actual)
    return (
        None if text is None else searches(pattern if isinstance(pattern, re.Pattern) else str(pattern), text)
    )


CONDITIONS: dict[str, Callable[[JSONValue, JSONValue], bool]] = {
    "equals": lambda actual, operand: bool(actual == operand),  # Python's ==, as highbar compares
    "contains": lambda actual, operand: member_or_text(actual, operand, False) is True,
    "icontains": lambda actual, operand: member_or_text(actual, operand, True) is True,
    # a negative that cannot be evaluated (None, a dict) fails instead of passing unchecked
    "not_contains": lambda actual, operand: member_or_text(actual, operand, False) is False,
    "not_icontains": lambda actual, operand: member_or_text(actual, operand, True) is False,
    "matches": lambda actual, operand: _search(operand, actual) is True,
    "not_matches": lambda actual, operand: _search(operand, actual) is False,
}

MATCHER_KEYS = frozenset(CONDITIONS)
"""Keys of a matcher map (``response``, a call's ``error``, a matcher inside ``params``/``result``)."""


def is_matcher(value: JSONValue) -> bool:
    """A non-empty mapping whose keys are all matcher keys."""
    return isinstance(value, Mapping) and bool(value) and all(k in MATCHER_KEYS for k in value)


def condition_holds(
    key: str, operand: JSONValue, actual: JSONValue, patterns: Mapping[str, re.Pattern[str]] | None = None
) -> bool:
    if patterns and key in patterns:
        operand = patterns[key] if key in ("matches", "not_matches") else operand
    return CONDITIONS[key](actual, operand)


def value_matches(expected: JSONValue, actual: JSONValue) -> bool:
    """A matcher applies its conditions; a mapping is subset-matched; anything else is ``==``."""
    if is_matcher(expected):
        patterns = getattr(expected, "patterns", None)
        return all(condition_holds(k, v, actual, patterns) for k, v in expected.items())
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return subset_matches(expected, actual)
    return bool(expected == actual)


def subset_matches(expected: JSONValue, actual: JSONValue) -> bool:
    """Every expected key is present in ``actual`` with a matching value (None: no constraint; a spec
    may give a scalar or a list where an object is expected: then it matches as a value)."""
    if expected is None:
        return True
    if not isinstance(expected, Mapping):  # a spec that gives a scalar or list where an object is expected
        return value_matches(expected, actual)
    if not isinstance(actual, Mapping):
        return False
    return all(key in actual and value_matches(value, actual[key]) for key, value in expected.items())


def explain_response(key: str, operand: JSONValue, response: str) -> str:
    """Why a response condition failed, with what the agent said."""
    shown = shorten(response, 300)  # secrets masked before the cut (a long secret cut is no longer found)
    reasons = {
        "equals": f"response is not {operand!r}",
        "contains": f"response does not contain {operand!r}",
        "icontains": f"response does not contain {operand!r} (ignoring case)",
        "not_contains": f"response contains forbidden text {operand!r}",
        "not_icontains": f"response contains forbidden text {operand!r} (ignoring case)",
        "matches": f"response does not match /{operand}/",
        "not_matches": f"response matches forbidden pattern /{operand}/",
    }
    return f"{reasons[key]}; got {shown!r}"
