"""A file's setup and teardown are shared by its tests: their replies are mutated with the effect a
real one has. A setup step that fails errors every test of the file, so such a mutant is killed in
each; a teardown step that fails errors the run, so such a mutant is killed too; a mutated reply
that nothing reads survives, and says where it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from tests.helpers import loopback_server, run_pytest

pytest_plugins = ["pytester"]


class _Api(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"token": "t1"} if self.path == "/login" else {"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    with loopback_server(_Api) as url:
        yield url


def test_setup_and_teardown_replies_are_mutated_with_their_real_effect(
    pytester: pytest.Pytester, api: str
) -> None:
    def request(url: str, method: str, output: str) -> dict[str, object]:
        return {"block": "HttpRequest", "input": {"url": url, "method": method}, "output": output}

    suite = {
        "name": "shared",
        "setup": [request(f"{api}/login", "POST", "auth")],
        "teardown": [request(f"{api}/logout", "DELETE", "bye")],
        "tests": [
            {
                "id": f"t{i}",
                "pipeline": [request(f"{api}/item/{i}", "GET", "r")],
                "assertions": {"r.status": 200, "r.body.ok": True},
            }
            for i in range(2)
        ],
    }
    pytester.makefile(".json", shared=json.dumps(suite))
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--semantictest-mutate",
        "--semantictest-results=r.jsonl",
    )
    result.assert_outcomes(passed=2)
    records = {
        r["name"]: r["mutation"]
        for r in map(json.loads, (pytester.path / "r.jsonl").read_text().splitlines())
    }
    for name in ("t0", "t1"):  # the login times out: the setup fails, every test errors
        assert records[name]["coverage"]["file setup (every test of the file errors)"] == ["slow_reply"], (
            records
        )
        (survivor,) = [m for m in records[name]["survived"] if "setup" in m["where"]]
        assert survivor["kind"] == "error_status"  # nothing reads the login's status
    last = records["t1"]
    assert last["coverage"]["file teardown (the run errors)"] == ["slow_reply"], last
    assert last["teardown_mutants"] == 2 and "teardown_mutants" not in records["t0"]
    (survivor,) = [m for m in last["survived"] if "teardown" in m["where"]]
    assert survivor["kind"] == "error_status" and "DELETE /logout" in survivor["where"]
    out = result.stdout.str()
    assert "file teardown (the run errors) catches: slow_reply" in out
