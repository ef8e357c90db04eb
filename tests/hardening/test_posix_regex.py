"""A POSIX class (``[[:alpha:]]``) in a regex is the spec's problem, reported at the spec's place in
every format: no FutureWarning located in the plugin's code, no traceback under ``-W error``."""

from __future__ import annotations

import re
import warnings

import pytest

from pytest_semantictest.checks.regex import user_regex

pytest_plugins = ["pytester"]

FILES = {
    "suite.json": '{"tests": [{"id": "a",\n "pipeline": [{"block": "MockData", "config": {"data": "hi"}, "output": "d"}],\n'
    ' "assertions": {"d": {"matches": "[[:alpha:]]+"}}}]}\n',
    "content.json": '{"tests": [{"id": "a",\n "pipeline": [{"block": "MockData", "config": {"data": "hi"}, "output": "d"},\n'
    '  {"block": "ValidateContent", "input": "${d}", "config": {"matches": "^[[:alpha:]]"}}]}]}\n',
    "spec.highbar.yaml": "agent:\n  endpoint: http://127.0.0.1:9/chat\nsuites:\n  - name: S\n    tests:\n"
    "      - name: t\n        trigger: hi\n        expect:\n          response:\n"
    "            matches: '[[:alpha:]]+'\n",
    "cases.jsonl": '{"id": "a", "input": "hi", "assertions": [{"type": "regex", "pattern": "[[:digit:]]"}]}\n',
    "cases.agent.yaml": "endpoint: http://127.0.0.1:9/v1/chat/completions\n",
    "compliance.md": "---\nname: c\nversion: 1.0\ntransport: completions\n---\n\n# C\n\n## Test Cases\n\n"
    "### 1. One\n\n**Request:**\nPOST `/chat/completions`\n\nBody:\n```json\n"
    '{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n```\n\n'
    "**Strict:**\n```yaml\nstatus: 200\nbody:\n  id: '/^[[:alnum:]]+$/'\n```\n",
}


@pytest.mark.parametrize("name", [n for n in FILES if n != "cases.agent.yaml"])
def test_posix_class_is_the_specs_problem(pytester: pytest.Pytester, name: str) -> None:
    pytester.makefile(".cfg", setup="[tool:pytest]\n")  # no ini from the plugin's own checkout
    (pytester.path / name).write_text(FILES[name])
    if name == "cases.jsonl":
        (pytester.path / "cases.agent.yaml").write_text(FILES["cases.agent.yaml"])
    result = pytester.runpytest("-W", "error::FutureWarning", "-p", "no:cacheprovider", "--setup-only", name)
    out = result.stdout.str() + result.stderr.str()
    assert "POSIX class [:" in out, out
    assert "Traceback" not in out and "FutureWarning" not in out, out
    assert "pytest_semantictest/" not in out and "pytest_semantictest\\" not in out, out
    line = next(line for line in out.splitlines() if "POSIX class" in line)
    assert name in line, line


def test_other_sets_compile_quietly() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert user_regex(r"[[\]]+").search("a[b]") is not None
        assert user_regex("a[--b]").search("a-") is not None
    with pytest.raises(re.error, match=r"POSIX class \[:digit:\] is not supported.*\\d or \[0-9\]"):
        user_regex("[a-z[:digit:]]")
    assert user_regex(r"\[:alpha:]").search("[:alpha:]")
