"""ValidateTools: every check passing and failing, input shapes, order, score, config errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_semantictest.blocks.base import BlockError
from pytest_semantictest.blocks.validate_tools import (
    ValidateTools,
    deep_equal,
    normalize_tool_calls,
)
from tests.helpers import step_context


def calls(*names: str, **args: dict[str, Any]) -> list[dict[str, Any]]:
    """Normalised calls; ``args`` gives each named tool's arguments."""
    return [{"id": f"call_{i}", "name": n, "args": args.get(n, {})} for i, n in enumerate(names)]


def run(tool_calls: Any, key: str = "toolCalls", **config: Any) -> dict[str, Any]:
    return asyncio.run(ValidateTools(config).process({key: tool_calls}, step_context()))


# ---------------------------------------------------------------- input shapes

OPENAI = [
    {
        "id": "call_123",
        "type": "function",
        "function": {"name": "search_calendar", "arguments": '{"date":"2024-10-08"}'},
    },
    {
        "id": "call_124",
        "type": "function",
        "function": {"name": "create_event", "arguments": {"title": "Sync", "duration": 60}},
    },
]
ANTHROPIC = [
    {"type": "text", "text": "Let me check your calendar."},
    {"type": "tool_use", "id": "toolu_123", "name": "search_calendar", "input": {"date": "2024-10-08"}},
    {
        "type": "tool_use",
        "id": "toolu_124",
        "name": "create_event",
        "input": {"title": "Sync", "duration": 60},
    },
]
VERCEL = [
    {"toolCallId": "123", "toolName": "search_calendar", "args": {"date": "2024-10-08"}},
    {"toolCallId": "124", "toolName": "create_event", "args": {"title": "Sync", "duration": 60}},
]
NORMALISED = [
    {"id": "a", "name": "search_calendar", "args": {"date": "2024-10-08"}},
    {"id": "b", "name": "create_event", "arguments": '{"title": "Sync", "duration": 60.0}'},
]


@pytest.mark.parametrize(
    "shape", [OPENAI, ANTHROPIC, VERCEL, NORMALISED], ids=["openai", "anthropic", "vercel", "normalised"]
)
def test_every_input_shape_normalises_and_validates(shape: list[dict[str, Any]]) -> None:
    normalised = normalize_tool_calls(shape)
    assert [c["name"] for c in normalised] == ["search_calendar", "create_event"]
    assert normalised[0]["args"] == {"date": "2024-10-08"}
    assert normalised[1]["args"] == {"title": "Sync", "duration": 60}
    assert all(set(c) == {"id", "name", "args"} for c in normalised)
    out = run(
        shape,
        expected=["search_calendar", "create_event"],
        order=True,
        validateArgs={"search_calendar": {"date": "2024-10-08"}, "create_event": {"duration": 60}},
    )
    assert out["passed"] is True, out["failures"]
    assert out["score"] == 1.0
    assert out["actualTools"] == ["search_calendar", "create_event"]


def test_normalize_ids_and_odd_shapes() -> None:
    assert normalize_tool_calls(OPENAI)[0]["id"] == "call_123"
    assert normalize_tool_calls(VERCEL)[0]["id"] == "123"
    assert normalize_tool_calls(["search"]) == [{"id": None, "name": "search", "args": {}}]
    assert normalize_tool_calls([{"functionCall": {"name": "g", "args": {"a": 1}}}]) == [
        {"id": None, "name": "g", "args": {"a": 1}}
    ]
    assert normalize_tool_calls([{"name": "f", "arguments": "not json"}])[0]["args"] == {}
    assert normalize_tool_calls([{"name": "f", "arguments": ""}])[0]["args"] == {}
    with_result = normalize_tool_calls([{"id": "1", "name": "f", "args": {}, "result": 5}])
    assert with_result == [{"id": "1", "name": "f", "args": {}, "result": 5}]
    with pytest.raises(ValueError, match=r"toolCalls\[1\]"):
        normalize_tool_calls([{"name": "ok"}, 42])


