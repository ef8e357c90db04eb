"""highbar validation of ``expect:`` blocks (function calls, matchers, response, regexes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...errors import clip
from ...json_types import JSONValue
from .models import MATCHER_KEYS, REGEX_KEYS
from .rules import (
    MATCHERS_TEXT,
    TEMPLATE_ONLY,
    Path_,
    has_template,
    near_matcher,
    regex_or_reason,
    type_name,
    user_keys,
)
from .spans_ext import check_spans
from .validate_core import ValidatorCore


class ExpectChecks(ValidatorCore):
    """The checks of ``expect:`` blocks, a part of the validator."""

    def expect(self, raw: JSONValue, where: Path_) -> tuple[bool, bool] | None:
        """Check an expect; None when it is broken, else ``(asserts something, observes calls)``."""
        if not self.need(raw, dict, where, "expect must be a mapping"):
            return None
        self.keys(raw, "expect", where)
        if not user_keys(raw):
            self.err(
                where,
                "asserts nothing — use function_calls, response, forbid, or function_calls: [] "
                "to check that no tool is called",
            )
            return None
        has_calls = "function_calls" in raw and self.function_calls(raw["function_calls"], where)
        for key in ("ordered", "exclusive"):
            if key in raw:
                self.call_flag(raw, key, where)
        forbid = "forbid" in raw
        if forbid and not _tool_names(raw["forbid"]):
            self.err(where, "forbid must be a non-empty list of tool names", where + ("forbid",))
        if "response" in raw:
            self.response(raw["response"], where)
        if "spans" in raw:
            check_spans(self, raw["spans"], where)
        observes = has_calls or forbid
        return True, observes

    def function_calls(self, calls: JSONValue, where: Path_) -> bool:
        """Check the expected calls; True when they are a list (the test observes tool calls)."""
        if not self.need(calls, list, where, "function_calls must be a list", where + ("function_calls",)):
            return False
        for n, call in enumerate(calls):
            self.call(call, where + ("function_calls", n))
        return True

    def call_flag(self, raw: Mapping[str, JSONValue], key: str, where: Path_) -> None:
        """``ordered``/``exclusive``: true or false, about the ``function_calls`` beside it."""
        if self.need(raw[key], bool, where, f"{key} must be true or false", where + (key,)):  # noqa: SIM102
            if "function_calls" not in raw:
                self.err(where, f"{key} needs function_calls (the calls it applies to)", where + (key,))

    def response(self, raw: JSONValue, where: Path_) -> None:
        at = where + ("response",)
        if raw is None or (isinstance(raw, dict) and not user_keys(raw)):
            self.err(where, f"response has no matcher (use {MATCHERS_TEXT})", at)
            return
        if not self.need(raw, dict, where, "response must be a mapping", at):
            return
        self.keys(raw, "response", at)
        for key, value in raw.items():
            if key in MATCHER_KEYS and self.need(value, str, at, f"{key} must be a string", at + (key,)):
                self.response_operand(key, value, at)

    def response_operand(self, key: str, value: str, at: Path_) -> None:
        """A response matcher's text: not empty (but for equals), no template, a valid regex."""
        if not value and key != "equals":
            # "" is in every answer: a check that cannot fail
            self.err(at, f"{key} cannot be empty", at + (key,))
        elif "{{" in value:
            self.err(at + (key,), TEMPLATE_ONLY)
        elif key in REGEX_KEYS:
            self.regex(value, at + (key,), lambda reason: f"invalid regex: {reason}")

    def regex(
        self, pattern: str, at: Path_, message: Callable[[str], str], where: Path_ | None = None
    ) -> None:
        compiled = regex_or_reason(pattern)
        if isinstance(compiled, str):
            self.err(at if where is None else where, message(compiled), at)
        else:
            self.regexes[pattern] = compiled

    def call(self, raw: JSONValue, where: Path_) -> None:
        if not self.need(raw, dict, where, "a function_calls entry must be a mapping"):
            return
        self.keys(raw, "function_call", where)
        if "name" not in raw:
            self.err(where, "missing 'name' (the tool expected to be called)")
        else:
            self.call_name(raw["name"], where)
        for key in ("params", "result"):
            value = raw.get(key)
            if value is None:
                continue
            if not self.need(
                value, dict, where, f"{key} must be a mapping of expected values", where + (key,)
            ):
                continue
            if has_template(value):
                self.err(where + (key,), TEMPLATE_ONLY)
            self.expected(value, where + (key,))
        if "error" in raw:
            self.call_error(raw["error"], where)

    def call_name(self, raw: JSONValue, where: Path_) -> None:
        at = where + ("name",)
        if isinstance(raw, str):
            if not raw.strip():
                self.err(where, "function_call 'name' cannot be empty", at)
        elif isinstance(raw, list):
            if not raw:
                self.err(where, "function_call 'name' cannot be an empty list", at)
            elif not all(isinstance(name, str) and name.strip() for name in raw):
                self.err(
                    where,
                    f"function_call 'name' list must contain only non-empty strings, got {clip(repr(raw))}",
                    at,
                )
        else:
            self.err(
                where, f"function_call 'name' must be a string or a list of strings, got {type_name(raw)}", at
            )

    def call_error(self, raw: JSONValue, where: Path_) -> None:
        at = where + ("error",)
        if isinstance(raw, bool):
            return
        if (slip := _matcher_slip(raw)) is not None:
            key, intended = slip
            self.err(at, f"unknown matcher '{clip(key)}' — did you mean '{intended}'?", at + (key,))
            return
        if not isinstance(raw, dict) or not raw or not set(raw) <= MATCHER_KEYS:
            self.err(
                at,
                'error must be true, false or a matcher such as {contains: "Timeout"}; a bare text would '
                "be ambiguous between equals and contains",
            )
            return
        if has_template(raw):
            self.err(at, TEMPLATE_ONLY)
        self.expected(raw, at)

    def expected(self, value: JSONValue, where: Path_) -> None:
        """highbar's ``validate_expected``: matchers well formed and unambiguous, at any depth."""
        if not isinstance(value, dict):
            return
        keys = [str(key) for key in value]
        known = [key for key in keys if key in MATCHER_KEYS]
        unknown = [key for key in keys if key not in MATCHER_KEYS]
        if known and unknown:
            self.err(
                where,
                f"mixes matcher keys {sorted(known)} with other keys {sorted(unknown)}. "
                "Use only matcher keys, or wrap a literal dict as {equals: {...}}",
            )
        elif known:
            self.matcher_regexes(value, where)
        else:
            self.literal_mapping(value, where)

    def literal_mapping(self, value: Mapping[str, JSONValue], where: Path_) -> None:
        """Expected values by key: a key one slip from a matcher is taken for a misspelt matcher."""
        for key, item in value.items():
            intended = near_matcher(key)
            if intended:
                self.err(
                    where,
                    f"unknown matcher '{clip(key)}' — did you mean '{intended}'? "
                    "For a literal dict with this key, wrap it as {equals: {...}}",
                    where + (key,),
                )
            else:
                self.expected(item, where + (key,))

    def matcher_regexes(self, value: Mapping[str, JSONValue], where: Path_) -> None:
        """The regexes of a matcher compile (the operand of equals is a literal and is not inspected)."""
        for key in REGEX_KEYS:
            if key not in value:
                continue
            pattern = value[key]
            if not isinstance(pattern, str):
                self.err(where, f"'{key}' needs a regex string, got {type_name(pattern)}", where + (key,))
                continue

            def message(reason: str, key: str = key, pattern: str = pattern) -> str:
                return f"invalid regex in '{key}' ({clip(repr(pattern))}): {reason}"

            self.regex(pattern, where + (key,), message, where)


def _tool_names(names: JSONValue) -> bool:
    """``names`` is a non-empty list of tool names."""
    return isinstance(names, list) and bool(names) and all(isinstance(n, str) and n for n in names)


def _matcher_slip(raw: JSONValue) -> tuple[str, str] | None:
    """An ``error`` mapping whose every key is a matcher or one slip from one (``contain``): the first
    slipped key and the matcher meant, or None."""
    if not isinstance(raw, dict) or not raw or set(raw) <= MATCHER_KEYS:
        return None
    near = [(key, intended) for key in raw if (intended := near_matcher(str(key)))]
    if near and all(key in MATCHER_KEYS or near_matcher(str(key)) for key in raw):
        return near[0]
    return None
