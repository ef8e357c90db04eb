"""A ``${NAME}`` nothing defines is a test's problem, said so that it can be fixed: in ``setup`` it is
every test's ERROR (the file still collects and nothing is sent), an unset environment variable
behind a context value is named as such, and a slot another test writes is said to be that test's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_semantictest.formats.semantictest.loader import load_file
from tests import helpers

pytest_plugins = ["pytester"]

UNSET = "SEMANTICTEST_TEST_SURELY_UNSET_URL"


def _login(url: str) -> dict[str, object]:
    return {
        "block": "HttpRequest",
        "input": {"url": f"{url}/login", "method": "POST", "body": {}},
        "output": "auth",
    }


def test_a_setup_reference_nothing_defines_is_every_tests_error_and_the_file_collects(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "s.json").write_text(
        json.dumps(
            helpers.suite(
                helpers.test_case([helpers.mock(1)], {"d": 1}, id="one"),
                helpers.test_case([helpers.mock(2)], {"d": 2}, id="two"),
                setup=[_login("${API_URL}")],
            ),
            indent=1,
        )
    )
    listed = helpers.run_pytest(pytester, "--collect-only", "-q", "-p", "no:cacheprovider")
    assert listed.ret == 0, listed.stdout.str()
    listed.stdout.fnmatch_lines(
        [
            "s.json::one",
            "s.json::two",
            "*tests that will ERROR*",
            "s.json::one: *setup?0?.input.url: references 'API_URL'*",
        ]
    )
    ran = helpers.run_pytest(pytester, "-p", "no:cacheprovider")
    ran.assert_outcomes(errors=2)
    ran.stdout.fnmatch_lines(
        ["*s.json:*: setup?0?.input.url: references 'API_URL', which no step, setup or context provides"]
    )
    assert "setup step" not in ran.stdout.str()  # the setup never ran: nothing was sent


def test_an_unset_environment_variable_behind_a_context_value_is_named(pytester: pytest.Pytester) -> None:
    assert UNSET not in os.environ
    (pytester.path / "s.json").write_text(
        json.dumps(
            helpers.suite(
                helpers.test_case(
                    [
                        {
                            "block": "HttpRequest",
                            "input": {"url": "${API_URL}/x", "method": "GET"},
                            "output": "r",
                        }
                    ],
                    {"r.status": 200},
                ),
                context={"API_URL": f"${{env.{UNSET}}}"},
            )
        )
    )
    ran = helpers.run_pytest(pytester, "-p", "no:cacheprovider")
    ran.assert_outcomes(errors=1)  # the run's set-up is wrong, not the agent: one line, no cascade
    assert "Expected" not in ran.stdout.str()
    ran.stdout.fnmatch_lines(
        [
            f's.json:*: tests?0?.pipeline?0?: cannot resolve input: ${{API_URL}} is context.API_URL ("${{env.{UNSET}}}"), and the environment variable '
            f"{UNSET} is not set: set it (or a .env file) before running*"
        ]
    )
    assert "${API_URL} names nothing" not in ran.stdout.str()


def test_a_slot_another_test_writes_is_said_to_be_that_tests(tmp_path: Path) -> None:
    """The README's suite: ``get-user`` reads ``createResponse``, which ``create-user`` writes. No
    did-you-mean offers ``getResponse``, which the step itself writes (a step cannot read its output)."""
    get = {
        "block": "HttpRequest",
        "input": {"url": "${BASE}/users/${createResponse.body.id}", "method": "GET"},
        "output": "getResponse",
    }
    typo = {
        "block": "HttpRequest",
        "input": {"url": "${BASE}/users/${getRespons.body.id}", "method": "GET"},
        "output": "again",
    }
    path = tmp_path / "users.json"
    path.write_text(
        json.dumps(
            helpers.suite(
                helpers.test_case(
                    [helpers.mock({"id": 1}, "createResponse")], {"createResponse.id": 1}, id="create-user"
                ),
                helpers.test_case([get], {"getResponse.status": 200}, id="get-user"),
                helpers.test_case([helpers.mock(1, "getResponse"), typo], {"again.status": 200}, id="typo"),
                helpers.test_case([get], {"getResponse.status": 200}, id="own-output"),
                context={"BASE": "http://127.0.0.1:9"},
            ),
            indent=1,
        )
    )
    errors = {case.id: case.error for case in load_file(path).cases}
    assert errors["create-user"] is None
    assert errors["get-user"] is not None and errors["get-user"].endswith(
        "references 'createResponse', which no step, setup or context provides (test 'create-user' writes "
        "'createResponse', but a test reads only its own steps' slots, the file's setup and context: write it in "
        "this test, or in the setup)"
    )
    # an earlier step's
    assert errors["typo"] is not None and errors["typo"].endswith("— did you mean 'getResponse'?")
    assert "did you mean" not in (errors["own-output"] or "")