def test_body_input_and_whole_responses_are_accepted() -> None:
    assert run(VERCEL, key="body", expected="create_event")["passed"] is True
    stream_output = {"text": "hi", "toolCalls": calls("search"), "chunks": [], "metadata": {}}
    assert run(stream_output, expected="search")["passed"] is True
    completion = {"choices": [{"message": {"content": None, "tool_calls": OPENAI}}]}
    assert run(completion, expected="create_event")["passed"] is True
    anthropic_message = {"role": "assistant", "content": ANTHROPIC}
    assert run(anthropic_message, expected="search_calendar")["passed"] is True


@pytest.mark.parametrize("value", [None, "search", 5, {"no": "calls"}])
def test_missing_or_non_list_tool_calls_raise(value: Any) -> None:
    with pytest.raises(
        BlockError,
        match=r"ValidateTools needs input 'toolCalls' \(a list of "
        r"tool calls\); got ",
    ):
        run(value, expected="x")
    with pytest.raises(BlockError, match="got nothing"):
        asyncio.run(ValidateTools({}).process({}, step_context()))


def test_bad_element_raises_block_error() -> None:
    with pytest.raises(BlockError, match=r"toolCalls\[0\] is not a tool call object"):
        run([3.5])


# ---------------------------------------------------------------- checks


def test_no_checks_passes_with_score_one() -> None:
    out = run(calls("a", "b"))
    assert out == {
        "passed": True,
        "failures": [],
        "score": 1.0,
        "checks": [],
        "actualTools": ["a", "b"],
        "expectedTools": [],
    }
    assert run([])["score"] == 1.0


def test_expected_pass_and_fail() -> None:
    ok = run(calls("search_database", "send_email", "log"), expected=["search_database", "send_email"])
    assert ok["passed"] and ok["failures"] == [] and ok["score"] == 1.0
    assert ok["expectedTools"] == ["search_database", "send_email"]
    bad = run(calls("search_database"), expected=["search_database", "send_email"])
    assert bad == {
        "passed": False,
        "failures": ["Missing expected tools: send_email"],
        "score": 0.5,
        "checks": [
            {"check": "expected", "tool": "search_database", "passed": True},
            {"check": "expected", "tool": "send_email", "passed": False},
        ],
        "actualTools": ["search_database"],
        "expectedTools": ["search_database", "send_email"],
    }
    two = run([], expected=["a", "b"])
    assert two["failures"] == ["Missing expected tools: a, b"] and two["score"] == 0.0


def test_expected_as_a_string() -> None:
    assert run(calls("search"), expected="search")["expectedTools"] == ["search"]
    assert run(calls("other"), expected="search")["failures"] == ["Missing expected tools: search"]


def test_forbidden_pass_and_fail() -> None:
    assert run(calls("search"), forbidden=["delete_database", "drop_table"])["passed"] is True
    out = run(calls("search", "drop_table"), forbidden=["delete_database", "drop_table"])
    assert out["failures"] == ["Used forbidden tools: drop_table"]
    assert out["score"] == 0.5
    assert run(calls("x"), forbidden="x")["failures"] == ["Used forbidden tools: x"]


def test_min_tools_pass_and_fail() -> None:
    assert run(calls("a", "b"), minTools=2)["passed"] is True
    out = run(calls("a"), minTools=2)
    assert out["failures"] == ["Too few tools: 1 < 2"]
    assert out["checks"] == [{"check": "minTools", "expected": 2, "actual": 1, "passed": False}]
    assert out["score"] == 0.0


def test_max_tools_pass_and_fail() -> None:
    assert run(calls("a", "b", "c"), maxTools=3)["passed"] is True
    out = run(calls("a", "b", "c", "d", "e"), maxTools=3)
    assert out["failures"] == ["Too many tools: 5 > 3"]
    assert run([], maxTools=0)["passed"] is True
    assert run(calls("a"), maxTools=0)["failures"] == ["Too many tools: 1 > 0"]


