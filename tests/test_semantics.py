"""Each decision in notes/semantictest.md, checked through the public runner."""

from __future__ import annotations

import pytest

from pytest_semantictest.databus import MISSING, DataBus
from pytest_semantictest.errors import ReferenceError_
from pytest_semantictest.model import Outcome
from pytest_semantictest.resolve import Resolver
from tests.helpers import mock, run_one


def outcome(pipeline, assertions, **top):
    return run_one(pipeline, assertions, **top).outcome


# --- ${...} resolution -------------------------------------------------------


def test_whole_reference_keeps_type():
    v = run_one(
        [
            mock({"n": 5, "l": [1, 2], "o": {"a": 1}}),
            mock({"n": "${d.n}", "l": "${d.l}", "o": "${d.o}"}, "e"),
        ],
        {"e.n": 5, "e.l": [1, 2], "e.o": {"a": 1}},
    )
    assert v.outcome is Outcome.PASSED, v.failures


def test_reference_inside_string_is_text_and_json():
    v = run_one(
        [mock({"n": 5, "o": {"a": 1}}), mock({"s": "n=${d.n} o=${d.o}"}, "e")], {"e.s": 'n=5 o={"a":1}'}
    )
    assert v.outcome is Outcome.PASSED, v.failures


def test_context_first_then_databus_and_context_values_resolved():
    v = run_one(
        [mock({"u": "${ENDPOINT}", "x": "${X}"}, "e")],
        {"e.u": "http://h/v1/users", "e.x": "ctx"},
        context={
            "BASE_URL": "http://h",
            "API_VERSION": "v1",
            "ENDPOINT": "${BASE_URL}/${API_VERSION}/users",
            "X": "ctx",
        },
    )
    assert v.outcome is Outcome.PASSED, v.failures


def test_env_reference(monkeypatch):
    monkeypatch.setenv("ST_TEST_VALUE", "from-env")
    assert outcome([mock({"v": "${env.ST_TEST_VALUE}"}, "e")], {"e.v": "from-env"}) is Outcome.PASSED


def test_paths_indexes_dashes_numeric_segments():
    bus = DataBus()
    bus.set("users", [{"name": "A"}, {"name": "B"}])
    bus.set("response", {"headers": {"content-type": "application/json"}})
    bus.set("list", ["x", "y"])
    r = Resolver(bus, {}, {})
    assert r.resolve("${users[1].name}") == "B"
    assert r.resolve("${response.headers.content-type}") == "application/json"
    assert r.resolve("${list.0}") == "x"
    assert r.resolve("${users[5].name}") is MISSING


def test_missing_reference_inside_string_is_an_error_naming_slots():
    bus = DataBus()
    bus.set("response", {})
    with pytest.raises(ReferenceError_, match=r"\$\{nope\} names nothing .*response"):
        Resolver(bus, {"A": 1}, {}).resolve("x ${nope} y")


def test_missing_reference_in_longer_string_fails_the_block_never_sends_literal():
    v = run_one([mock({"a": 1}), mock({"s": "x ${d.zzz}"}, "e")], {"d.a": 1})
    assert v.outcome is Outcome.FAILED
    assert "names nothing" in v.failures[0].message
    assert list(v.bus["e"]) == ["error"]


# --- input and output forms ----------------------------------------------------


def test_string_input_becomes_body_and_mapping_output():
    v = run_one(
        [
            mock({"raw": '{"id": 3}'}, "r"),
            {"block": "JsonParser", "input": "${r.raw}", "output": {"parsed": "user"}},
        ],
        {"user.id": 3},
    )
    assert v.outcome is Outcome.PASSED, v.failures


def test_default_output_is_block_id_and_id_defaults_to_block_type():
    v = run_one(
        [
            {"block": "MockData", "config": {"data": {"a": 1}}},
            {"id": "m2", "block": "MockData", "data": {"b": 2}},
        ],
        {"MockData.a": 1, "m2.b": 2},
    )
    assert v.outcome is Outcome.PASSED, v.failures


