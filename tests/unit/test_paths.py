"""pytest_semantictest.paths: one form for paths, a parser per dialect, two lookups."""

from __future__ import annotations

import pytest

from pytest_semantictest.paths import (
    MISSING,
    PathError,
    get_path,
    require_path,
    simple_jsonpath,
    split_dotted,
    split_indexed,
    split_path,
)

DATA = {"users": [{"name": "ann", "tags": ["a", "b"]}], "0": "zero", "body": '{"token": "t"}'}


@pytest.mark.parametrize(
    "written, parsed",
    [
        ("users[0].name", ("users", 0, "name")),
        ("items[-1]", ("items", -1)),
        ("x-key:1.length", ("x-key:1", "length")),
    ],
)
def test_references(written: str, parsed: tuple[str | int, ...]) -> None:
    assert split_path(written) == parsed


def test_every_dialect_parses_onto_the_same_form() -> None:
    same = ("users", 0, "name")
    assert (
        split_path("users[0].name") == split_dotted("users.0.name") == split_indexed("users[0].name") == same
    )
    assert simple_jsonpath("$.users[0].name") == simple_jsonpath("users[0].name") == same
    assert simple_jsonpath("$") == ()
    assert simple_jsonpath("$..name") is None and simple_jsonpath("$.users[*]") is None


def test_a_reference_names_nothing_or_reads_inside_json_text() -> None:
    assert get_path(DATA, ("users", 0, "tags", "length")) == 2
    assert get_path(DATA, ("users", -1, "name")) == "ann"
    assert get_path(DATA, ("body", "token")) == "t"
    assert get_path(DATA, ("users", 3)) is MISSING


def test_agent_config_paths_say_what_was_there() -> None:
    assert require_path(DATA, split_dotted("0")) == "zero"
    assert require_path(DATA, split_dotted("users.0.tags.1")) == "b"
    with pytest.raises(PathError, match=r"^no key 'nope' \(keys: users, 0, body\)$"):
        require_path(DATA, split_dotted("nope"))
    with pytest.raises(PathError, match=r"^index 5 is out of range \(a list of 1\)$"):
        require_path(DATA, split_dotted("users.5"))
    with pytest.raises(PathError, match=r"^'-1' is not an index into a list of 1$"):
        require_path(DATA, split_dotted("users.-1"))
    with pytest.raises(PathError, match=r"^cannot read 'x' from a str$"):
        require_path(DATA, split_dotted("body.x"))


def test_a_highbar_trigger_step_must_be_a_word_with_indexes() -> None:
    assert split_indexed("function_calls[0][1].args") == ("function_calls", 0, 1, "args")
    with pytest.raises(PathError, match=r"^invalid path segment 'a-b'$"):
        split_indexed("function_calls.a-b")
