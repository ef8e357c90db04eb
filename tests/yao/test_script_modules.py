"""``semantictest validate`` runs every static check a run would: a Yao ``script`` assertion whose
module is nowhere is reported before any agent is called, and a file starting with a byte order mark
is read the same way by collection and by ``validate`` (accepted, in every format)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_semantictest import cli

CASES = [
    {"id": "missing", "input": "hi", "assertions": [{"type": "script", "script": "no_such_module_x:check"}]},
    {"id": "beside", "input": "hi", "assertions": [{"type": "script", "script": "beside:check"}]},
    {"id": "importable", "input": "hi", "assertions": [{"type": "script", "script": "json:loads"}]},
    {
        "id": "turn",
        "turns": [{"input": "hi", "assertions": [{"type": "script", "script": "pkg.gone:check"}]}],
    },
]


def _write(folder: Path) -> Path:
    path = folder / "scripts_test.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    (folder / "scripts_test.agent.yaml").write_text("endpoint: http://127.0.0.1:9/v1/chat/completions\n")
    (folder / "beside.py").write_text("def check(output, input, value, context):\n    return True\n")
    return path


def test_validate_names_a_script_module_that_is_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert cli.validate(["scripts_test.jsonl"], out) == 1  # tests will ERROR
    lines = out.getvalue().splitlines()
    assert lines[0] == "✗ scripts_test.jsonl (4 tests, 2 will ERROR)", lines
    assert lines[1:] == [
        "  scripts_test.jsonl:1: assertions[0]: cannot find module 'no_such_module_x' for script "
        "'no_such_module_x:check' (nor no_such_module_x.py next to this file)",
        "  scripts_test.jsonl:4: turns[0].assertions[0]: cannot find module 'pkg.gone' for script "
        "'pkg.gone:check' (nor pkg/gone.py under this file's folder)",
    ]


def test_the_run_errors_on_it_before_the_agent_is_called(pytester: pytest.Pytester) -> None:
    _write(pytester.path)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "missing")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["scripts_test.jsonl:1: assertions?0?: cannot find module 'no_such_module_x'*"]
    )
    assert "ConnectError" not in result.stdout.str() and "127.0.0.1:9" not in result.stdout.str()


BOM = "\ufeff"
FILES = {
    "bom.json": '{"name": "s", "tests": [{"id": "t", "pipeline": [{"block": "MockData", "config": {"data": {}}, '
    '"output": "d"}], "assertions": {}}]}',
    "bom.highbar.yaml": "agent:\n  endpoint: http://127.0.0.1:9/x\nsuites:\n  - name: S\n    tests:\n"
    "      - name: t\n        trigger: hi\n        expect:\n          response: {contains: x}\n",
    "bom_test.jsonl": '{"id": "a", "input": "hi", "assertions": [{"type": "contains", "value": "x"}]}\n',
    "bom.md": "---\nname: b\nversion: 1.0\ntransport: completions\n---\n\n# B\n\n## Test Cases\n\n### 1. Hello\n\n"
    '**Request:**\nPOST `/chat/completions`\n```json\n{"model": "m"}\n```\n\n**Strict:**\n```yaml\nstatus: 200\n```\n',
}


def test_a_byte_order_mark_is_read_alike_by_collection_and_validate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, text in FILES.items():
        (pytester.path / name).write_text(BOM + text, encoding="utf-8")
    (pytester.path / "bom_test.agent.yaml").write_text("endpoint: http://127.0.0.1:9/v1/chat/completions\n")
    collected = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--collect-only", "-q")
    assert collected.ret == 0, collected.stdout.str()
    collected.stdout.fnmatch_lines(["4 tests collected*"])
    monkeypatch.chdir(pytester.path)
    out = io.StringIO()
    assert cli.validate(sorted(FILES), out) == 0, out.getvalue()
    assert sorted(out.getvalue().splitlines()) == sorted(f"ok  {name} (1 test)" for name in FILES)
