"""Rules and helpers shared by the highbar validator's parts (constants, messages, templates)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from ...agents.placeholders import PLACEHOLDER as PLACEHOLDER
from ...agents.placeholders import uses
from ...checks.regex import user_regex
from ...errors import Problem, clip
from ...json_types import JSONValue
from ...paths import Path, PathError, split_indexed
from ...redact import Redactor
from .models import MATCHER_KEYS
from .problem import HighbarProblem
from .spec import TRACE_FIELDS

Path_ = Path

MAX_BYTES = 20 * 1024 * 1024
EXTENSION_PREFIX = "x-"
MATCHERS_TEXT = ", ".join(sorted(MATCHER_KEYS))

TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)
RESPONSE_PATH = re.compile(r"[^.\s]+(?:\.[^.\s]+)*")
HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
PLACEHOLDERS_HELP = "(placeholders here: {{message}}, {{test.id}}, {{test.name}}, {{session.<key>}})"
ALL_PLACEHOLDERS = frozenset({"message", "test.id", "test.name", "session"})
SETUP_PLACEHOLDERS = frozenset({"test.id", "test.name"})
TEARDOWN_PLACEHOLDERS = frozenset({"test.id", "test.name", "session"})
uses_placeholder = uses
"""Whether a value holds ``{{name}}`` anywhere: the agents' own rule (the validator's name for it)."""
TEMPLATE_ONLY = "templates are only resolved in triggers; here '{{...}}' would be compared as literal text"


# --- messages helpers ---------------------------------------------------------------------


def type_name(value: JSONValue) -> str:
    """highbar's ``got <type>``, with YAML's words for null and mappings."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def is_int(value: JSONValue) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def shown_int(value: int) -> str:
    """An integer for a message; a huge one as its magnitude (``about 10**400``)."""
    if abs(value) < 10**15:
        return str(value)
    return f"{'-' if value < 0 else ''}about 10**{int(abs(value).bit_length() * math.log10(2))}"


def user_keys(raw: Mapping[str, JSONValue]) -> list[str]:
    return [key for key in raw if not str(key).startswith(EXTENSION_PREFIX)]


def _stem(key: str) -> str:
    """Fold the slips people make: case, hyphens, a dropped or extra plural (highbar's rule)."""
    stem = key.lower().replace("-", "_")
    for suffix in ("es", "s"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


_NEAR_MISSES = {_stem(key): key for key in MATCHER_KEYS}


def near_matcher(key: str) -> str | None:
    """The matcher key ``key`` was probably meant to be (``contain``, ``Matches``), or None."""
    intended = _NEAR_MISSES.get(_stem(key))
    return intended if intended is not None and intended != key else None


def has_template(value: JSONValue) -> bool:
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, dict):
        return any(has_template(v) for v in value.values())
    if isinstance(value, list):
        return any(has_template(v) for v in value)
    return False


def regex_or_reason(pattern: str) -> re.Pattern[str] | str:
    """The compiled pattern, or the reason it does not compile."""
    try:
        return user_regex(pattern)
    except re.error as exc:
        return str(exc)
    except (OverflowError, RecursionError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def redact_problem(problem: HighbarProblem, redactor: Redactor) -> HighbarProblem:
    """An error that quotes a value (a URL) must not show what came from ``${NAME}``: ``redactor``
    names each expanded value (``Redactor(names=env_names)``)."""
    message = redactor.text(problem.message)
    if message == problem.message:
        return problem
    return HighbarProblem(problem.place, message, problem.line, problem.column)


def dedupe(problems: list[HighbarProblem]) -> list[Problem]:
    seen: set[tuple[str, str, int | None]] = set()
    out: list[Problem] = []
    for p in problems:
        key = (p.place, p.message, p.line)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def parse_template(inner: str) -> tuple[tuple[str | int, ...] | None, str | None]:
    """``(path, None)`` for the inside of a valid ``{{previous...}}``, else ``(None, reason)``."""
    body = inner.strip()
    if not body.startswith("previous."):
        return None, "not a template: a trigger can only use {{previous.function_calls[N]...}}"
    try:
        tokens = split_indexed(body[len("previous.") :])
    except PathError as exc:
        return None, str(exc)
    if tokens[0] != "function_calls":
        return None, f"no key '{clip(tokens[0])}' (the only key is function_calls)"
    if len(tokens) > 1 and not isinstance(tokens[1], int):
        return (
            None,
            f"cannot read '{clip(tokens[1])}' from the list of calls: index it, like function_calls[0]",
        )
    if len(tokens) > 2 and tokens[2] not in TRACE_FIELDS:
        return None, f"a call has no field '{clip(tokens[2])}' (fields: {', '.join(TRACE_FIELDS)})"
    return tuple(tokens), None
