"""docs/getting-started.md's failure example is what its suite prints (run against a loopback API
answering ``{"id": 1, "name": ""}``)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.reports.scenario import PYTEST_ARGS

DOC = Path(__file__).resolve().parents[2] / "docs" / "getting-started.md"


@pytest.fixture
def users_api() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"id": 1, "name": ""}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _stable(line: str) -> str:
    """A line without what changes between runs (timings, ports, dates)."""
    line = re.sub(r"\d+\.\d ms$", "_ ms", line)
    line = re.sub(r'"duration": [\d.]+', '"duration": _', line)
    line = re.sub(r"output\.duration: [\d.]+", "output.duration: _", line)
    return re.sub(r"http://127\.0\.0\.1:\d+", "URL", line)


def _shows(documented: str, printed: str) -> bool:
    """Whether a printed line is the documented one; a documented line cut with '...' (as pytest cuts
    the short summary to the terminal width, except on CI) matches any line it begins."""
    if documented.endswith("...") and printed.startswith(documented[:-3]):
        return True
    return documented == printed


def test_the_documented_failure_is_what_the_suite_prints(
    pytester: pytest.Pytester, users_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = DOC.read_text(encoding="utf-8")
    suite = re.search(r"Save as `specs/users.json`.*?```json\n(.*?)```", doc, re.S)
    shown = re.search(r"## Reading a failure\n.*?```\n(.*?)```", doc, re.S)
    assert suite and shown
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "users.json").write_text(suite.group(1), encoding="utf-8")
    monkeypatch.setenv("API_URL", users_api)
    result = pytester.runpytest_inprocess(*PYTEST_ARGS, "specs/")
    result.assert_outcomes(failed=1)
    printed = [_stable(line) for line in result.stdout.lines]
    documented = [_stable(line) for line in shown.group(1).splitlines() if line.strip() != "..."]
    missing = [line for line in documented if not any(_shows(line, p) for p in printed)]
    assert not missing, "\n".join(missing) + "\n--- printed:\n" + "\n".join(printed)
