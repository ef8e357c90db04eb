"""HttpRequest/ChatRequest timeouts that no clock can hold (10**400, 1e400, -1, "soon") are one clean
line naming the file and the place: a collection error when written in config, a block error when
they arrive as inputs; never an OverflowError."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pytest_semantictest.blocks.chat_request import ChatRequest
from pytest_semantictest.blocks.http_request import HttpRequest
from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.semantictest.loader import load_file
from pytest_semantictest.run_context import RunContext
from tests.helpers import run_one, step_context

HUGE = "1" + "0" * 400


def _file(tmp_path: Path, timeout: str, where: str = "config") -> Path:
    step = (
        '{"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9/x"%s}, "config": {%s}, "output": "r"}'
        % ((f', "timeout": {timeout}', "") if where == "input" else ("", f'"timeout": {timeout}'))
    )
    path = tmp_path / "t.json"
    path.write_text(
        '{"tests": [\n  {"id": "a",\n   "pipeline": [\n    ' + step + "\n   ],\n"
        '   "assertions": {"r.status": 200}}\n]}\n'
    )
    return path


def _problem(path: Path) -> str:
    """The one problem loading ``path`` reports: the file's (SpecError) or its one test's (Case.error)."""
    try:
        suite = load_file(path)
    except SpecError as err:
        return str(err)
    return suite.cases[0].error or ""


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (HUGE, "about 10**400 ms is too long: at most 86400000 ms"),
        ("1e400", "finite"),
        ("-5", "more than 0 ms"),
        ('"soon"', "number of milliseconds"),
    ],
)
def test_config_timeout_is_a_collection_error(tmp_path: Path, value: str, said: str) -> None:
    message = _problem(_file(tmp_path, value))
    assert "t.json:4:" in message and "pipeline[0].config.timeout" in message, message
    assert said in message and "Overflow" not in message and len(message.splitlines()) == 1, message


def test_step_level_timeout_is_checked_too(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "tests": [
                    {
                        "id": "a",
                        "pipeline": [
                            {"block": "HttpRequest", "url": "http://127.0.0.1:9/", "timeout": float("inf")}
                        ],
                    }
                ]
            }
        ).replace("Infinity", "1e999")
    )
    assert "timeout must be a finite number" in _problem(path)


def test_literal_input_timeout_is_a_collection_error(tmp_path: Path) -> None:
    message = _problem(_file(tmp_path, HUGE, where="input"))
    assert (
        "t.json:4:" in message
        and "pipeline[0].input.timeout: timeout about 10**400 ms is too long" in message
    )


def test_input_timeout_from_a_reference_is_a_clean_block_error() -> None:
    verdict = run_one(
        [
            {"block": "MockData", "config": {"data": 10**400}, "output": "t"},
            {
                "block": "HttpRequest",
                "input": {"url": "http://127.0.0.1:9/x", "timeout": "${t}"},
                "output": "r",
            },
        ],
        {"r.status": 200},
    )
    error = verdict.trace[1].error
    assert error == "HttpRequest timeout about 10**400 ms is too long: at most 86400000 ms (24 h)", error


def test_chat_request_huge_timeout_is_a_block_error() -> None:
    async def go() -> str:
        session = RunContext()
        block = ChatRequest({"method": "POST", "url": "http://127.0.0.1:9/x", "timeout": float("inf")})
        try:
            await block.process({}, step_context(session))
        except Exception as exc:  # noqa: BLE001
            return f"{type(exc).__name__}: {exc}"
        finally:
            await session.aclose_http()
        return "no error"

    assert (
        asyncio.run(go()) == "BlockError: ChatRequest timeout must be a finite number of milliseconds "
        "(at most 86400000), got inf"
    )


def test_a_valid_timeout_still_loads(tmp_path: Path) -> None:
    assert load_file(_file(tmp_path, "2500")).cases[0].steps[0].config["timeout"] == 2500
    assert HttpRequest.validate_config({"timeout": "${t}"}) == []
