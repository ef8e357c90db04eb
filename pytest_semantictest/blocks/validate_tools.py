"""The ``ValidateTools`` block: check which tools an agent called, in what order, with what args."""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, ClassVar, Final, TypeGuard

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo

from ..evidence import ToolCalls, tool_call
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from ..shown import shorten
from .base import Block, BlockError

if TYPE_CHECKING:
    from ..evidence import Evidence
    from ..step import StepContext

_NOT_CALLS = frozenset(
    {"text", "thinking", "redacted_thinking", "image", "document", "tool_result", "reasoning", "message"}
)
_MISSING: Final = object()


def _parse_args(value: JSONValue) -> JSONValue:
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value


def normalize_tool_call(call: JSONValue) -> JSONObject:
    """One tool call in any known shape -> ``{id, name, args}`` (plus ``result`` if present).

    Shapes: OpenAI (``function.name``, ``function.arguments`` as JSON text or object),
    Anthropic (``name``, ``input``), Vercel (``toolCallId``, ``toolName``, ``args``/``input``),
    normalised (``name``, ``args``), ``arguments``, Gemini ``functionCall``, Bedrock
    ``toolUse``; a bare string is a call of that name without arguments.
    """
    if isinstance(call, str):
        return {"id": None, "name": call, "args": {}}
    if not isinstance(call, Mapping):
        raise ValueError(f"not a tool call object: {call!r:.80}")
    merged = _unwrapped(call)
    call_id = next((merged[k] for k in _ID_KEYS if merged.get(k) is not None), None)
    raw = next((merged[k] for k in _ARGS_KEYS if k in merged), None)
    out: JSONObject = {"id": call_id, "name": _call_name(merged), "args": _parse_args(raw)}
    if "result" in call:
        out["result"] = call["result"]
    return out


_ID_KEYS: Final = ("id", "toolCallId", "tool_call_id", "call_id", "toolUseId")
_ARGS_KEYS: Final = ("args", "input", "arguments", "parameters")


def _unwrapped(call: Mapping[str, JSONValue]) -> JSONObject:
    """The call with its provider wrapper (``function``, ``functionCall``, ``toolUse``) merged in."""
    for wrapper in ("function", "functionCall", "toolUse"):
        inner = call.get(wrapper)
        if isinstance(inner, Mapping):
            return {**{k: v for k, v in call.items() if k != wrapper}, **inner}
    return dict(call)


def _call_name(merged: Mapping[str, JSONValue]) -> str:
    name = next((merged[k] for k in ("name", "toolName", "tool_name") if isinstance(merged.get(k), str)), "")
    kind = merged.get("type")
    if not name and isinstance(kind, str) and kind.startswith("tool-"):
        return kind[5:]  # AI SDK UI message part: {"type": "tool-search", "input": ...}
    return str(name)


def normalize_tool_calls(calls: JSONValue) -> list[JSONObject]:
    """A list of tool calls in any known shape -> list of ``{id, name, args}``.

    Anthropic content blocks that are not calls (``text``, ``thinking`` ...) are skipped.
    Raises ValueError for an element that is neither an object nor a string.
    """
    if not isinstance(calls, (list, tuple)):
        raise ValueError(f"expected a list of tool calls, got {type(calls).__name__}")
    out = []
    for i, call in enumerate(calls):
        if isinstance(call, Mapping) and call.get("type") in _NOT_CALLS:
            continue
        try:
            out.append(normalize_tool_call(call))
        except ValueError as exc:
            raise ValueError(f"toolCalls[{i}] is {exc}") from None
    return out


def _extract_calls(value: JSONValue) -> JSONValue:
    """Find the calls inside a whole response object (StreamParser output, OpenAI, Anthropic)."""
    if not isinstance(value, Mapping):
        return value
    for key in ("toolCalls", "tool_calls"):
        if isinstance(value.get(key), list):
            return value[key]
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        message = choices[0].get("message")
        if isinstance(message, Mapping):
            return message.get("tool_calls") or []
    if isinstance(value.get("content"), list):
        return value["content"]
    return value


def _input_calls(inputs: Mapping[str, JSONValue]) -> JSONValue:
    """The tool calls a step's input holds (``toolCalls``, else a ``body`` to find them in)."""
    raw = inputs.get("toolCalls")
    return _extract_calls(inputs.get("body") if raw is None else raw)