def test_from_as_input():
    v = run_one(
        [
            mock({"msg": "Hello there"}),
            {
                "block": "ValidateContent",
                "input": {"from": "d.msg", "as": "text"},
                "config": {"contains": "HELLO"},
                "output": "v",
            },
        ],
        {"v.passed": True, "v.score": 1.0},
    )
    assert v.outcome is Outcome.PASSED, v.failures


def test_a_failed_validation_says_why():
    v = run_one(
        [
            mock({"msg": "Hello there"}),
            {
                "block": "ValidateContent",
                "input": {"from": "d.msg", "as": "text"},
                "config": {"contains": ["hello", "refund"]},
                "output": "v",
            },
        ],
        {"v.passed": True, "v.failures": {"length": 0}},
    )
    assert v.outcome is Outcome.FAILED
    # the block's reasons are the failure's cause: its headline (and JUnit's message) says them
    assert [f.cause for f in v.failures] == ["Missing expected content: refund", None]
    assert v.failures[0].headline().endswith(", because Missing expected content: refund")


# --- block errors are data ----------------------------------------------------


def test_block_error_is_data_and_observable():
    v = run_one(
        [mock({"raw": "{bad"}, "r"), {"block": "JsonParser", "input": "${r.raw}", "output": "p"}],
        {"p.error": {"contains": "JSON parse error"}, "p.raw": "{bad"},
    )
    assert v.outcome is Outcome.PASSED, v.failures


def test_unobserved_block_error_fails_the_test():
    v = run_one(
        [mock({"raw": "{bad"}, "r"), {"block": "JsonParser", "input": "${r.raw}", "output": "p"}],
        {"r.raw": "{bad"},
    )
    assert v.outcome is Outcome.FAILED
    assert "no assertion checks its output" in v.failures[0].message


def test_null_means_no_error():
    v = run_one(
        [mock({"raw": "[1]"}, "r"), {"block": "JsonParser", "input": "${r.raw}", "output": "p"}],
        {"p.error": None, "p.parsed": [1]},
    )
    assert v.outcome is Outcome.PASSED, v.failures


# --- assertions ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected", "ok"),
    [
        (200, "200", False),
        (1, 1.0, True),
        (True, 1, False),
        ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}, True),
        ({"a": 1}, {"a": 1, "b": None}, False),
    ],
)
def test_strict_deep_equality(value, expected, ok):
    assert (outcome([mock({"v": value})], {"d.v": expected}) is Outcome.PASSED) is ok


@pytest.mark.parametrize(
    ("op", "value", "operand", "ok"),
    [
        ("gt", 5, 4, True),
        ("gt", 4, 4, False),
        ("gte", 4, 4, True),
        ("lt", 3, 4, True),
        ("lte", 5, 4, False),
        ("gt", "5", 4, False),
        ("contains", "Hello", "ell", True),
        ("contains", "Hello", "ELL", False),
        ("contains", ["a", "b"], "b", True),
        ("contains", [{"name": "get_weather"}], "get_weather", True),
        ("contains", [{"toolName": "x"}], "x", True),
        ("contains", [1, 2], 3, False),
        ("notContains", "Hello", "xyz", True),
        ("notContains", ["a"], "a", False),
        ("minLength", "abc", 3, True),
        ("minLength", [1], 2, False),
        ("maxLength", "abcd", 3, False),
        ("matches", "abc123", "^[a-z]+\\d+$", True),
        ("notMatches", "temp-1", "^temp-", False),
        ("isNull", None, True, True),
        ("isNull", 0, True, False),
        ("isNotNull", 0, True, True),
        ("isTrue", True, True, True),
        ("isTrue", 1, True, False),
        ("isFalse", False, True, True),
        ("isEmpty", "", True, True),
        ("isEmpty", [], True, True),
        ("isEmpty", {}, True, True),
        ("isEmpty", [0], True, False),
        ("isNotEmpty", "x", True, True),
        ("equals", 200, 200, True),
        ("notEquals", 404, 200, True),
    ],
)
def test_operators(op, value, operand, ok):
    assert (outcome([mock({"v": value})], {"d.v": {op: operand}}) is Outcome.PASSED) is ok


