"""The fast line index of JSON documents (formats/jsonshallow.py) answers exactly as the full index.

Every path of random documents, laid out with random whitespace, gets the same line from
``load_json(...).line`` as from indexing every token; paths that do not exist get their nearest
ancestor's line in both. Documents the full index has something to say about (a repeated key, NaN,
nesting past the limit) take the full index, so their problems are reported as before.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_semantictest.formats.jsonsource import (
    MAX_DEPTH,
    SHALLOW,
    JsonError,
    JsonSource,
    _index,
    load_json,
)
from tests.helpers import fuzz_examples

SETTINGS = settings(
    max_examples=fuzz_examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

keys = st.sampled_from(["tests", "pipeline", "id", "a", "", "x y", 'q"', "é"]) | st.text(max_size=6)
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=30,
)


def _layout(value: Any, rng: random.Random) -> str:
    """``value`` as JSON with random whitespace (newlines included) between its tokens."""

    def gap() -> str:
        return rng.choice(["", " ", "\n", "\n  ", "\t", " \r\n"])

    if isinstance(value, dict):
        inner = ",".join(
            f"{gap()}{json.dumps(k)}{gap()}:{gap()}{_layout(v, rng)}{gap()}" for k, v in value.items()
        )
        return "{" + inner + gap() + "}"
    if isinstance(value, list):
        return "[" + ",".join(f"{gap()}{_layout(v, rng)}{gap()}" for v in value) + gap() + "]"
    return json.dumps(value)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*at, i))
    return out


def _full(text: str) -> JsonSource:
    source = JsonSource(None)
    _index(text, source)
    return source


@SETTINGS
@given(values, st.integers(0, 2**32))
def test_every_path_gets_the_full_index_line(value: Any, seed: int) -> None:
    text = _layout({"tests": [value], "v": value}, random.Random(seed))
    fast, full = load_json(text), _full(text)
    assert fast.data == json.loads(text)
    for path in _paths(fast.data):
        for asked in (path, (*path, "missing"), (*path, 99)):
            assert fast.line(asked) == full.line(asked), asked
            assert fast.has(asked) == (asked in full.lines), asked
    assert fast.lines == full.lines
    assert not fast.duplicates and not fast.repeated


def test_a_large_suite_is_read_without_the_full_index() -> None:
    tests = [
        {
            "id": f"t{i}",
            "pipeline": [{"block": "MockData", "config": {"data": {"deep": [i]}}}],
            "assertions": {"d.deep": {"equals": [i]}},
        }
        for i in range(50)
    ]
    source = load_json(json.dumps({"tests": tests}, indent=2))
    assert source._lines is None  # the shallow walk was enough
    assert source.line(("tests", 49, "pipeline", 0)) == _full(json.dumps({"tests": tests}, indent=2)).line(
        ("tests", 49, "pipeline", 0)
    )
    assert source._lines is None
    assert source.line(("tests", 49, "pipeline", 0, "config", "data")) is not None
    assert source._lines is not None  # a deeper path: indexed in full, once


@pytest.mark.parametrize("where", ["top", "deep"])
def test_repeated_keys_are_still_reported_with_their_lines(where: str) -> None:
    inner = '{"a": 1,\n "a": 2}'
    text = (
        '{"a": 1,\n"a": 2}'
        if where == "top"
        else '{"tests": [{"pipeline": [{"config": {"x": ' + inner + "}}]}]}"
    )
    source = load_json(text)
    assert len(source.duplicates) == 1 and len(source.repeated) == 1
    assert source.repeated[0][2] == 2  # the later value's line


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("depth", [1, SHALLOW + 2])
def test_non_json_constants_are_still_errors(constant: str, depth: int) -> None:
    text = '{"k": ' * depth + constant + "}" * depth
    with pytest.raises(JsonError, match=f"{constant} is not a JSON value"):
        load_json(text)


def test_nesting_past_the_limit_is_still_an_error() -> None:
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    with pytest.raises(JsonError, match="nested too deeply"):
        load_json('{"tests": [{"pipeline": ' + deep + "}]}")
    just = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)  # the last one opens at the limit, not past it
    assert load_json('{"tests": ' + just + "}").data["tests"]