def deep_equal(expected: JSONValue, actual: JSONValue) -> bool:
    """Exact deep equality: numbers by value (1 == 1.0), booleans only equal booleans."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if _both((int, float), expected, actual):
        return bool(expected == actual)
    if _both(Mapping, expected, actual):
        return _equal_objects(expected, actual)
    if _both((list, tuple), expected, actual):
        return len(expected) == len(actual) and all(map(deep_equal, expected, actual))
    return type(expected) is type(actual) and expected == actual


def _equal_objects(expected: Mapping[str, JSONValue], actual: Mapping[str, JSONValue]) -> bool:
    """The same keys, each with deeply equal values."""
    return expected.keys() == actual.keys() and all(deep_equal(v, actual[k]) for k, v in expected.items())


def _both(kinds: type | tuple[type, ...], expected: JSONValue, actual: JSONValue) -> bool:
    return isinstance(expected, kinds) and isinstance(actual, kinds)


def _fmt(value: JSONValue) -> str:
    if value is _MISSING:
        return "(missing)"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text, 200)


def _names(value: JSONValue) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _is_subsequence(wanted: list[str], actual: list[str]) -> bool:
    it = iter(actual)
    return all(name in it for name in wanted)


def _is_template(value: JSONValue) -> bool:
    return isinstance(value, str) and "${" in value


def _tool_names(value: JSONValue, info: ValidationInfo) -> JSONValue:
    if value is None or isinstance(value, str) or _all_strings(value):
        return value
    raise ValueError(f"{info.field_name} must be a tool name or a list of tool names")


def _tool_count(value: JSONValue, info: ValidationInfo) -> JSONValue:
    if value is None or _is_template(value) or (_whole(value) and value >= 0):
        return value
    raise ValueError(f"{info.field_name} must be a whole number of at least 0, got {value!r}")


def _tool_order(value: JSONValue) -> JSONValue:
    if value is None or _is_template(value) or isinstance(value, bool) or _all_strings(value):
        return value
    raise ValueError("order must be a list of tool names or true")


def _expected_args(value: JSONValue) -> JSONValue:
    if value is None or _is_template(value):
        return value
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        return value
    raise ValueError("validateArgs must be an object of {tool name: {argument: expected value}}")


def _whole(value: JSONValue) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _all_strings(value: JSONValue) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


class ValidateToolsConfig(BaseModel):
    """A ValidateTools step's config; any value may be a ``${}`` reference, checked once resolved."""

    model_config = ConfigDict(extra="allow", frozen=True)

    expected: Annotated[JSONValue, BeforeValidator(_tool_names)] = None
    forbidden: Annotated[JSONValue, BeforeValidator(_tool_names)] = None
    minTools: Annotated[JSONValue, BeforeValidator(_tool_count)] = None
    maxTools: Annotated[JSONValue, BeforeValidator(_tool_count)] = None
    order: Annotated[JSONValue, BeforeValidator(_tool_order)] = None
    validateArgs: Annotated[JSONValue, BeforeValidator(_expected_args)] = None


