"""``{{message}}``, ``{{test.id}}``, ``{{test.name}}`` and ``{{session.<path>}}`` in agent config.

Resolved in the request body and headers, in ``correlate`` and in session hook commands,
structurally (never by text replacement of serialized JSON). A string that is only a
placeholder keeps the JSON type of its value; inside longer text the value is interpolated
(as JSON when it is not text). Same rules as highbar 0.1.0rc3.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..json_types import JSONValue
from ..paths import PathError, require_path, split_dotted
from .errors import AgentError

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


class PlaceholderError(AgentError):
    """A placeholder with no value here (no message in a hook, a missing session key)."""


@dataclass(frozen=True)
class Values:
    """What placeholders resolve to for one message of one test execution."""

    test_id: str
    message: str | None = None
    test_name: str = ""
    session: Mapping[str, JSONValue] = field(default_factory=dict)


def render(value: JSONValue, values: Values) -> JSONValue:
    """``value`` with every placeholder resolved, in strings and inside dicts and lists."""
    if isinstance(value, dict):
        return {key: render(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, values) for item in value]
    if not isinstance(value, str) or "{{" not in value:
        return value
    whole = PLACEHOLDER.fullmatch(value)
    if whole is not None:
        return _resolve(whole.group(1), values)

    def text(match: re.Match[str]) -> str:
        resolved = _resolve(match.group(1), values)
        return resolved if isinstance(resolved, str) else json.dumps(resolved, ensure_ascii=False)

    return PLACEHOLDER.sub(text, value)


def uses(value: JSONValue, name: str) -> bool:
    """Whether ``value`` contains the placeholder ``{{name}}`` anywhere."""
    if isinstance(value, dict):
        return any(uses(item, name) for item in value.values())
    if isinstance(value, list):
        return any(uses(item, name) for item in value)
    return isinstance(value, str) and any(m.group(1) == name for m in PLACEHOLDER.finditer(value))


def _resolve(name: str, values: Values) -> JSONValue:
    if name == "message":
        if values.message is None:
            raise PlaceholderError("{{message}}: there is no message here")
        return values.message
    if name == "test.id":
        return values.test_id
    if name == "test.name":
        return values.test_name
    if name.startswith("session."):
        path = name.removeprefix("session.")
        try:
            return require_path(dict(values.session), split_dotted(path))
        except PathError as e:
            raise PlaceholderError(f"{{{{session.{path}}}}}: {e}") from None
    raise PlaceholderError(f"unknown placeholder {{{{{name}}}}}")
