"""Every problem of a SemanticTest test is reported at once, as highbar and Yao do: a key the schema
rejects (``asertions``) does not hide a mistake in the test's steps (``mehtod``) or its assertions."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_semantictest.formats.semantictest.loader import load_file


def _write(tmp_path: Path, test: dict[str, object]) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "s", "tests": [test]}, indent=2), encoding="utf-8")
    return path


def test_a_misspelled_test_key_and_a_misspelled_input_key_are_reported_together(tmp_path: Path) -> None:
    step = {"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9", "mehtod": "GET"}, "output": "r"}
    path = _write(tmp_path, {"id": "t", "pipeline": [step], "asertions": {"r.status": 200}})
    (case,) = load_file(path).cases
    lines = (case.error or "").splitlines()
    assert len(lines) == 2, lines
    assert "unknown input key 'mehtod' — did you mean 'method'?" in lines[0]  # in line order
    assert "unknown key 'asertions' — did you mean 'assertions'?" in lines[1]
    assert all(line.startswith(f"{path}:") for line in lines)


def test_the_assertions_of_a_rejected_test_are_checked_too(tmp_path: Path) -> None:
    step = {"block": "HttpRequest", "input": {"url": "http://127.0.0.1:9"}, "output": "r"}
    path = _write(tmp_path, {"id": "t", "pipeline": [step], "assertions": {"r.status": {"eqals": 1}}, "x": 1})
    (case,) = load_file(path).cases
    error = case.error or ""
    assert "unknown key 'x'" in error and "unknown operator 'eqals'" in error, error


def test_a_step_the_schema_rejects_is_reported_once(tmp_path: Path) -> None:
    path = _write(tmp_path, {"id": "t", "pipeline": [{"block": "HttpRequest", "input": 3, "id": 4}], "y": 1})
    (case,) = load_file(path).cases
    lines = (case.error or "").splitlines()
    assert len(lines) == len(set(lines)) and any("unknown key 'y'" in line for line in lines), lines
