"""The committed JSON Schemas match the pydantic models, and accept what the loaders accept."""

from __future__ import annotations

import functools
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
from tests.docs_examples import docs_text
from tests.shared import needs_docs

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """The schema's validator, once its own validity is checked (once per schema: ~10 ms each)."""
    schema = json.loads(schemas.path(name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(name: str, document: Any) -> list[str]:
    """One message an error, the most relevant one inside unions (as editors show them)."""
    found = [best_match([e]) for e in validator(name).iter_errors(document)]
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found if e is not None]


def test_committed_schemas_are_up_to_date() -> None:
    assert schemas.stale() == [], "run: python -m pytest_semantictest.schemas"
    check = subprocess.run(
        [sys.executable, "-m", "pytest_semantictest.schemas", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_one_schema_per_format_shipped_as_package_data() -> None:
    assert [s.name for s in schemas.SCHEMAS] == ["semantictest", "highbar", "yao-case", "yao-agent"]
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert package_data["pytest_semantictest"][:2] == ["py.typed", "schemas/*.schema.json"]
    assert (
        ROOT / "pytest_semantictest" / "py.typed"
    ).is_file()  # PEP 561: the package's hints are for its users
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


SUITES = sorted(
    p
    for p in ROOT.glob("examples/**/*.json")
    if isinstance(d := json.loads(p.read_text()), dict) and isinstance(d.get("tests"), list)
)
SPECS = sorted(ROOT.glob("examples/**/*.highbar.yaml"))
YAO_CASES = [
    (p, n, line)
    for p in sorted(ROOT.glob("examples/**/*.jsonl"))
    for n, line in enumerate(p.read_text().splitlines(), 1)
    if line.strip() and not line.startswith("//")
]
YAO_AGENTS = sorted(ROOT.glob("examples/**/*.agent.yaml"))


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.name)
def test_every_example_suite_follows_the_semantictest_schema(path: Path) -> None:
    assert problems("semantictest", json.loads(path.read_text())) == []


@needs_docs
@pytest.mark.parametrize("name", docs_text.page_names())
def test_every_docs_page_suite_follows_the_semantictest_schema(name: str) -> None:
    """The docs' examples (read from the documentation: ``tests/docs_examples/docs_text.py``)."""
    assert problems("semantictest", docs_text.page_suite(name)) == []


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_every_example_spec_follows_the_highbar_schema(path: Path) -> None:
    assert problems("highbar", yaml.safe_load(path.read_text())) == []


@pytest.mark.parametrize(
    ("path", "number", "line"), YAO_CASES, ids=lambda v: v.name if isinstance(v, Path) else ""
)
def test_every_example_yao_case_follows_the_case_schema(path: Path, number: int, line: str) -> None:
    assert problems("yao-case", json.loads(line)) == [], f"{path.name}:{number}"


@pytest.mark.parametrize("path", YAO_AGENTS, ids=lambda p: p.name)
def test_every_example_agent_file_follows_the_yao_agent_schema(path: Path) -> None:
    assert problems("yao-agent", yaml.safe_load(path.read_text())) == []


def test_yao_aliases_single_assertions_and_durations_are_what_the_loader_accepts() -> None:
    shipped = {
        "id": "a",
        "input": "hi",
        "assert": {"type": "contains", "value": "hello"},
        "x-note": 1,
        "timeout": "1m30s",
        "attachments": [{"url": "https://example.com/a.png", "type": "image", "content_type": "image/png"}],
    }
    assert problems("yao-case", shipped) == []
    dynamic: dict[str, Any] = {
        "id": "d",
        "simulator": {"use": "user"},
        "checkpoints": [
            {"id": "greeted", "assert": {"type": "regex", "value": "hi"}},
            {"id": "thanked", "assertions": [{"type": "contains", "value": "thanks"}], "after": ["greeted"]},
        ],
    }
    assert problems("yao-case", dynamic) == []
    dynamic["checkpoints"][0]["assertion"] = {"type": "contains", "value": "hi"}  # two spellings of one key
    assert problems("yao-case", dynamic) != []
    del dynamic["checkpoints"][0]["assertion"], dynamic["checkpoints"][0]["assert"]
    assert problems("yao-case", dynamic) != []  # a checkpoint needs an assertion in some spelling
    assert problems("yao-case", {"id": "a", "input": "hi", "asserts": []}) == [
        ": 'asserts' does not match any of the regexes: '^x-'"
    ]
    assert sorted(
        problems("yao-agent", {"endpoint": "http://127.0.0.1:1", "protocl": "openai", "timeout": "3"})
    ) == [
        ": 'protocl' does not match any of the regexes: '^x-'",
        "timeout: '3' is not valid under any of the given schemas",
    ]


def test_schema_key_and_x_keys_are_free_but_unknown_keys_and_wrong_types_are_not() -> None:
    suite: dict[str, Any] = {
        "$schema": "./semantictest.schema.json",
        "x-owner": "qa",
        "tests": [
            {
                "id": "a",
                "x-note": 1,
                "pipeline": [{"block": "MockData", "data": 1, "output": "d"}],
                "assertions": {"d": 1},
            }
        ],
    }
    assert problems("semantictest", suite) == []
    suite["tests"][0]["asserts"] = {}
    suite["tests"][0]["runs"] = "3"
    assert sorted(problems("semantictest", suite)) == [
        "tests/0/runs: '3' is not of type 'integer'",
        "tests/0: 'asserts' does not match any of the regexes: '^(x-|\\\\$schema$)'",
    ]
    spec = {
        "agent": {"endpoint": "http://127.0.0.1:1/chat", "x-team": "a"},
        "suites": [{"name": "S", "tests": [{"trigger": "hi", "expect": {"ordrd": True}}]}],
    }
    assert problems("highbar", spec) == [
        "suites/0/tests/0/expect: 'ordrd' does not match any of the regexes: '^x-'"
    ]
    assert problems("highbar", {"agent": {"endpoint": "x"}, "suites": []}) == [
        "suites: [] should be non-empty"
    ]


def test_editor_comments_in_the_docs_name_the_shipped_files() -> None:
    editors = (ROOT / "docs" / "editors.md").read_text()
    for source in schemas.SCHEMAS:
        assert f"{source.name}.schema.json" in editors
    assert "# yaml-language-server: $schema=" in editors and '"$schema":' in editors


def test_examples_name_schema_files_that_exist() -> None:
    named = {}
    for path in (*SUITES, *SPECS, *YAO_AGENTS):
        if path.suffix == ".json":
            ref = json.loads(path.read_text()).get("$schema")
        else:
            first = path.read_text().splitlines()[0]
            ref = first.partition("# yaml-language-server: $schema=")[2] or None
        if ref is not None:
            named[path.name] = (path.parent / ref).resolve()
    assert {p.name for p in named.values()} >= {
        "semantictest.schema.json",
        "highbar.schema.json",
        "yao-agent.schema.json",
    }
    assert all(target.is_file() for target in named.values()), named
