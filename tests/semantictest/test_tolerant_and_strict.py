"""SemanticTest files as their authors publish them: what real files use is accepted (suite-level
``input``, tests without ``id``, repeated keys, ``isUndefined`` on any path), and what is a mistake is
caught (a typo in a built-in block's ``input``, an operator name from another tool)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.api import run_suite
from pytest_semantictest.formats.semantictest.loader import SuiteWarning, load_file
from pytest_semantictest.model import Outcome
from tests.helpers import mock, run_one, suite
from tests.helpers import test_case as make_test

pytest_plugins = ["pytester"]


def load(tmp_path: Path, text: str) -> tuple[Any, list[warnings.WarningMessage]]:
    path = tmp_path / "s.json"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_file(path)
    return loaded, [w for w in caught if issubclass(w.category, SuiteWarning)]


def case_error(data: dict[str, Any], tmp_path: Path) -> str:
    loaded, _ = load(tmp_path, json.dumps(data, indent=1))
    errors = [c.error for c in loaded.cases if c.error]
    assert len(errors) == 1, errors
    return errors[0]


# ---- accepted: what real files use ------------------------------------------------------------


def test_suite_level_input_is_readable_as_input_in_tests_and_setup() -> None:
    """The reference runner's meaning: ``input`` is the starting data of setup, each test and teardown."""
    result = run_suite(
        suite(
            make_test(
                [mock({"user": "${input.userId}", "seen": "${seen.id}"}, "d")],
                {"d.user": 1, "d.seen": "u-1"},
                id="uses-input",
            ),
            input={"userId": 1, "name": "u"},
            setup=[mock({"id": "u-${input.userId}"}, "seen")],
        )
    )
    assert result["uses-input"].outcome is Outcome.PASSED, result["uses-input"].failures


def test_tests_without_id_get_their_position_and_a_warning(tmp_path: Path) -> None:
    text = '{"tests": [\n {"id": "named", "pipeline": [%s]},\n {"pipeline": [%s]}\n]}\n' % (
        json.dumps(mock(1)),
        json.dumps(mock(2)),
    )
    loaded, caught = load(tmp_path, text)
    assert [c.id for c in loaded.cases] == ["named", "test-1"]
    assert [(w.lineno, str(w.message)) for w in caught] == [
        (
            3,
            "tests[1] has no 'id': it runs as 'test-1' (its position); give it an id so its name does not "
            "change when tests are added before it",
        )
    ]
    assert Path(caught[0].filename).name == "s.json"


def test_a_repeated_key_keeps_the_last_value_with_a_warning_naming_both_lines(tmp_path: Path) -> None:
    """As in the reference repository's conditions-example.json: one assertion path written twice."""
    text = "\n".join(
        [
            '{"tests": [{"id": "a", "pipeline": [%s],' % json.dumps(mock({"status": "active"})),
            ' "assertions": {',
            '   "d.status": "active",',
            '   "d.status": {"contains": "act"}',
            " }}]}",
        ]
    )
    loaded, caught = load(tmp_path, text)
    [check] = loaded.cases[0].checks
    assert (check.operator, check.expected, check.line) == ("contains", "act", 4)
    assert [(w.lineno, str(w.message)) for w in caught] == [
        (
            4,
            "tests[0].assertions.d.status: key 'd.status' is on line 3 and again on line 4; the value "
            "on line 4 is used, as JSON parsers do: remove one of them",
        )
    ]


@pytest.mark.parametrize(
    ("assertion", "outcome"),
    [
        ({"nothing": {"isUndefined": True}}, Outcome.PASSED),
        ({"nothing.deep[0]": {"isUndefined": True}}, Outcome.PASSED),
        ({"nothing": {"isDefined": True}}, Outcome.FAILED),
        ({"nothing": {"isDefined": False}}, Outcome.PASSED),
        ({"d.gone": {"isUndefined": True}}, Outcome.PASSED),
        ({"d.a": {"isUndefined": True}}, Outcome.FAILED),
    ],
)
def test_is_undefined_and_is_defined_name_any_path(assertion: dict[str, Any], outcome: Outcome) -> None:
    verdict = run_one([mock({"a": 1})], assertion)
    assert verdict.outcome is outcome, (verdict.error, verdict.failures)


def test_other_assertions_on_a_slot_no_step_writes_are_that_tests_error(tmp_path: Path) -> None:
    error = case_error(suite(make_test([mock(1)], {"respnse.status": 200})), tmp_path)
    assert "tests[0].assertions.respnse.status: 'respnse' is not written by any step" in error
    assert 'use {"isUndefined": true}' in error


# ---- caught: mistakes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "place", "said"),
    [
        (
            {"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9/", "mehtod": "POST"}},
            "pipeline[0].input.mehtod",
            "unknown input key 'mehtod' — did you mean 'method'?",
        ),
        (
            {"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9/", "bdoy": {"a": 1}}},
            "pipeline[0].input.bdoy",
            "unknown input key 'bdoy' — did you mean 'body'?",
        ),
        (
            {"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9/", "timout": 50}},
            "pipeline[0].input.timout",
            "unknown input key 'timout' — did you mean 'timeout'?",
        ),
        (
            {"block": "ValidateContent", "input": {"txt": "hi"}, "config": {"contains": "h"}},
            "pipeline[0].input.txt",
            "unknown input key 'txt' — did you mean 'text'? (ValidateContent takes: body, text)",
        ),
        (
            {"block": "ValidateTools", "input": {"from": "d", "as": "toolcalls"}},
            "pipeline[0].input.as",
            "ValidateTools has no input 'toolcalls' — did you mean 'toolCalls'?",
        ),
        (
            {"block": "StreamParser", "input": {"body": "", "fromat": "sse"}},
            "pipeline[0].input.fromat",
            "unknown input key 'fromat' — did you mean 'format'?",
        ),
    ],
)
def test_a_typo_in_a_built_in_blocks_input_is_an_error(
    tmp_path: Path, step: dict[str, Any], place: str, said: str
) -> None:
    error = case_error(suite(make_test([step], {})), tmp_path)
    assert f"tests[0].{place}: {said}" in error, error


