"""checks.vocabulary: one implementation per comparison; the formats' words map onto it."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_semantictest.checks import vocabulary as v
from pytest_semantictest.checks.assertions import EVALUATORS
from pytest_semantictest.checks.matchers import CONDITIONS, MATCHER_KEYS
from pytest_semantictest.checks.operators import OPERATORS
from pytest_semantictest.formats.highbar.models import MATCHER_KEYS as HIGHBAR_KEYS


@pytest.mark.parametrize(
    "a, b, equal",
    [
        (1, 1.0, True),
        (True, 1, False),
        (200, "200", False),
        ({"a": [1]}, {"a": [1.0]}, True),
        (None, None, True),
    ],
)
def test_one_json_equality(a: Any, b: Any, equal: bool) -> None:
    assert v.json_equal(a, b) is equal and v.json_equal(b, a) is equal


def test_an_integer_is_a_number_but_a_boolean_is_not() -> None:
    assert v.has_type("number", 3) and v.has_type("integer", 3) and not v.has_type("integer", 3.5)
    assert not v.has_type("number", True) and v.json_type(True) == "boolean"


def test_javascript_flags() -> None:
    assert v.compile_regex("^ok$", "im").search("x\nOK") is not None
    assert v.compile_regex("^ok$").search("x\nOK") is None


# the same question to each containment rule, with the answer each format's tool gives
CONTAINS = [
    # (haystack, needle, SemanticTest, highbar, Yao, compliance)
    ("hello world", "world", True, True, True, True),
    (["hello world"], "world", True, False, True, True),  # an item that contains it
    ([{"name": "search"}], "search", True, False, True, True),  # a tool call of that name
    ({"k": "v"}, "k", True, None, True, False),  # a key (Yao: the JSON text has it)
    ({"k": "v"}, "v", False, None, True, True),  # a value
    (["A"], "a", False, False, False, False),
]


@pytest.mark.parametrize("haystack, needle, semantictest, highbar, yao, compliance", CONTAINS)
def test_the_four_containment_rules(
    haystack: Any, needle: Any, semantictest: bool, highbar: bool | None, yao: bool, compliance: bool
) -> None:
    assert v.holds_item(haystack, needle) is semantictest
    assert v.member_or_text(haystack, needle, False) is highbar
    assert v.member_or_substring(haystack, needle) is yao
    assert v.deep_contains(haystack, needle) is compliance


def test_each_format_has_one_table_of_its_words() -> None:
    assert MATCHER_KEYS == HIGHBAR_KEYS == frozenset(CONDITIONS)
    assert {"equals", "contains", "matches"} <= set(OPERATORS) & set(CONDITIONS)
    assert {"equals", "contains", "regex", "type"} <= set(EVALUATORS)
    assert CONDITIONS["icontains"](["A"], "a") and not OPERATORS["contains"](["A"], "A")
