"""A ``{placeholder}`` with no value is its own case's problem: that case ERRORs, the file's others run."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_semantictest.formats.compliance.compile import Settings, compile_document
from pytest_semantictest.formats.compliance.parse import parse_file
from tests.compliance.conftest import chat_case, compliance_server, doc

pytest_plugins = ["pytester"]

NEEDS_TOKEN = (
    "### 2. Needs a token\n\n**Request:**\nGET `/me`\nAuthorization: Bearer {session_token}\n"
    "X-Other: {other_value}\n\n**Strict:**\n```yaml\nstatus: 200\n```\n\n"
)


def test_the_case_that_needs_a_missing_value_errors_with_the_place(tmp_path: Path) -> None:
    path = tmp_path / "t.md"
    path.write_text(doc(chat_case() + NEEDS_TOKEN + chat_case(title="3. Again")))
    suite = compile_document(parse_file(path), Settings())
    assert [c.error for c in suite.cases][::2] == [None, None]
    error = suite.cases[1].error
    line = path.read_text().split("\n").index("Authorization: Bearer {session_token}") + 1
    assert error is not None and "\n" not in error
    assert error.startswith(
        f"{path}:{line}: case 2: placeholder {{session_token}} has no value: "
        "set the environment variable SESSION_TOKEN or pass "
        "--semantictest-compliance-value session_token=..."
    ), error
    assert "{other_value} has no value" in error  # every missing name, on the same line


def test_a_value_given_fills_it(tmp_path: Path) -> None:
    path = tmp_path / "t.md"
    path.write_text(doc(NEEDS_TOKEN))
    suite = compile_document(parse_file(path), Settings(values={"session_token": "abc", "other_value": "x"}))
    assert suite.cases[0].error is None


def test_the_file_runs_without_the_value(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makefile(".md", t=doc(chat_case() + NEEDS_TOKEN + chat_case(title="3. Again")))
    monkeypatch.setenv("COMPLIANCE_BASE_URL", server.url)
    collected = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--co", "-q")
    assert collected.ret == 0, collected.stdout.str()
    collected.stdout.fnmatch_lines(
        ["t.md::1. Hello", "t.md::2. Needs a token", "t.md::3. Again", "3 tests collected*"]
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*t.md:*: case 2: placeholder {session_token} has no value: set the environment "
            "variable SESSION_TOKEN*"
        ]
    )
    assert "Traceback" not in result.stdout.str()