def test_a_typo_in_input_is_never_sent(pytester: pytest.Pytester) -> None:
    """Through pytest: the test with 'mehtod' ERRORs before anything is sent; its neighbour runs."""
    pytester.makefile(
        ".json",
        s=json.dumps(
            suite(
                make_test(
                    [{"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9/", "mehtod": "POST"}}],
                    {"HttpRequest.status": 200},
                    id="typo",
                ),
                make_test([mock(1)], {"d": 1}, id="fine"),
            ),
            indent=1,
        ),
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    assert "s.json:11: tests[0].pipeline[0].input.mehtod: unknown input key 'mehtod'" in result.stdout.str()
    assert "Connect" not in result.stdout.str(), "nothing was sent"


def test_blocks_without_an_input_declaration_take_any_keys(tmp_path: Path) -> None:
    """Loop passes its input through (and custom blocks declare nothing by default): any key is fine."""
    loaded, _ = load(
        tmp_path,
        json.dumps(
            suite(
                make_test(
                    [
                        mock(1),
                        {
                            "block": "Loop",
                            "input": {"anything": 1},
                            "config": {"target": 0, "maxIterations": 1},
                        },
                    ],
                    {},
                )
            )
        ),
    )
    assert loaded.cases[0].error is None


@pytest.mark.parametrize(
    ("expected", "key", "hint"),
    [
        ({"greaterThan": 0}, "greaterThan", "gt"),
        ({"contain": "h"}, "contain", "contains"),
        ({"lessThanOrEqual": 3}, "lessThanOrEqual", "lte"),
        ({"toEqual": 1}, "toEqual", "equals"),
        ({"exists": True}, "exists", "isDefined"),
        ({"gt": 0, "lessThan": 5}, "lessThan", "lt"),
        ({"GT": 0}, "GT", "gt"),
    ],
)
def test_operator_names_from_other_tools_are_errors_never_equality(
    tmp_path: Path, expected: dict[str, Any], key: str, hint: str
) -> None:
    error = case_error(suite(make_test([mock({"a": 1})], {"d.a": expected})), tmp_path)
    assert f"tests[0].assertions.d.a.{key}: unknown operator '{key}' — did you mean '{hint}'?" in error, error


def test_an_object_that_is_data_is_still_compared_by_equality() -> None:
    verdict = run_one([mock({"user": {"name": "Ann", "max": 3}})], {"d.user": {"name": "Ann", "max": 3}})
    assert verdict.outcome is Outcome.PASSED, (verdict.error, verdict.failures)


# ---- text checks read JSON text ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "passed"),
    [
        ({"contains": '"active": true'}, True),
        ({"notContains": "'active'"}, True),
        ({"matches": '"plan":\\s*"pro"'}, True),
        ({"minLength": 30}, True),
    ],
)
def test_validate_content_reads_a_non_string_as_its_json_text(config: dict[str, Any], passed: bool) -> None:
    verdict = run_one(
        [
            mock({"active": True, "plan": "pro"}),
            {"block": "ValidateContent", "input": "${d}", "config": config, "output": "v"},
        ],
        {"v.passed": passed},
    )
    assert verdict.outcome is Outcome.PASSED, verdict.failures


@pytest.mark.parametrize(
    ("assertion", "outcome"),
    [
        ({"d.status": {"matches": "^2\\d\\d$"}}, Outcome.PASSED),
        ({"d.status": {"contains": "20"}}, Outcome.PASSED),
        ({"d.user": {"matches": '"active": true'}}, Outcome.PASSED),
        ({"d.user": {"notMatches": "True"}}, Outcome.PASSED),
        ({"d.none": {"matches": "null"}}, Outcome.FAILED),
    ],
)
def test_text_operators_read_non_strings_as_json_text(assertion: dict[str, Any], outcome: Outcome) -> None:
    verdict = run_one([mock({"status": 200, "user": {"active": True}, "none": None})], assertion)
    assert verdict.outcome is outcome, verdict.failures


# ---- one test's problem is that test's --------------------------------------------------------


def test_an_undefined_reference_errors_only_its_test(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".json",
        s=json.dumps(
            suite(
                make_test([mock("${SHOP_API}/chat")], {"d": "x"}, id="needs-shop"),
                make_test([mock(1)], {"d": 1}, id="fine"),
                make_test([mock(2)], {"d": 2}, id="also-fine"),
            ),
            indent=1,
        ),
    )
    collected = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    collected.stdout.fnmatch_lines(["s.json::needs-shop", "s.json::fine", "s.json::also-fine"])
    assert collected.ret == pytest.ExitCode.OK
    result = pytester.runpytest("-p", "no:cacheprovider", "-rE")
    result.assert_outcomes(passed=2, errors=1)
    assert (
        "s.json:10: tests[0].pipeline[0].config.data: references 'SHOP_API', which no step, setup or context "
        "provides"
    ) in result.stdout.str()


def test_a_file_problem_is_still_a_collection_error(tmp_path: Path) -> None:
    from pytest_semantictest.errors import SpecError

    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(suite(make_test([{"block": "HttpRequst"}], {}), make_test([mock(1)], {}, id="b")))
    )
    with pytest.raises(SpecError, match="unknown block 'HttpRequst' — did you mean 'HttpRequest'"):
        load_file(path)
