"""A SemanticTest step that failed (a transport failure of ``HttpRequest``: connection refused, timeout)
is named in the failure's headline, next to each assertion on its output it broke: the headline is
what the short summary and JUnit's ``message`` show, and ``Expected 0 to equal 200`` alone hides why."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.ports import free_port
from tests.servers.slow_server import slow_server

pytest_plugins = ["pytester"]


def suite(url: str, timeout: int | None = None) -> str:
    request: dict[str, object] = {"url": url, "method": "GET"}
    if timeout is not None:
        request["timeout"] = timeout
    return json.dumps(
        {
            "name": "transport",
            "tests": [
                {
                    "id": "reach",
                    "pipeline": [
                        {"block": "HttpRequest", "input": request, "output": "response"},
                    ],
                    "assertions": {"response.status": 200},
                }
            ],
        }
    )


def closed_port() -> int:
    """A port nothing listens on (nor will: no server here takes one of :func:`free_port`'s)."""
    return free_port()


def headline_of(pytester: pytest.Pytester, spec: str) -> tuple[str, str]:
    pytester.makefile(".json", transport=spec)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    lines = result.stdout.str().splitlines()
    headline = lines[lines.index("reach (transport.json:1)") + 1]
    failure = ET.parse(pytester.path / "junit.xml").getroot().find(".//failure")
    assert failure is not None
    return headline, failure.get("message") or ""


def test_a_refused_connection_is_named_next_to_the_status_it_broke(pytester: pytest.Pytester) -> None:
    url = f"http://127.0.0.1:{closed_port()}/health"
    headline, message = headline_of(pytester, suite(url))
    assert headline.startswith(
        "response.status (line 1): Expected 0 to equal 200, because the HttpRequest step "
        "(line 1) that writes 'response' failed: Request failed: ConnectError"
    )
    assert message == headline


def test_a_timeout_is_named_next_to_the_status_it_broke(pytester: pytest.Pytester) -> None:
    with slow_server() as base:
        headline, message = headline_of(pytester, suite(f"{base}/drip?bytes=40&every=0.5", timeout=300))
    assert headline.startswith(
        "response.status (line 1): Expected 0 to equal 200, because the HttpRequest step "
        "(line 1) that writes 'response' failed: "
    )
    assert "300" in headline.split("failed: ", 1)[1] and "tim" in headline.split("failed: ", 1)[1]
    assert message == headline


def test_an_assertion_on_a_step_that_succeeded_names_no_cause(pytester: pytest.Pytester) -> None:
    with slow_server() as base:
        spec = suite(f"{base}/fast").replace('"response.status": 200', '"response.status": 201')
        headline, _ = headline_of(pytester, spec)
    assert headline == "response.status (line 1): Expected 200 to equal 201"
