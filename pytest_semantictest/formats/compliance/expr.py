"""Strict value expressions: ``stop``, ``/^Echo:/``, ``contains("x")``, ``exists``, ``not_exists``,
``not_null``, ``length(N)``, ``type(string)``, and a YAML list meaning one of its entries.

``compile_expr`` reads what a YAML value says (at collection; a misspelt operator is a
problem with a did-you-mean); ``Expr.test(found, values)`` evaluates it against what a path
found: ``found`` False when the path names nothing, else the matched values (several for
``[*]``: every one must hold).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ...checks.vocabulary import compile_regex, deep_contains, has_type, json_equal, json_type
from ...errors import clip, did_you_mean
from ...json_types import JSONValue

TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
KEYWORDS = ("exists", "not_exists", "not_null")
FUNCTIONS = ("contains", "length", "type")
_CALL = re.compile(r"^([A-Za-z_][\w-]*)\s*\((.*)\)$", re.S)
_REGEX = re.compile(r"^/(.*)/([a-z]*)$", re.S)
_WORD = re.compile(r"^[A-Za-z_][\w-]*$")


class ExprError(ValueError):
    """A value that looks like an operator but cannot be used."""


@dataclass(frozen=True)
class Expr:
    """One compiled expectation; ``op`` names it in failure reports."""

    op: str
    arg: JSONValue | re.Pattern[str] = None
    """What to compare with: a JSON value of the YAML, a compiled regular expression, a length, a type name."""
    raw: JSONValue = None
    """The YAML value as written."""
    options: tuple[Expr, ...] = field(default=())

    def describe(self) -> str:
        if self.op == "equals":
            return json.dumps(self.raw, ensure_ascii=False, default=str)
        return (
            str(self.raw) if not isinstance(self.raw, list) else "one of " + json.dumps(self.raw, default=str)
        )

    def test(self, found: bool, values: list[JSONValue]) -> str | None:
        """None when it holds, else why not (``found`` False: the path names nothing)."""
        if self.op == "not_exists":
            return (
                None
                if not found
                else f"expected nothing here, found {_show(values[0] if len(values) == 1 else values)}"
            )
        if not found:
            return (
                "the path names nothing"
                if self.op != "exists"
                else "expected it to exist; the path names nothing"
            )
        for value in values:
            why = self._one(value)
            if why is not None:
                return why if len(values) == 1 else f"{why} (every match must hold; {len(values)} matched)"
        return None

    def _one(self, value: JSONValue) -> str | None:
        """None when ``value`` holds, else why not."""
        check = _CHECKS.get(self.op)
        if check is None:
            raise AssertionError(self.op)
        return check(self, value)


def _exists(expr: Expr, value: JSONValue) -> str | None:
    return None


def _not_null(expr: Expr, value: JSONValue) -> str | None:
    return None if value is not None else "expected a value that is not null, got null"


def _equals(expr: Expr, value: JSONValue) -> str | None:
    arg = expr.arg
    return None if json_equal(value, arg) else f"expected {_show(arg)}, got {_show(value)}"


def _regex_matches(expr: Expr, value: JSONValue) -> str | None:
    """A number is matched as its text; any other value that is not text fails."""
    arg = expr.arg
    text = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if not isinstance(text, str):
        return f"expected text matching {expr.raw}, got {_show(value)}"
    return None if arg.search(text) else f"expected text matching {expr.raw}, got {_show(value)}"


def _contains(expr: Expr, value: JSONValue) -> str | None:
    arg = expr.arg
    return None if deep_contains(value, arg) else f"expected it to contain {_show(arg)}, got {_show(value)}"


def _length(expr: Expr, value: JSONValue) -> str | None:
    arg = expr.arg
    if not isinstance(value, (str, list, dict)):
        return f"expected something with a length, got {_show(value)}"
    return None if len(value) == arg else f"expected length {arg}, got length {len(value)}"


def _type(expr: Expr, value: JSONValue) -> str | None:
    arg = expr.arg
    return (
        None if has_type(str(arg), value) else f"expected type {arg}, got {json_type(value)} {_show(value)}"
    )


def _one_of(expr: Expr, value: JSONValue) -> str | None:
    reasons = [o._one(value) for o in expr.options]
    return (
        None
        if any(r is None for r in reasons)
        else f"expected one of {expr.describe()[7:]}, got {_show(value)}"
    )


_CHECKS: dict[str, Callable[[Expr, JSONValue], str | None]] = {
    "exists": _exists,
    "not_null": _not_null,
    "equals": _equals,
    "regex": _regex_matches,
    "contains": _contains,
    "length": _length,
    "type": _type,
    "one_of": _one_of,
}
"""How each operator judges one matched value (``not_exists`` never gets one)."""


def _show(value: JSONValue) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return clip(text, 120)


def compile_expr(value: JSONValue) -> Expr:
    """What a YAML value expects; raises ExprError for a misspelt or malformed operator."""
    if isinstance(value, list):
        if not value:
            raise ExprError("an empty list matches nothing: list the allowed values, like [200, 201]")
        options = tuple(compile_expr(v) for v in value)
        return Expr("one_of", None, value, options)
    if isinstance(value, dict):
        raise ExprError("a mapping is not a value here")
    if not isinstance(value, str):
        return Expr("equals", value, value)
    return _compile_text(value)


def _compile_text(value: str) -> Expr:
    """What a YAML string expects: a keyword, a regular expression, a call, else the text itself
    (quotes around it removed)."""
    text = value.strip()
    if text in KEYWORDS:
        return Expr(text, None, text)
    regex = _REGEX.match(text)
    if regex and len(text) >= 2:
        return _regex(text, regex.group(1), regex.group(2))
    call = _CALL.match(text)
    if call:
        return _call(text, call.group(1), call.group(2).strip())
    if _WORD.match(text):
        _refuse_misspelt_keyword(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and value.startswith(text[0]):
        return Expr("equals", text[1:-1], value)
    return Expr("equals", value, value)


def _refuse_misspelt_keyword(word: str) -> None:
    """Raise when a bare word is close to a keyword: it is more likely a typo than text to compare with."""
    near = did_you_mean(word.replace("-", "_").lower(), KEYWORDS, 0.8)
    if near:
        raise ExprError(
            f"unknown operator {word!r}{near} (to compare with the text {word!r}, quote it: \"'{word}'\")"
        )


def _regex(raw: str, pattern: str, flags: str) -> Expr:
    bad = set(flags) - set("imsu")
    if bad:
        raise ExprError(
            f"regular expression {clip(raw)} has unknown flags {''.join(sorted(bad))!r} (use i, m, s)"
        )
    try:
        return Expr("regex", compile_regex(pattern, flags), raw)
    except (re.error, OverflowError, RecursionError) as exc:
        raise ExprError(f"invalid regular expression {clip(raw)}: {exc}") from None


def _call(raw: str, name: str, arg: str) -> Expr:
    if name not in FUNCTIONS:
        raise ExprError(
            f"unknown operator '{clip(name)}(...)'{did_you_mean(name, FUNCTIONS)} "
            f"(operators: {', '.join(f + '(...)' for f in FUNCTIONS)}, {', '.join(KEYWORDS)})"
        )
    return _CALLS[name](raw, arg)


def _contains_call(raw: str, arg: str) -> Expr:
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
        arg = arg[1:-1]
    if not arg:
        raise ExprError(f'{raw}: contains needs the text to look for, like contains("weather")')
    return Expr("contains", arg, raw)


def _length_call(raw: str, arg: str) -> Expr:
    if not arg.isdigit():
        raise ExprError(f"{raw}: length needs a whole number, like length(1)")
    return Expr("length", int(arg), raw)


def _type_call(raw: str, arg: str) -> Expr:
    kind = arg.strip("'\"").lower()
    if kind not in TYPES:
        raise ExprError(f"{raw}: unknown type {arg!r}{did_you_mean(kind, TYPES)} (types: {', '.join(TYPES)})")
    return Expr("type", kind, raw)


_CALLS: dict[str, Callable[[str, str], Expr]] = {
    "contains": _contains_call,
    "length": _length_call,
    "type": _type_call,
}
"""Each function of :data:`FUNCTIONS` and how its argument is read."""
