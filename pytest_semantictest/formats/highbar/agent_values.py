"""The checks of single values of the highbar ``agent:`` block (URLs, milliseconds, headers,
placeholders), in highbar's words; :mod:`.agent_model` applies them to the block's fields."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping
from urllib.parse import urlsplit

from ...deadline import MAX_TIMEOUT_MS
from ...errors import clip
from ...json_types import JSONValue
from .rules import (
    ALL_PLACEHOLDERS,
    HEADER_NAME,
    PLACEHOLDER,
    PLACEHOLDERS_HELP,
    Path_,
    is_int,
    shown_int,
    type_name,
)


class AgentProblem(ValueError):
    """One problem of a value, in highbar's words. ``at_owner`` names it at the mapping that holds the
    key (highbar says ``agent: timeout must be ...``); its line is the value's either way."""

    def __init__(self, message: str, *, at_owner: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.at_owner = at_owner


Found = list[tuple[Path_, AgentProblem]]
"""Problems inside one value, each at its place relative to the value."""


def url_problem(url: str, key: str) -> str | None:
    """Why ``url`` (the value of ``key``) is not an http(s) URL the plugin can send to, or None."""
    if "{{" in url:
        return (
            f"{key} cannot hold {{{{...}}}}: placeholders are not resolved in the URL; send the value "
            "in agent.request.body or agent.request.headers"
        )
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # "Invalid IPv6 URL"
        return f"{key} must be an http:// or https:// URL, got {clip(repr(url), 100)} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{key} must be an http:// or https:// URL, got {clip(repr(url), 100)}"
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        return f"{key} has an invalid port: {clip(repr(url), 100)}"
    return None


def milliseconds_problem(value: JSONValue, key: str, minimum: int) -> str | None:
    """Why ``value`` is not a duration of at least ``minimum`` ms and at most a day, or None."""
    if not is_int(value):
        return f"{key} must be an integer (milliseconds), got {type_name(value)}"
    assert isinstance(value, int)
    if value < minimum:
        qualifier = "a positive" if minimum > 0 else "a non-negative"
        return f"{key} must be {qualifier} integer (milliseconds), got {shown_int(value)}"
    if value > MAX_TIMEOUT_MS:  # highbar: OverflowError; a day is plenty
        return f"{key} is too long: at most {MAX_TIMEOUT_MS} ms (24 h), got {shown_int(value)}"
    return None


def header_problems(headers: Mapping[str, JSONValue], tainted: Callable[[str], bool]) -> Found:
    """Each header's name is an HTTP token and its value clean ASCII text (a value with an unset
    ``${VAR}``, ``tainted``, is not looked into)."""
    found: Found = []
    for name, value in headers.items():
        if not HEADER_NAME.fullmatch(name):
            found.append(
                ((name,), AgentProblem(f"{clip(repr(name))} is not a valid header name", at_owner=True))
            )
        if not isinstance(value, str):
            problem = AgentProblem(
                f"{clip(name)} must be a string (quote it), got {type_name(value)}", at_owner=True
            )
            found.append(((name,), problem))
        elif reason := _header_value_problem(value, spacing=not tainted(name)):
            found.append(((name,), AgentProblem(reason)))
    return found


def _header_value_problem(value: str, spacing: bool) -> str | None:
    """Why a header value cannot be sent as written (its spacing and control characters looked at
    with ``spacing``); the value itself is never shown (a secret)."""
    if spacing and (value != value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value)):
        return (
            "the value has a control character or leading or trailing whitespace "
            "(often a secret read with its newline); not shown"
        )
    if not value.isascii():  # HTTP clients send header values as ASCII
        return "the value must be ASCII text (an HTTP header); not shown"
    return None


def placeholder_problems(value: JSONValue, allowed: frozenset[str], has_session: bool) -> Found:
    """The ``{{...}}`` under ``value`` that are unknown or not available here (``allowed``);
    ``{{session.<key>}}`` needs ``agent.session``, whose setup returns it."""
    found: Found = []
    for where, text in _strings(value, ()):
        for match in PLACEHOLDER.finditer(text):
            problem = _placeholder_problem(match.group(1), clip(match.group(0)), allowed, has_session)
            if problem is not None:
                found.append((where, AgentProblem(problem)))
    return found


def _strings(value: JSONValue, where: Path_) -> Iterator[tuple[Path_, str]]:
    """Every string under ``value``, with its place."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, where + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, where + (i,))
    elif isinstance(value, str):
        yield where, value


_KNOWN = ["message", "test.id", "test.name", "session.<key>"]


def _placeholder_problem(name: str, shown: str, allowed: frozenset[str], has_session: bool) -> str | None:
    """What is wrong with the placeholder ``name`` (written ``shown``) here, or None."""
    kind = "session" if name.startswith("session.") and len(name) > len("session.") else name
    if kind not in ALL_PLACEHOLDERS or name == "session":
        close = difflib.get_close_matches(name, _KNOWN, n=1, cutoff=0.6) if len(name) <= 100 else []
        hint = f" — did you mean '{{{{{close[0]}}}}}'?" if close else ""
        return f"unknown placeholder '{shown}'{hint} {PLACEHOLDERS_HELP}"
    if kind not in allowed:
        return f"'{shown}' is not available here"
    if kind == "session" and not has_session:
        return f"'{shown}' needs agent.session, whose setup returns it"
    return None
