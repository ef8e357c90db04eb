"""``HttpRequest`` without ``method``: GET without a body, POST with one (a body is never sent with
GET), and a warning at the step's line naming the assumption (docs/migrating.md)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pytest_semantictest.api import run_suite
from pytest_semantictest.formats.semantictest.loader import SuiteWarning, load_file
from pytest_semantictest.model import Outcome
from tests.helpers import loopback_server


class _PostOnly(BaseHTTPRequestHandler):
    """A POST endpoint that answers what it was sent; GET is 405, as a real one answers."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's names)
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self._answer(200, {"method": "POST", "got": json.loads(body or b"null")})

    def do_GET(self) -> None:  # noqa: N802
        self._answer(405 if self.path.startswith("/post") else 200, {"method": "GET"})

    def _answer(self, status: int, data: object) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    with loopback_server(_PostOnly) as url:
        yield url


def _suite(url: str) -> dict[str, object]:
    return {
        "name": "m",
        "tests": [
            {
                "id": "with-body",
                "pipeline": [
                    {"block": "HttpRequest", "input": {"url": f"{url}/post", "body": {"a": 1}}, "output": "r"}
                ],
                "assertions": {"r.status": 200},
            },
            {
                "id": "without-body",
                "pipeline": [{"block": "HttpRequest", "input": {"url": f"{url}/get"}, "output": "r"}],
                "assertions": {"r.status": 200},
            },
            {
                "id": "said-get",
                "pipeline": [
                    {"block": "HttpRequest", "input": {"url": f"{url}/post", "method": "GET"}, "output": "r"}
                ],
                "assertions": {"r.status": 405},
            },
        ],
    }


def test_a_body_without_method_is_posted_and_a_bare_request_is_a_get(endpoint: str) -> None:
    with pytest.warns(SuiteWarning, match="sent as POST"):
        result = run_suite(_suite(endpoint))
    for test_id in ("with-body", "without-body", "said-get"):
        assert result[test_id].outcome is Outcome.PASSED, (test_id, result[test_id].failures)


def test_the_assumed_method_is_a_warning_at_the_steps_line(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_suite("http://127.0.0.1:9"), indent=1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_file(path)
    found = [(w.lineno, str(w.message)) for w in caught if issubclass(w.category, SuiteWarning)]
    assert found == [
        (
            7,
            "tests[0].pipeline[0].method: no 'method' and a 'body': sent as POST (a body is never "
            'sent with GET); write "method" to say which (the SemanticTest runner requires it)',
        )
    ]
