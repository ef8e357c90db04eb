"""Every block's config is a pydantic model, and its problems are the model's (with the rules between keys
a block adds), each at its place with the words a user reads."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from pytest_semantictest.blocks.base import Block, config_problems
from pytest_semantictest.blocks.registry import get_block, known_blocks

INTERNAL = ("YaoHook", "McpRequest")  # blocks a format's compiler puts in a pipeline
BLOCKS = sorted({*known_blocks(), *INTERNAL})


def block(name: str) -> type[Block]:
    cls = get_block(name)
    assert cls is not None, name
    return cls


def model_keys(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


@pytest.mark.parametrize("name", BLOCKS)
def test_every_block_that_takes_config_has_a_model_naming_its_keys(name: str) -> None:
    cls = block(name)
    if cls.config_keys == frozenset():
        return  # takes no config: the loader names every key as unknown
    model = cls.config_model
    assert isinstance(model, type) and issubclass(model, BaseModel), f"{name} has no config model"
    assert cls.config_keys is not None and model_keys(model) == set(cls.config_keys), name


WRONG = [-1, 2.5, True, "", "x", [], [1], {}, {"a": 1}, None, 10**30]


@pytest.mark.parametrize("name", BLOCKS)
def test_a_block_reports_every_problem_its_model_finds(name: str) -> None:
    """A block that adds rules between keys still reports what its model says about each key."""
    cls = block(name)
    model = cls.config_model
    if model is None:
        return
    for key in model_keys(model):
        for value in WRONG:
            config = {"url": "http://127.0.0.1:9", key: value}  # (McpCall checks a config naming a server)
            found = cls.validate_config(config)
            assert set(config_problems(model, config)) <= set(found), (name, config, found)


@pytest.mark.parametrize(
    ("name", "config", "problems"),
    [
        ("MockData", {}, [("data", "MockData needs 'config.data': the value to put on the DataBus")]),
        ("MockData", {"data": None}, []),
        ("HttpRequest", {"timeout": 0}, []),
        ("HttpRequest", {"timeout": -5}, [("timeout", "timeout must be more than 0 ms, got -5")]),
        ("HttpRequest", {"timeout": "${t}"}, []),
        (
            "ChatRequest",
            {"timeout": True, "disconnect_after": 2},
            [("timeout", "timeout must be a number of milliseconds, got bool True")],
        ),
        ("Loop", {"target": 0}, []),
        ("Loop", {}, [("target", "Loop needs 'target': the id or index of an earlier step")]),
        (
            "Loop",
            {"target": True, "maxIterations": -1, "delayMs": "5"},
            [
                ("target", "must be a step id or index, got True"),
                ("maxIterations", "must be a whole number >= 0, got -1"),
                ("delayMs", "must be a whole number >= 0, got '5'"),
            ],
        ),
        (
            "Loop",
            {"target": "a", "condition": [1]},
            [("condition", "must be an object {path, operator, value}")],
        ),
        (
            "Loop",
            {"target": "a", "condition": {"pth": "x", "operator": "lessThan", "valeu": 1}},
            [
                ("condition.pth", "unknown key 'pth' — did you mean 'path'?"),
                ("condition.valeu", "unknown key 'valeu' — did you mean 'value'?"),
                ("condition.path", "needs a DataBus path string"),
                ("condition.operator", "unknown operator 'lessThan'"),
            ],
        ),
        (
            "Loop",
            {"target": "a", "condition": {"path": "p", "operator": "lt", "value": 3, "opertor": "gt"}},
            [("condition.opertor", "unknown key 'opertor' — did you mean 'operator'?")],
        ),
        ("Loop", {"target": "a", "condition": {"path": "p", "operator": "isEmpty"}}, []),
        (
            "Loop",
            {"target": "a", "condition": {"path": "p", "operator": "gt"}},
            [("condition.value", "'gt' needs a number, got True")],
        ),
        ("StreamParser", {"format": None}, [("format", "format must be a string, got NoneType")]),
        ("StreamParser", {"format": "${f}"}, []),
        (
            "ValidateTools",
            {"expected": [1], "minTools": 3, "maxTools": 1, "order": True},
            [
                ("expected", "expected must be a tool name or a list of tool names"),
                ("minTools", "minTools (3) is greater than maxTools (1)"),
            ],
        ),
        ("ValidateTools", {"order": True}, [("order", "order: true needs an 'expected' list to follow")]),
        (
            "McpCall",
            {"url": "http://h", "command": "x", "method": "tool/call", "env": []},
            [
                ("command", "give the server as 'command' (stdio) or 'url' (streamable HTTP), one of them"),
                ("method", "unknown MCP method 'tool/call' — did you mean 'tools/call'?"),
                ("env", "'env' is a mapping"),
            ],
        ),
        (
            "McpCall",
            {"url": "http://h", "tool": ""},
            [("tool", "tools/call needs the name: 'tool' (or params.name)")],
        ),
    ],
)
def test_problem_lines_of_the_blocks(
    name: str, config: dict[str, Any], problems: list[tuple[str, str]]
) -> None:
    assert block(name).validate_config(config) == problems
