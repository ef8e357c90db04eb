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
        op, arg = self.op, self.arg
        if op == "exists":
            return None
        if op == "not_null":
            return None if value is not None else "expected a value that is not null, got null"
        if op == "equals":
            return None if json_equal(value, arg) else f"expected {_show(arg)}, got {_show(value)}"
        if op == "regex":
            text = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
            if not isinstance(text, str):
                return f"expected text matching {self.raw}, got {_show(value)}"
            return None if arg.search(text) else f"expected text matching {self.raw}, got {_show(value)}"
        if op == "contains":
            return (
                None
                if deep_contains(value, arg)
                else f"expected it to contain {_show(arg)}, got {_show(value)}"
            )
        if op == "length":
            if not isinstance(value, (str, list, dict)):
                return f"expected something with a length, got {_show(value)}"
            return None if len(value) == arg else f"expected length {arg}, got length {len(value)}"
        if op == "type":
            return (
                None
                if has_type(str(arg), value)
                else f"expected type {arg}, got {json_type(value)} {_show(value)}"
            )
        if op == "one_of":
            reasons = [o._one(value) for o in self.options]
            return (
                None
                if any(r is None for r in reasons)
                else f"expected one of {self.describe()[7:]}, got {_show(value)}"
            )
        raise AssertionError(op)


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
        near = did_you_mean(text.replace("-", "_").lower(), KEYWORDS, 0.8)
        if near:
            raise ExprError(
                f"unknown operator {text!r}{near} (to compare with the text {text!r}, quote it: \"'{text}'\")"
            )
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and value.startswith(text[0]):
        return Expr("equals", text[1:-1], value)
    return Expr("equals", value, value)


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
    if name == "contains":
        if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
            arg = arg[1:-1]
        if not arg:
            raise ExprError(f'{raw}: contains needs the text to look for, like contains("weather")')
        return Expr("contains", arg, raw)
    if name == "length":
        if not arg.isdigit():
            raise ExprError(f"{raw}: length needs a whole number, like length(1)")
        return Expr("length", int(arg), raw)
    kind = arg.strip("'\"").lower()
    if kind not in TYPES:
        raise ExprError(f"{raw}: unknown type {arg!r}{did_you_mean(kind, TYPES)} (types: {', '.join(TYPES)})")
    return Expr("type", kind, raw)
