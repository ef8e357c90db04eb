"""Agents described by key-value bullets (``- Name: router``, ``- Tools: [...]``), as a file's setup and
a case's ``**Setup:**`` write them, read into :class:`~.models.Agent` records."""

from __future__ import annotations

import re

from ...errors import Problem, clip, did_you_mean
from ...json_types import JSONObject
from .markdown import Item, Line, bullet_tree, item_value, key_value, snake
from .models import Agent

_AGENT_KEYS = ("name", "instructions", "tools", "handoffs", "skills")
_UPDATED = re.compile(r"^`?([\w.-]+)`?\s+is\s+updated\s*:?\s*$", re.I)


def agent_groups(tokens: list[Line], at: int) -> list[tuple[str | None, list[Item], int]]:
    """The setup's bullets as ``(agent, bullets, line)`` runs: bullets after a line like "Router is
    updated:" belong to that agent, the ones before any such line to none."""
    items, other = bullet_tree(tokens)
    groups: list[tuple[str | None, list[Item], int]] = [(None, [], at)]
    prose = {t.no: t.text.strip() for t in other if t.fence is None}
    for item in items:
        heading = max((no for no in prose if no < item.line), default=None)
        updated = _UPDATED.match(prose[heading]) if heading is not None else None
        owner = updated.group(1) if updated else None
        if groups[-1][0] != owner:
            groups.append((owner, [], item.line))
        groups[-1][1].append(item)
    return groups


def agent_from_items(
    items: list[Item], heading_id: str | None, line: int, problems: list[Problem]
) -> Agent | None:
    """An Agent from key-value bullets; None when they name no agent at all."""
    values, extra = _agent_values(items, problems)
    if heading_id is None and "name" not in values:
        return None
    name = values.get("name") if isinstance(values.get("name"), str) and values.get("name") else heading_id
    assert name is not None
    fields: JSONObject = {"id": heading_id or name, "name": name, "extra": extra, "line": line}
    if isinstance(values.get("instructions"), str):
        fields["instructions"] = values["instructions"]
    fields.update(_agent_lists(values))
    return Agent(**fields)


def _agent_values(items: list[Item], problems: list[Problem]) -> tuple[JSONObject, JSONObject]:
    """The agent fields the bullets give, and their other ``key: value`` bullets (a key close to a
    field's name is a problem, not an extra)."""
    values: JSONObject = {}
    extra: JSONObject = {}
    for item in items:
        pair = key_value(item.text)
        if pair is None:
            continue
        key = pair[0].lower()
        if key in _AGENT_KEYS:
            values[key] = item_value(item)
            continue
        near = did_you_mean(key, _AGENT_KEYS, 0.8)
        if near:
            problems.append(Problem("Setup", f"unknown agent field '{clip(pair[0])}'{near}", item.line))
            continue
        extra[snake(pair[0])] = item_value(item)
    return values, extra


def _agent_lists(values: JSONObject) -> JSONObject:
    """The agent's list fields the bullets give: a single value is a list of one (none when empty)."""
    lists: JSONObject = {}
    for key in ("tools", "handoffs", "skills"):
        value = values.get(key)
        if value is not None:
            lists[key] = value if isinstance(value, list) else [v for v in [str(value)] if v]
    return lists