def test_defined_and_undefined():
    assert (
        outcome([mock({"v": 1})], {"d.v": {"isDefined": True}, "d.w": {"isUndefined": True}})
        is Outcome.PASSED
    )
    assert outcome([mock({"v": 1})], {"d.w": {"isDefined": True}}) is Outcome.FAILED


def test_several_operators_must_all_hold():
    assert outcome([mock({"s": 404})], {"d.s": {"gte": 400, "lt": 500}}) is Outcome.PASSED
    assert outcome([mock({"s": 503})], {"d.s": {"gte": 400, "lt": 500}}) is Outcome.FAILED


def test_numeric_operator_on_non_number_says_so():
    v = run_one([mock({"v": "5"})], {"d.v": {"gt": 1}})
    assert "Expected a number" in v.failures[0].message


# --- Loop -------------------------------------------------------------------


def test_loop_runs_section_at_most_max_iterations_and_counts():
    v = run_one(
        [mock({"x": 1}, "m", id="work"), {"block": "Loop", "config": {"target": "work", "maxIterations": 3}}],
        {"_loopCount:work": 2},
    )
    assert v.outcome is Outcome.PASSED, v.failures
    assert [t.step.id for t in v.trace].count("work") == 3


def test_loop_condition_stops_when_false_and_index_target():
    v = run_one(
        [
            mock({"ready": False}, "m"),
            {
                "block": "Loop",
                "config": {"target": 0, "condition": {"path": "m.ready", "operator": "isTrue"}},
            },
        ],
        {"m.ready": False},
    )
    assert v.outcome is Outcome.PASSED
    assert len(v.trace) == 2


def test_loop_delay_ms(monkeypatch):
    import time

    start = time.perf_counter()
    run_one(
        [
            mock({"a": 1}, id="w"),
            {"block": "Loop", "config": {"target": "w", "maxIterations": 3, "delayMs": 50}},
        ],
        {},
    )
    assert time.perf_counter() - start >= 0.1


# --- MockData -----------------------------------------------------------------


def test_mockdata_config_resolved_like_input():
    v = run_one(
        [mock({"id": "${USER_ID}", "n": "u-${USER_ID}"})],
        {"d.id": 42, "d.n": "u-42"},
        context={"USER_ID": 42},
    )
    assert v.outcome is Outcome.PASSED, v.failures


# --- LLMJudge without a judge ------------------------------------------------------


def test_llm_judge_without_client_is_skipped_not_passed():
    judge = {
        "block": "LLMJudge",
        "input": {"text": "hi", "expected": {"expectedBehavior": "greets"}},
        "output": "j",
    }
    v = run_one([mock({"a": 1}), judge], {"j.score": {"gt": 0.7}, "d.a": 1})
    assert v.outcome is Outcome.SKIPPED
    assert "LLM judge not configured" in v.skip_reason


def test_llm_judge_without_client_still_fails_deterministic_checks():
    judge = {
        "block": "LLMJudge",
        "input": {"text": "hi", "expected": {"expectedBehavior": "greets"}},
        "output": "j",
    }
    assert outcome([mock({"a": 1}), judge], {"j.score": {"gt": 0.7}, "d.a": 2}) is Outcome.FAILED


def test_paths_read_inside_json_text_bodies():
    """The notes read a setup login's token as ${authToken.body.token}: body is JSON text."""
    v = run_one(
        [mock({"body": '{"token": "abc", "items": [1, 2]}'}, "auth"), mock({"t": "${auth.body.token}"}, "e")],
        {"e.t": "abc", "auth.body.items[1]": 2, "auth.body": {"contains": "token"}},
    )
    assert v.outcome is Outcome.PASSED, v.failures
