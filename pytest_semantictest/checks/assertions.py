"""Deterministic assertions on one agent reply: its text and its tool calls (Yao's types).

A turn is the dict the conversation blocks produce: ``output`` (the reply text) and
``tool_calls`` (``[{name, arguments, result, error}]``). ``evaluate(spec, turn)`` gives an
:class:`Outcome`; ``negate`` and ``message`` are applied by :func:`finish`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..json_types import JSONValue
from ..paths import MISSING, compiled_jsonpath, get_path, simple_jsonpath
from ..shown import shorten
from .matchers import subset_matches
from .regex import user_regex
from .vocabulary import as_text, has_type, json_equal, json_type, member_or_substring

if TYPE_CHECKING:
    from .specs import AssertionSpec

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL)


@dataclass
class Outcome:
    """Whether an assertion held, why, and what was compared (for the failure report)."""

    passed: bool
    message: str
    expected: JSONValue = None
    actual: JSONValue = None
    details: dict[str, JSONValue] = field(default_factory=dict)


def extract_json(text: str) -> JSONValue:
    """The JSON object or array ``text`` holds (whole, or in a ```json fence), else MISSING."""
    if not isinstance(text, str):
        return text
    candidates = [text.strip()] + [m.strip() for m in _FENCE.findall(text)]
    for candidate in candidates:
        if candidate[:1] in ("{", "["):
            try:
                return json.loads(candidate)
            except ValueError:
                continue
    return MISSING


def reply_value(turn: Mapping[str, JSONValue]) -> JSONValue:
    """The reply as data: its JSON when it is a JSON object or array, else its text."""
    text = turn.get("output") or ""
    found = extract_json(text)
    return text if found is MISSING else found


def value_at(turn: Mapping[str, JSONValue], path: str) -> JSONValue:
    """The value at a JSON path (``$.a.b[0]`` or ``a.b[0]``) of the reply's JSON; MISSING if none."""
    data = extract_json(turn.get("output") or "")
    if data is MISSING:
        return MISSING
    parts = simple_jsonpath(path)
    if parts is not None:
        return get_path(data, parts)
    try:
        found = [m.value for m in compiled_jsonpath(path, extended=True).find(data)]
    except Exception:  # noqa: BLE001  a path jsonpath_ng rejects names nothing
        return MISSING
    if not found:
        return MISSING
    return found[0] if len(found) == 1 else found


def _shown(value: object, limit: int = 200) -> str:
    """A string quoted (repr), anything else as compact JSON; trimmed to ``limit``."""
    text = value if isinstance(value, str) else as_text(value)
    text = shorten(text, limit)  # secrets masked before the cut
    return repr(text) if isinstance(value, str) else text


def tool_name_matches(actual: str, expected: str) -> bool:
    """Exact, or namespaced: ``expense__create`` and ``tools.create`` match ``create``."""
    return actual == expected or actual.endswith(("__" + expected, "." + expected))


def _calls(turn: Mapping[str, JSONValue]) -> list[Mapping[str, JSONValue]]:
    return [c for c in turn.get("tool_calls") or [] if isinstance(c, Mapping)]


def _called(turn: Mapping[str, JSONValue]) -> str:
    return ", ".join(str(c.get("name")) for c in _calls(turn)) or "no tools"


def _target(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> JSONValue:
    return value_at(turn, spec.path) if spec.path else turn.get("output") or ""


def _equals(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> Outcome:
    expected = spec.value
    if spec.path:
        actual = value_at(turn, spec.path)
    elif isinstance(expected, str):
        actual = turn.get("output") or ""
        ok = actual.strip() == expected.strip()
        return Outcome(
            ok,
            "output equals the expected text"
            if ok
            else f"output is not {_shown(expected)}; got {_shown(actual)}",
            expected,
            actual,
        )
    else:
        actual = reply_value(turn)
    ok = actual is not MISSING and json_equal(actual, expected)
    where = f"{spec.path}: " if spec.path else "output: "
    return Outcome(
        ok, f"{where}expected {_shown(expected)}, got {_describe_actual(actual)}", expected, actual
    )


def _describe_actual(actual: object) -> str:
    return "nothing (the path names nothing)" if actual is MISSING else _shown(actual)


def _contains(spec: AssertionSpec, turn: Mapping[str, JSONValue], negate_word: bool = False) -> Outcome:
    haystack = _target(spec, turn)
    needles = spec.value if isinstance(spec.value, list) else [spec.value]
    present = [n for n in needles if member_or_substring(haystack, n)]
    where = spec.path or "output"
    if negate_word:  # not_contains: none of them
        ok = not present
        message = f"{where} contains {', '.join(_shown(n) for n in present)}; got {_shown(haystack)}"
        return Outcome(ok, message, spec.value, haystack)
    missing = [n for n in needles if n not in present]
    message = f"{where} does not contain {', '.join(_shown(n) for n in missing)}; got {_shown(haystack)}"
    return Outcome(not missing, message, spec.value, haystack)


def _regex(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> Outcome:
    target = _target(spec, turn)
    text = as_text(target)
    ok = user_regex(spec.operand).search(text) is not None
    where = spec.path or "output"
    return Outcome(ok, f"{where} does not match /{spec.operand}/; got {_shown(text)}", spec.operand, text)


def _json_path(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> Outcome:
    if extract_json(turn.get("output") or "") is MISSING:
        return Outcome(
            False,
            f"output is not JSON, so {spec.path} cannot be read; got {_shown(turn.get('output'))}",
            spec.value,
            turn.get("output"),
        )
    actual = value_at(turn, spec.path or "")  # validated: a json_path assertion has a path
    if not spec.given("value"):
        ok = actual is not MISSING and actual is not None
        return Outcome(ok, f"{spec.path} names nothing in the output", None, _plain(actual))
    expected = spec.value
    return Outcome(
        _json_value_holds(actual, expected),
        f"{spec.path}: expected {_shown(expected)}, got {_describe_actual(actual)}",
        expected,
        _plain(actual),
    )


def _json_value_holds(actual: JSONValue, expected: JSONValue) -> bool:
    """The value is there and equals ``expected``, or one of its items when it lists several (and the
    value is not itself a list)."""
    return actual is not MISSING and (
        json_equal(actual, expected)
        or (
            isinstance(expected, list)
            and not isinstance(actual, list)
            and any(json_equal(actual, e) for e in expected)
        )
    )


def _plain(value: JSONValue) -> JSONValue:
    return None if value is MISSING else value


def _type(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> Outcome:
    actual = value_at(turn, spec.path) if spec.path else reply_value(turn)
    ok = has_type(spec.value, actual)
    where = spec.path or "output"
    return Outcome(ok, f"{where} is {json_type(actual)}, not {spec.value}", spec.value, json_type(actual))


def _tool_called(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> Outcome:
    operand = spec.operand
    calls = _calls(turn)
    names = [str(c.get("name")) for c in calls]
    if isinstance(operand, dict):
        return _tool_called_with(operand, calls, names, turn)
    return _tool_called_by_name(operand, names, turn)


def _tool_called_with(
    operand: dict[str, JSONValue],
    calls: list[Mapping[str, JSONValue]],
    names: list[str],
    turn: Mapping[str, JSONValue],
) -> Outcome:
    """``{name, arguments}``: a call of that tool whose arguments include the given ones."""
    name, arguments = operand["name"], operand.get("arguments")
    same = [c for c in calls if tool_name_matches(str(c.get("name")), name)]
    ok = any(arguments is None or subset_matches(arguments, c.get("arguments")) for c in same)
    if ok:
        return Outcome(True, f"'{name}' was called", operand, names)
    if same and arguments is not None:
        got = "; ".join(json.dumps(c.get("arguments"), ensure_ascii=False, sort_keys=True) for c in same)
        return Outcome(
            False,
            f"'{name}' was called, but not with arguments {_shown(arguments)} (got {got})",
            operand,
            names,
        )
    return Outcome(False, f"'{name}' was not called (called: {_called(turn)})", operand, names)


def _tool_called_by_name(operand: JSONValue, names: list[str], turn: Mapping[str, JSONValue]) -> Outcome:
    """A tool name, or a list of names (any of them will do)."""
    wanted = [operand] if isinstance(operand, str) else list(operand)
    ok = any(tool_name_matches(n, w) for n in names for w in wanted)
    label = f"'{wanted[0]}'" if len(wanted) == 1 else "none of " + ", ".join(f"'{w}'" for w in wanted)
    message = (
        f"{label} was not called (called: {_called(turn)})"
        if len(wanted) == 1
        else (f"{label} was called (called: {_called(turn)})")
    )
    return Outcome(ok, message, operand, names)


def result_matches(expected: JSONValue, actual: JSONValue) -> bool:
    """Yao's rules: objects are subset-matched, ``"regex:..."`` strings are patterns, else equality."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            k in actual and result_matches(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, str):
        if expected.startswith("regex:"):
            return user_regex(expected[len("regex:") :]).search(as_text(actual)) is not None
        return as_text(actual) == expected
    return bool(expected == actual)


def _tool_result(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> Outcome:
    operand = spec.operand
    tool, expected = operand["tool"], operand.get("result")
    same = [c for c in _calls(turn) if tool_name_matches(str(c.get("name")), tool)]
    if not same:
        return Outcome(False, f"'{tool}' was not called (called: {_called(turn)})", expected, None)
    for call in same:
        if not call.get("error") and (expected is None or result_matches(expected, call.get("result"))):
            return Outcome(True, f"'{tool}' returned the expected result", expected, call.get("result"))
    return _tool_result_failure(tool, expected, same)


def _tool_result_failure(
    tool: JSONValue, expected: JSONValue, same: list[Mapping[str, JSONValue]]
) -> Outcome:
    """No call of the tool returned the expected result: every one failed (the first error), or the
    first one's result."""
    failed = next((c for c in same if c.get("error")), None)
    if failed is not None and all(c.get("error") for c in same):
        return Outcome(
            False, f"'{tool}' returned an error: {failed.get('error')}", expected, failed.get("error")
        )
    actual = same[0].get("result")
    return Outcome(
        False, f"'{tool}' result is not {_shown(expected)}; got {_shown(actual)}", expected, actual
    )


EVALUATORS = {
    # Yao's spelling of the matchers (:mod:`.vocabulary`): assertion type -> evaluator
    "equals": _equals,
    "contains": _contains,
    "not_contains": lambda spec, turn: _contains(spec, turn, negate_word=True),
    "regex": _regex,
    "json_path": _json_path,
    "type": _type,
    "tool_called": _tool_called,
    "tool_result": _tool_result,
}

DETERMINISTIC = frozenset(EVALUATORS)


def evaluate(spec: AssertionSpec, turn: Mapping[str, JSONValue]) -> Outcome:
    """A deterministic assertion (not ``script``/``agent``) on one turn, negate and message applied."""
    return finish(spec, EVALUATORS[spec.type](spec, turn))


def finish(spec: AssertionSpec, outcome: Outcome) -> Outcome:
    """Apply ``negate`` (the assertion must not hold) and the custom ``message``."""
    if spec.negate:
        message = f"expected {spec.describe()[len('not ') :]} not to hold, but it did"
        outcome = Outcome(not outcome.passed, message, outcome.expected, outcome.actual, outcome.details)
    if not outcome.passed and spec.message:
        outcome.details = {"detail": outcome.message, **outcome.details}
        outcome.message = spec.message
    return outcome


def all_hold(outcomes: Sequence[Outcome]) -> bool:
    return all(o.passed for o in outcomes)
