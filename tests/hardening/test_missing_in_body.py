"""A reference that names nothing inside a request body is named, as a missing reference is
everywhere else; never ``TypeError: Object of type _Missing is not JSON serializable``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_semantictest.model import Outcome
from tests.helpers import mock, run_one
from tests.servers.slow_server import slow_server


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with slow_server() as url:
        yield url


@pytest.mark.parametrize(
    ("body", "ref"),
    [
        ({"q": "${d.nope}"}, "${d.nope}"),
        ({"l": ["${d.a}", "${d.zz}"]}, "${d.zz}"),
        ({"deep": {"x": {"y": "${d.a.b}"}}}, "${d.a.b}"),
        (["${env.NOPE_UNSET_1}"], "${env.NOPE_UNSET_1}"),
    ],
)
def test_missing_reference_in_a_body_is_named(base: str, body: object, ref: str) -> None:
    verdict = run_one(
        [
            mock({"a": 1}),
            {
                "block": "HttpRequest",
                "output": "r",
                "input": {"url": base + "/fast", "method": "POST", "body": body},
            },
        ],
        {"r.status": 200},
    )
    error = verdict.trace[1].error or ""
    # an unset variable is the run's set-up, not the agent: the test's ERROR; a slot that is missing
    # is what the agent did, a failure
    assert verdict.outcome is (Outcome.ERROR if "${env." in ref else Outcome.FAILED)
    assert error.startswith(f"cannot resolve input: {ref} names"), error
    assert "_Missing" not in error and "TypeError" not in error


def test_present_references_still_send(base: str) -> None:
    verdict = run_one(
        [
            mock({"a": 1}),
            {
                "block": "HttpRequest",
                "output": "r",
                "input": {
                    "url": base + "/fast",
                    "method": "POST",
                    "body": {"q": "${d.a}"},
                    "headers": "${d.nothing}",
                },
            },
        ],
        {"r.status": 200},
    )
    assert verdict.outcome is Outcome.PASSED, (verdict.failures, verdict.trace[1].error)