def test_order_list_is_a_relative_order() -> None:
    order = ["get_user", "update_profile", "send_notification"]
    assert run(calls("get_user", "update_profile", "send_notification"), order=order)["passed"]
    with_others = calls("auth", "get_user", "log", "update_profile", "log", "send_notification")
    assert run(with_others, order=order)["passed"] is True
    out = run(calls("b", "a"), order=["a", "b"])
    assert out["failures"] == ["Tool order incorrect: expected a -> b, got b, a"]
    assert out["expectedTools"] == ["a", "b"]
    assert out["score"] == 0.0
    missing = run(calls("a"), order=["a", "b"])
    assert missing["failures"] == ["Tool order incorrect: expected a -> b, got a"]
    assert run([], order=["a"])["failures"] == ["Tool order incorrect: expected a, got (no tools)"]


def test_order_true_follows_expected() -> None:
    assert run(calls("a", "x", "b"), expected=["a", "b"], order=True)["passed"] is True
    out = run(calls("b", "a"), expected=["a", "b"], order=True)
    assert out["failures"] == ["Tool order incorrect: expected a -> b, got b, a"]
    assert out["score"] == pytest.approx(2 / 3)
    assert run(calls("b", "a"), expected=["a", "b"], order=False)["passed"] is True


def test_validate_args_pass_and_fail() -> None:
    tools = calls("search", search={"query": "users", "limit": 5})
    assert run(tools, validateArgs={"search": {"query": "users", "limit": 5.0}})["passed"]
    out = run(tools, validateArgs={"search": {"query": "users", "limit": 10}})
    assert out["failures"] == ["Tool 'search' arg 'limit' mismatch: expected 10, got 5"]
    assert out["score"] == 0.5
    assert out["checks"][1] == {
        "check": "args",
        "tool": "search",
        "arg": "limit",
        "expected": 10,
        "actual": 5,
        "passed": False,
    }
    missing_arg = run(tools, validateArgs={"search": {"table": "users"}})
    assert missing_arg["failures"] == [
        "Tool 'search' arg 'table' mismatch: expected \"users\", got (missing)"
    ]


def test_validate_args_tool_not_called() -> None:
    out = run(calls("search"), validateArgs={"x": {"a": 1, "b": 2}})
    assert out["failures"] == ["Tool 'x' not called, cannot validate args"]
    assert out["score"] == 0.0
    assert len(out["checks"]) == 2


def test_validate_args_exact_deep_equality() -> None:
    tools = calls("f", f={"flag": True, "n": 1, "nested": {"ids": [1, 2], "name": "x"}})
    assert run(tools, validateArgs={"f": {"nested": {"ids": [1.0, 2], "name": "x"}}})["passed"]
    assert not run(tools, validateArgs={"f": {"n": True}})["passed"]
    assert not run(tools, validateArgs={"f": {"flag": 1}})["passed"]
    assert not run(tools, validateArgs={"f": {"n": "1"}})["passed"]
    assert not run(tools, validateArgs={"f": {"nested": {"ids": [1, 2]}}})["passed"]
    out = run(tools, validateArgs={"f": {"flag": 1}})
    assert out["failures"] == ["Tool 'f' arg 'flag' mismatch: expected 1, got true"]


def test_validate_args_with_several_calls_of_one_tool() -> None:
    tools = [{"name": "search", "args": {"limit": 5}}, {"name": "search", "args": {"limit": 10}}]
    assert run(tools, validateArgs={"search": {"limit": 10}})["passed"] is True
    out = run(tools, validateArgs={"search": {"limit": 7}})
    assert out["failures"] == ["Tool 'search' arg 'limit' mismatch: expected 7, got 5, 10 (2 calls)"]


