"""Secrets are kept out, not scrubbed out: a step's input is recorded with the placeholder the spec
wrote (``${env.MY_API_KEY}``, also through a context value), while the agent receives the value."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.helpers import loopback_server, run_pytest

pytest_plugins = ["pytester"]

SECRET = "sk-live-Pl4ceh0lder-9f2c7e"
RECEIVED: list[dict[str, Any]] = []


class _Recorder(BaseHTTPRequestHandler):
    """Answers 500 (the test fails and its trace is printed), recording what it was sent."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        RECEIVED.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": json.loads(body)}
        )
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_trace_holds_the_placeholder_and_the_agent_the_value(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_KEY", SECRET)
    RECEIVED.clear()
    with loopback_server(_Recorder) as url:
        (pytester.path / "s.json").write_text(
            json.dumps(
                {
                    "name": "s",
                    "context": {"KEY": "${env.MY_API_KEY}"},
                    "tests": [
                        {
                            "id": "t",
                            "pipeline": [
                                {
                                    "block": "HttpRequest",
                                    "output": "r",
                                    "input": {
                                        "url": url + "/chat?key=${KEY}",
                                        "method": "POST",
                                        "headers": {"Authorization": "Bearer ${env.MY_API_KEY}"},
                                        "body": {"token": "${KEY}"},
                                    },
                                }
                            ],
                            "assertions": {"r.status": 200},
                        }
                    ],
                }
            )
        )
        result = run_pytest(
            pytester, "-p", "no:cacheprovider", "-vv", "--semantictest-results=r.jsonl", own_process=True
        )
    assert [
        {"path": f"/chat?key={SECRET}", "auth": f"Bearer {SECRET}", "body": {"token": SECRET}}
    ] == RECEIVED
    out = result.stdout.str()
    assert SECRET not in out
    assert '"Authorization": "Bearer ${env.MY_API_KEY}"' in out, out[-3000:]
    assert '"token": "${env.MY_API_KEY}"' in out and "/chat?key=${env.MY_API_KEY}" in out
    assert SECRET not in (pytester.path / "r.jsonl").read_text()
