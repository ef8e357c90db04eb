"""Quiet by default, complete on request: a one-assertion failure shows the check, then each step
briefly (request, status, the body the check read); response headers and whole values need ``-vv``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.helpers import loopback_server
from tests.reports.scenario import PYTEST_ARGS

LONG = "x" * 1500  # (more than a brief value, less than --semantictest-trace-chars)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"id": 1, "code": "42", "notes": LONG}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Marker", "a-response-header")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def api() -> Iterator[str]:
    with loopback_server(_Handler) as url:
        yield url


def _suite(pytester: pytest.Pytester, url: str) -> None:
    test = {
        "id": "code",
        "pipeline": [
            {"block": "HttpRequest", "input": {"url": f"{url}/item", "method": "GET"}, "output": "r"},
            {"block": "JsonParser", "input": "${r.body}", "output": {"parsed": "item"}},
        ],
        "assertions": {"item.code": "0042"},
    }
    (pytester.path / "s.json").write_text(
        json.dumps({"name": "s", "tests": [test]}, indent=2), encoding="utf-8"
    )


def _failure(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if "semantictest: code" in line and line.startswith("_"))
    end = next(
        i for i, line in enumerate(lines) if i > start and line.startswith("-" * 5) and "summary" in line
    )
    return lines[start:end]


def test_a_one_assertion_failure_fits_in_30_lines(pytester: pytest.Pytester, api: str) -> None:
    _suite(pytester, api)
    result = pytester.runpytest_inprocess(*PYTEST_ARGS)
    result.assert_outcomes(failed=1)
    shown = _failure(result.stdout.lines)
    text = "\n".join(shown)
    assert len(shown) <= 30, text
    assert "item.code (line" in text and "Expected '42' to equal '0042'" in text  # the check and its diff
    assert "output.status: 200" in text and "input.url:" in text  # the request and its status
    assert '\\"code\\": \\"42\\"' in text  # the body part the check read
    assert "a-response-header" not in text and LONG not in text  # headers and whole values: -vv
    assert "-vv" in text  # says how to see the rest


def test_vv_shows_headers_and_whole_values(pytester: pytest.Pytester, api: str) -> None:
    _suite(pytester, api)
    result = pytester.runpytest_inprocess(*PYTEST_ARGS, "-vv")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "a-response-header" in text and LONG in text
