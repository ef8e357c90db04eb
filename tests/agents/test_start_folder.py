"""Every format can start its agent: a SemanticTest suite's ``agent`` section (or the ``agent-*``
options), one rule for the folder a start command runs in, a failed start naming command and folder,
and an ``agent-*`` option that no test uses is a warning naming it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import run_pytest
from tests.ports import free_port

# A tiny agent: /health, and /cwd answering the folder it runs in (what a start command's folder is).
AGENT = """
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"cwd": os.getcwd()} if self.path == "/cwd" else {"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def suite(agent: dict | None, expect_cwd: Path | None = None) -> str:
    checks: dict = {"r.status": 200}
    if expect_cwd is not None:
        checks["cwd.parsed.cwd"] = str(expect_cwd)
    pipeline = [
        {"block": "HttpRequest", "input": {"url": "${agent.endpoint}/cwd"}, "output": "r"},
        {"block": "JsonParser", "input": "${r.body}", "output": "cwd"},
    ]
    spec: dict = {"tests": [{"id": "reaches", "pipeline": pipeline, "assertions": checks}]}
    if agent is not None:
        spec["agent"] = agent
    return json.dumps(spec, indent=2)


def section(port: int, start: str = "agent.py") -> dict:
    return {
        "start": f"{sys.executable} {start} {port}",
        "endpoint": f"http://127.0.0.1:{port}",
        "health": f"http://127.0.0.1:{port}/health",
    }


@pytest.fixture
def specs(pytester: pytest.Pytester) -> Path:
    pytester.makeini("[pytest]\n")
    folder = pytester.path / "specs"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT)
    return folder


def test_a_suites_agent_starts_in_the_suites_folder_from_anywhere(
    pytester: pytest.Pytester, specs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    (specs / "users.json").write_text(suite(section(port), specs))
    run_pytest(pytester, "-p", "no:cacheprovider", "specs").assert_outcomes(passed=1)
    monkeypatch.chdir(specs)
    run_pytest(pytester, "-p", "no:cacheprovider", "users.json").assert_outcomes(passed=1)


def test_a_failed_start_names_the_command_and_the_folder(pytester: pytest.Pytester, specs: Path) -> None:
    port = free_port()
    (specs / "users.json").write_text(suite(section(port, start="missing_agent.py")))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "specs")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "agent exited with code 2 before it was ready" in out
    assert f"  start: {sys.executable} missing_agent.py {port}" in out
    assert f"  in folder: {specs}" in out
    assert "missing_agent.py': [Errno 2] No such file or directory" in out  # the log's tail
    assert result.ret == 2


def test_an_unset_variable_in_the_agent_section_is_the_files_error(
    pytester: pytest.Pytester, specs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SUCH_PORT_N42", raising=False)
    (specs / "users.json").write_text(suite({"endpoint": "http://127.0.0.1:${env.NO_SUCH_PORT_N42}"}))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "specs")
    assert result.ret != 0
    assert "agent.endpoint" in result.stdout.str()
    assert "environment variable NO_SUCH_PORT_N42 is not set" in result.stdout.str()


def test_options_start_a_suites_agent_where_pytest_was_invoked(
    pytester: pytest.Pytester, specs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    (specs / "plain.json").write_text(suite(None, specs))
    monkeypatch.chdir(specs)
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-W",
        "error::pytest.PytestConfigWarning",
        f"--semantictest-agent-start={sys.executable} agent.py {port}",
        f"--semantictest-agent-endpoint=http://127.0.0.1:{port}",
        "plain.json",
    )
    result.assert_outcomes(passed=1)


def test_ini_agent_start_runs_in_the_ini_files_folder(
    pytester: pytest.Pytester, specs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    (pytester.path / "agent.py").write_text(AGENT)
    pytester.makeini(
        f"[pytest]\nsemantictest_agent_start = {sys.executable} agent.py {port}\n"
        f"semantictest_agent_endpoint = http://127.0.0.1:{port}\n"
    )
    (specs / "plain.json").write_text(suite(None, pytester.path))
    monkeypatch.chdir(specs)
    run_pytest(pytester, "-p", "no:cacheprovider", "plain.json").assert_outcomes(passed=1)


def test_an_agent_in_attach_mode_that_does_not_answer_is_an_error_not_failures(
    pytester: pytest.Pytester, specs: Path
) -> None:
    (specs / "plain.json").write_text(suite(None))
    result = run_pytest(
        pytester, "-p", "no:cacheprovider", f"--semantictest-agent-endpoint=http://127.0.0.1:{free_port()}"
    )
    result.assert_outcomes(errors=1)
    assert "in attach mode (no start command) the agent must already be running" in result.stdout.str()


MOCK = json.dumps(
    {
        "tests": [
            {
                "id": "t",
                "pipeline": [{"block": "MockData", "config": {"data": {"ok": True}}, "output": "m"}],
                "assertions": {"m.ok": True},
            }
        ]
    }
)


def test_options_no_test_uses_are_warnings_naming_them(pytester: pytest.Pytester) -> None:
    hb = pytester.path / "chat.highbar.yaml"
    hb.write_text("agent:\n  endpoint: http://127.0.0.1:9/chat\nsuites: []\n")
    pytester.makefile(".json", mock=MOCK)
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--collect-only",
        "chat.highbar.yaml",
        "--semantictest-agent-start=python agent.py",
        "--semantictest-agent-protocol=highbar",
    )
    out = result.stdout.str()
    assert "--semantictest-agent-start has no effect: without --semantictest-agent-endpoint" in out
    assert "--semantictest-agent-protocol has no effect" in out
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--collect-only",
        "chat.highbar.yaml",
        "--semantictest-agent-endpoint=http://127.0.0.1:9",
    )
    assert (
        "--semantictest-agent-endpoint has no effect: no test of this run takes its agent"
        in result.stdout.str()
    )


def test_the_agent_fixture_and_a_suite_use_the_options_no_warning(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine="def test_uses(agent):\n    pass\n")
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--collect-only",
        "--semantictest-agent-endpoint=http://127.0.0.1:9",
    )
    assert "has no effect" not in result.stdout.str()
    pytester.makefile(".json", mock=MOCK)
    (pytester.path / "test_mine.py").unlink()
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--collect-only",
        "--semantictest-agent-endpoint=http://127.0.0.1:9",
    )
    assert "has no effect" not in result.stdout.str()


def test_an_agent_section_url_that_is_not_http_is_the_files_error(
    pytester: pytest.Pytester, specs: Path
) -> None:
    (specs / "users.json").write_text(suite({"endpoint": "127.0.0.1:8000"}))
    result = run_pytest(pytester, "-p", "no:cacheprovider", "specs")
    assert result.ret == 2
    assert (
        "agent.endpoint" in result.stdout.str()
        and "must be an http:// or https:// URL" in result.stdout.str()
    )
