"""The committed JSON Schemas match the pydantic models, and accept what the loaders accept."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from jsonschema.exceptions import best_match

from pytest_semantictest import schemas

ROOT = Path(__file__).resolve().parents[2]


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(schemas.path(name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(name: str, document: Any) -> list[str]:
    """One message an error, the most relevant one inside unions (as editors show them)."""
    found = [best_match([e]) for e in validator(name).iter_errors(document)]
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found if e is not None]


def test_committed_schemas_are_up_to_date() -> None:
    assert schemas.stale() == [], "run: python -m pytest_semantictest.schemas"
    check = subprocess.run([sys.executable, "-m", "pytest_semantictest.schemas", "--check"],
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def test_one_schema_per_format_shipped_as_package_data() -> None:
    assert [s.name for s in schemas.SCHEMAS] == ["semantictest", "highbar"]
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert package_data["pytest_semantictest"] == ["schemas/*.schema.json"]
    for source in schemas.SCHEMAS:
        schema = json.loads(schemas.path(source.name).read_text(encoding="utf-8"))
        assert schema["$schema"] == schemas.DRAFT and schema["title"] == source.title


def test_a_stale_file_is_reported_and_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemas, "HERE", tmp_path)
    assert len(schemas.stale()) == len(schemas.SCHEMAS)  # missing files are stale
    assert schemas.write_all() == [tmp_path / f"{s.name}.schema.json" for s in schemas.SCHEMAS]
    assert schemas.stale() == [] and schemas.write_all() == []
    (tmp_path / "highbar.schema.json").write_text("{}")
    assert schemas.stale() == [tmp_path / "highbar.schema.json"]


SUITES = sorted(p for pattern in ("examples/**/*.json", "tests/docs_examples/*.json") for p in ROOT.glob(pattern)
                if isinstance(d := json.loads(p.read_text()), dict) and isinstance(d.get("tests"), list))
SPECS = sorted(ROOT.glob("examples/**/*.highbar.yaml"))


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.name)
def test_every_example_suite_follows_the_semantictest_schema(path: Path) -> None:
    assert problems("semantictest", json.loads(path.read_text())) == []


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_every_example_spec_follows_the_highbar_schema(path: Path) -> None:
    assert problems("highbar", yaml.safe_load(path.read_text())) == []


def test_schema_key_and_x_keys_are_free_but_unknown_keys_and_wrong_types_are_not() -> None:
    suite = {"$schema": "./semantictest.schema.json", "x-owner": "qa",
             "tests": [{"id": "a", "x-note": 1, "pipeline": [{"block": "MockData", "data": 1, "output": "d"}],
                        "assertions": {"d": 1}}]}
    assert problems("semantictest", suite) == []
    suite["tests"][0]["asserts"] = {}
    suite["tests"][0]["runs"] = "3"
    assert sorted(problems("semantictest", suite)) == [
        "tests/0/runs: '3' is not of type 'integer'",
        "tests/0: 'asserts' does not match any of the regexes: '^(x-|\\\\$schema$)'",
    ]
    spec = {"agent": {"endpoint": "http://127.0.0.1:1/chat", "x-team": "a"},
            "suites": [{"name": "S", "tests": [{"trigger": "hi", "expect": {"ordrd": True}}]}]}
    assert problems("highbar", spec) == [
        "suites/0/tests/0/expect: 'ordrd' does not match any of the regexes: '^x-'"]
    assert problems("highbar", {"agent": {"endpoint": "x"}, "suites": []}) == ["suites: [] should be non-empty"]


def test_editor_comments_in_the_docs_name_the_shipped_files() -> None:
    editors = (ROOT / "docs" / "editors.md").read_text()
    for source in schemas.SCHEMAS:
        assert f"{source.name}.schema.json" in editors
    assert "# yaml-language-server: $schema=" in editors and '"$schema":' in editors