def test_combined_score_is_fraction_of_checks() -> None:
    tools = calls("search_users", "delete_user", search_users={"limit": 10})
    out = run(
        tools,
        expected=["search_users", "send_email"],
        forbidden=["delete_user"],
        minTools=2,
        maxTools=3,
        order=["search_users", "send_email"],
        validateArgs={"search_users": {"limit": 10}},
    )
    # checks: 2 expected (1 ok), 1 forbidden (fail), min ok, max ok, order fail, 1 arg ok
    assert out["score"] == pytest.approx(4 / 7)
    assert out["failures"] == [
        "Missing expected tools: send_email",
        "Used forbidden tools: delete_user",
        "Tool order incorrect: expected search_users -> send_email, got search_users, delete_user",
    ]
    assert out["passed"] is False


# ---------------------------------------------------------------- config validation


def test_validate_config_accepts_documented_configs() -> None:
    assert (
        ValidateTools.validate_config(
            {
                "expected": ["a", "b"],
                "forbidden": "c",
                "minTools": 0,
                "maxTools": 3,
                "order": ["a", "b"],
                "validateArgs": {"a": {"x": 1}},
            }
        )
        == []
    )
    assert ValidateTools.validate_config({"expected": ["a"], "order": True}) == []
    assert ValidateTools.validate_config({"minTools": "${MIN}"}) == []


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"minTools": "2"}, "minTools"),
        ({"minTools": True}, "minTools"),
        ({"maxTools": -1}, "maxTools"),
        ({"maxTools": 1.5}, "maxTools"),
        ({"minTools": 3, "maxTools": 1}, "minTools"),
        ({"order": "a"}, "order"),
        ({"order": [1, 2]}, "order"),
        ({"order": True}, "order"),
        ({"expected": 5}, "expected"),
        ({"forbidden": ["a", 1]}, "forbidden"),
        ({"validateArgs": ["a"]}, "validateArgs"),
        ({"validateArgs": {"a": 1}}, "validateArgs"),
    ],
)
def test_validate_config_reports_wrong_types(config: dict[str, Any], key: str) -> None:
    problems = ValidateTools.validate_config(config)
    assert [k for k, _ in problems] == [key]
    assert all(isinstance(m, str) and m for _, m in problems)


def test_bad_config_at_run_time_raises() -> None:
    with pytest.raises(BlockError, match="minTools must be a whole number"):
        run(calls("a"), minTools="2")


# ---------------------------------------------------------------- properties


@given(st.lists(st.sampled_from("abcde"), max_size=8), st.lists(st.sampled_from("abcde"), max_size=4))
def test_score_is_fraction_and_passed_matches_failures(actual: list[str], wanted: list[str]) -> None:
    out = run(calls(*actual), expected=wanted, forbidden=["e"], order=wanted, maxTools=5)
    assert 0.0 <= out["score"] <= 1.0
    assert out["passed"] == (out["failures"] == []) == (out["score"] == 1.0)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda i: st.lists(i, max_size=3) | st.dictionaries(st.text(), i, max_size=3),
    )
)
def test_deep_equal_is_reflexive(value: Any) -> None:
    assert deep_equal(value, value)


def test_the_evidence_holds_each_calls_arguments_also_for_openai_shaped_calls() -> None:
    """The reports' tool-call table reads the evidence: OpenAI's ``function.arguments`` (JSON text)
    arrive as the arguments, not as an empty column."""
    from pytest_semantictest.evidence import ToolCall, ToolCalls
    from pytest_semantictest.model import Step, StepTrace

    calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    block = ValidateTools({"expected": ["get_weather"]})
    output = asyncio.run(block.process({"toolCalls": calls}, step_context()))
    trace = StepTrace(Step("ValidateTools", "tools", None, {}, "tools"), {"toolCalls": calls}, output, 0.1)
    assert ValidateTools.evidence_of(trace) == [ToolCalls([ToolCall("get_weather", {"city": "Paris"})])]