def _impossible_combinations(config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
    """The rules between keys: fewer tools at least than at most, an order to follow."""
    problems: list[tuple[str, str]] = []
    lo, hi = config.get("minTools"), config.get("maxTools")
    if _whole(lo) and _whole(hi) and lo > hi:
        problems.append(("minTools", f"minTools ({lo}) is greater than maxTools ({hi})"))
    if config.get("order") is True and not config.get("expected"):
        problems.append(("order", "order: true needs an 'expected' list to follow"))
    return problems


class ValidateTools(Block):
    """Check an agent's tool calls: expected, forbidden, count, order and arguments."""

    name: ClassVar[str] = "ValidateTools"
    concurrency_safe = True
    primary_input: ClassVar[str] = "toolCalls"
    config_model = ValidateToolsConfig
    config_keys: ClassVar[frozenset[str] | None] = frozenset(ValidateToolsConfig.model_fields)
    inputs: ClassVar[tuple[str, ...]] = ("toolCalls",)
    input_keys: ClassVar[frozenset[str] | None] = frozenset({"toolCalls", "body"})
    outputs: ClassVar[tuple[str, ...]] = (
        "passed",
        "failures",
        "score",
        "checks",
        "actualTools",
        "expectedTools",
    )

    @classmethod
    def validate_config(cls, config: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        """Wrong types (the model's) and impossible combinations, as ``(key, message)``."""
        return super().validate_config(config) + _impossible_combinations(config)

    async def process(self, inputs: JSONObject, ctx: StepContext | None) -> JSONObject:
        """Run every configured check; ``score`` is the fraction of checks passed."""
        raw = _input_calls(inputs)
        if not isinstance(raw, (list, tuple)):
            got = "nothing" if raw is None else f"{type(raw).__name__} {raw!r:.80}"
            raise BlockError(f"ValidateTools needs input 'toolCalls' (a list of tool calls); got {got}")
        try:
            calls = normalize_tool_calls(raw)
        except ValueError as exc:
            raise BlockError(f"ValidateTools: {exc}") from None
        problems = self.validate_config(self.config)
        if problems:
            raise BlockError("ValidateTools config: " + "; ".join(m for _, m in problems))
        return self.check(calls)

    def check(self, calls: list[JSONObject]) -> JSONObject:
        """Validate already normalised calls."""
        cfg = self.config
        actual = [c["name"] for c in calls]
        tally = _Tally()
        expected = list(dict.fromkeys(_names(cfg.get("expected"))))
        _check_expected(tally, expected, actual)
        _check_forbidden(tally, list(dict.fromkeys(_names(cfg.get("forbidden")))), actual)
        _check_counts(tally, cfg, len(actual))
        order = cfg.get("order")
        listed = _names(order) if isinstance(order, list) else []
        _check_order(tally, expected if order is True else listed, actual)
        for tool, spec in (cfg.get("validateArgs") or {}).items():
            _check_args(tally, tool, spec, calls)
        return {
            "passed": not tally.failures,
            "failures": tally.failures,
            "score": tally.score(),
            "checks": tally.checks,
            "actualTools": actual,
            "expectedTools": expected or listed,
        }

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The tool calls the block checked, with their arguments (read from its input as it did),
        else the names it saw (its ``actualTools``)."""
        raw = _input_calls(trace.input) if isinstance(trace.input, Mapping) else None
        try:
            calls = normalize_tool_calls(raw) if isinstance(raw, (list, tuple)) else None
        except ValueError:
            calls = None
        if calls is not None:
            return [
                ToolCalls(
                    [
                        tool_call(
                            {
                                "name": c["name"],
                                "arguments": c["args"],
                                **({"result": c["result"]} if "result" in c else {}),
                            }
                        )
                        for c in calls
                    ]
                )
            ]
        out = trace.output
        names = out.get("actualTools") if isinstance(out, Mapping) else None
        return [ToolCalls([tool_call(n) for n in names])] if isinstance(names, list) else []


@dataclass
class _Tally:
    """The checks made and the failures found, in the order the block reports them."""

    checks: list[JSONObject] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def score(self) -> float:
        """The fraction of checks passed (1.0 when nothing was checked)."""
        passed = sum(1 for c in self.checks if c["passed"])
        return passed / len(self.checks) if self.checks else 1.0


def _check_expected(tally: _Tally, expected: list[str], actual: list[str]) -> None:
    missing = [n for n in expected if n not in actual]
    tally.checks += [{"check": "expected", "tool": n, "passed": n not in missing} for n in expected]
    if missing:
        tally.failures.append(f"Missing expected tools: {', '.join(missing)}")


def _check_forbidden(tally: _Tally, forbidden: list[str], actual: list[str]) -> None:
    used = [n for n in forbidden if n in actual]
    tally.checks += [{"check": "forbidden", "tool": n, "passed": n not in used} for n in forbidden]
    if used:
        tally.failures.append(f"Used forbidden tools: {', '.join(used)}")


_COUNT_BOUNDS: Final = (
    ("minTools", operator.ge, "Too few tools: {count} < {bound}"),
    ("maxTools", operator.le, "Too many tools: {count} > {bound}"),
)
"""Each bound on the number of calls: its key, how the count must compare with it, the failure."""


def _check_counts(tally: _Tally, cfg: Mapping[str, JSONValue], count: int) -> None:
    for key, holds, failure in _COUNT_BOUNDS:
        bound = cfg.get(key)
        if bound is None:
            continue
        ok = holds(count, bound)
        tally.checks.append({"check": key, "expected": bound, "actual": count, "passed": ok})
        if not ok:
            tally.failures.append(failure.format(count=count, bound=bound))


def _check_order(tally: _Tally, wanted: list[str], actual: list[str]) -> None:
    """The ``wanted`` tools were called in that order (others may come between)."""
    if not wanted:
        return
    ok = _is_subsequence(wanted, actual)
    tally.checks.append({"check": "order", "expected": wanted, "actual": actual, "passed": ok})
    if not ok:
        tally.failures.append(
            f"Tool order incorrect: expected {' -> '.join(wanted)}, got {', '.join(actual) or '(no tools)'}"
        )


def _check_args(tally: _Tally, tool: str, spec: Mapping[str, JSONValue], calls: list[JSONObject]) -> None:
    """One check per expected argument; passes when any call of ``tool`` has that value."""
    made = [c for c in calls if c["name"] == tool]
    if not made:
        tally.failures.append(f"Tool '{tool}' not called, cannot validate args")
        for arg in spec or [None]:
            tally.checks.append({"check": "args", "tool": tool, "arg": arg, "passed": False})
        return
    for arg, want in spec.items():
        _check_arg(tally, tool, arg, want, [_argument(c, arg) for c in made])


def _check_arg(tally: _Tally, tool: str, arg: str, want: JSONValue, values: list[JSONValue]) -> None:
    """``values`` (one per call of ``tool``) hold ``want`` at least once."""
    ok = any(v is not _MISSING and deep_equal(want, v) for v in values)
    shown = [None if v is _MISSING else v for v in values]
    tally.checks.append(
        {
            "check": "args",
            "tool": tool,
            "arg": arg,
            "expected": want,
            "actual": shown[0] if len(shown) == 1 else shown,
            "passed": ok,
        }
    )
    if not ok:
        tally.failures.append(
            f"Tool '{tool}' arg '{arg}' mismatch: expected {_fmt(want)}, got {_got(values)}"
        )


def _argument(call: JSONObject, arg: str) -> JSONValue:
    """The value a call gave ``arg``, or ``_MISSING``."""
    return call["args"].get(arg, _MISSING) if isinstance(call["args"], Mapping) else _MISSING


def _got(values: list[JSONValue]) -> str:
    """What the calls of a tool gave an argument, and how many calls when several."""
    got = ", ".join(_fmt(v) for v in values)
    return got + f" ({len(values)} calls)" if len(values) > 1 else got
