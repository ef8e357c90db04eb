"""Detection: no file of ours dropped silently, ordinary files stay quiet, named files say why they are not ours.

A near miss (a compliance front matter with ``transprot:``, a Yao case without ``id``) is collected so
its loader names what is wrong; README.md and data files are not touched; ``pytest README.md`` says why
it is not a spec file instead of pytest's bare "not found". ``looks_like_suite`` (a sniff, no parse) is
checked against a real parse.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_semantictest.formats.detect import (
    CollectContext,
    compliance_markdown,
    looks_like_suite,
    semantictest_json,
    yao_jsonl,
)

pytest_plugins = ["pytester"]

CASES = "## Test Cases\n\n### 1. Hello\n\n**Request:**\nGET `/x`\n\n**Strict:**\n```yaml\nstatus: 200\n```\n"
CASE = {"id": "a", "input": "hi", "assert": {"type": "contains", "value": "hi"}}
TEST = {
    "id": "a",
    "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "x"}],
    "assertions": {"x": 1},
}

# (file name, content, the collection error's message fragment); every one must be reported
NEAR_MISSES: list[tuple[str, str, str]] = [
    (
        "typo.md",
        f"---\nname: t\nversion: 1\ntransprot: completions\n---\n\n{CASES}",
        "unknown key 'transprot' — did you mean 'transport'?",
    ),
    (
        "capital.md",
        f"---\nname: t\nversion: 1\nTransport: completions\n---\n\n{CASES}",
        "did you mean 'transport'?",
    ),
    (
        "no_transport.md",
        f"---\nname: t\nversion: 1\ntags: [core]\n---\n\n# T\n\n{CASES}",
        "'transport' is required",
    ),
    (
        "listed.md",
        f"---\n- name: t\n- version: 1\n- transport: completions\n---\n\n{CASES}",
        "must be a mapping with name, version and transport",
    ),
    (
        "broken_test.jsonl",
        '{"id": "a", "input": "hi",\n' + json.dumps({**CASE, "id": "b"}) + "\n",
        "invalid JSON at column",
    ),
    ("no_id_test.jsonl", json.dumps({k: v for k, v in CASE.items() if k != "id"}) + "\n", "'id' is required"),
    (
        "typo_test.jsonl",
        json.dumps({"id": "a", "inptu": "hi", "assert": CASE["assert"]}) + "\n",
        "unknown key 'inptu' — did you mean 'input'?",
    ),
    (
        "draft_test.jsonl",
        json.dumps({"id": "a", "messages": [{"role": "user", "content": "hi"}], "assert": CASE["assert"]})
        + "\n",
        "messages: the draft shape of Yao's test design: this case has 'messages' where a case has 'input'",
    ),
    (
        "singular.json",
        json.dumps({"name": "s", "test": [TEST]}, indent=2),
        "(found 'test' — did you mean 'tests'?)",
    ),
    # broken in the very keys detection reads: still a spec file, so its problem is the error
    ("infinite.json", '{"name": "s", "tests": -Infinity}', "-Infinity is not a JSON value"),
    ("object.json", '{"name": "s", "tests": {"a": 1}}', "tests: must be an array of tests"),
    ("cut_after_key.json", '{"name": "s", "tests"', "invalid JSON"),
    ("cut_in_key.json", '{"name": "s", "te', "invalid JSON"),
    ("cut_in_context.json", '{"name": "s", "context": {"BASE": "http://127.0.0.1', "invalid JSON"),
    ("empty_front.md", f"---\n{{}}\n---\n\n# T\n\n{CASES}", "'transport' is required"),
    ("blank_front.md", f"---\n---\n\n# T\n\n{CASES}", "must be a mapping with name, version and transport"),
    ("tags_null.md", f"---\ntags: null\n---\n\n# T\n\n{CASES}", "'transport' is required"),
    (
        "flow_typo.md",
        f"---\n{{name: t, version: 1, transprot: a2a}}\n---\n\n{CASES}",
        "did you mean 'transport'?",
    ),
    ("yaml_error.md", f"---\nname: [t\nversion: 1\n---\n\n# T\n\n{CASES}", "front matter"),
    (
        "unopened.md",
        f"name: t\nversion: 1\ntransport: completions\n---\n\n{CASES}",
        "a compliance file starts with YAML front matter",
    ),
    ("first_no_id_test.jsonl", json.dumps({"name": "greets", "input": "hi"}) + "\n", "'id' is required"),
]

# ordinary files next to spec files: never collected, never an error or warning
QUIET: list[tuple[str, str]] = [
    ("README.md", "# Project\n\n## Test Cases\n\n**Request:** none\n"),
    (
        "jekyll.md",
        "---\nlayout: post\ntitle: Travel\ntransportation: train\n---\n\n## Test Cases\n\n**Request:** x\n",
    ),
    ("fenced.md", "---\nname: docs\nversion: 2\n---\n\nAn example:\n\n```markdown\n" + CASES + "```\n"),
    ("plan.md", "---\ntitle: QA plan\n---\n\n## Test Cases\n\n### 1. Login\n\n**Expected:** works\n"),
    ("heldout_test_split.jsonl", '{"id": 1, "inputs": "2+2", "targets": "4"}\n'),  # an ML test split
    ("rows_test.jsonl", '{"input": "a", "output": "b"}\n'),
    ("only_input_test.jsonl", '{"input": "a"}\n'),
    ("broken_data.jsonl", '{"id": "a", "input": "hi",\n'),  # not named like a test file
    ("report.json", json.dumps({"results": [{"tests": [{"name": "t"}]}]})),
    ("package.json", json.dumps({"name": "x", "scripts": {"tests": "jest"}})),
    ("ci.json", json.dumps({"pipeline": {"stages": 2}, "test": ["npm test"]})),
    ("jobs.json", json.dumps({"jobs": {"test": [{"pipeline": "unit"}]}})),
    ("tsconfig.json", json.dumps({"compilerOptions": {"strict": True}, "include": ["src"]})),
    ("cut_package.json", '{"name": "x", "version": "1.0.0", "scripts": {"test": "jest"'),
    ("cut_manifest.json", '{"name": "x", "version": "1.0.0", "desc'),
    ("flow_jekyll.md", "---\n{title: Travel, layout: post}\n---\n\n## Test Cases\n\n**Request:** x\n"),
    ("nested.md", "---\ntravel:\n  transport: train\n---\n\n# Trip\n"),
    ("ruled.md", "# Notes\n\nfirst part\n\n---\n\nsecond part\n"),
]


VALID = json.dumps({"name": "ok", "tests": [TEST]})
"""A valid sibling: a folder run with it would be green if a broken file next to it were skipped."""


def test_near_misses_are_collection_errors_naming_the_file(pytester: pytest.Pytester) -> None:
    for name, text, _ in NEAR_MISSES + [(n, t, "") for n, t in QUIET]:
        (pytester.path / name).write_text(text)
    (pytester.path / "valid.json").write_text(VALID)
    # a Yao case's own problem (no id, a misspelled key) is that item's ERROR: let the items run
    result = pytester.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    for name, _, message in NEAR_MISSES:
        assert any(f"{name}:" in line and message in line for line in result.stdout.lines), (name, output)
    for name, _ in QUIET:
        assert name not in output, (name, output)
    assert "Traceback" not in output and "pytest_semantictest/" not in output


@pytest.mark.parametrize(("name", "text", "message"), NEAR_MISSES, ids=[n for n, *_ in NEAR_MISSES])
def test_a_near_miss_fails_a_folder_run_as_it_fails_a_named_one(
    pytester: pytest.Pytester, name: str, text: str, message: str
) -> None:
    """Never green: next to a valid sibling, the folder run reports the file as naming it does (a
    collection error; a Yao case's own problem is that case's ERROR)."""
    (pytester.path / name).write_text(text)
    (pytester.path / "valid.json").write_text(VALID)
    for args in ([], [name, "valid.json"]):
        result = pytester.runpytest("-p", "no:cacheprovider", *args)
        output = result.stdout.str()
        assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED), (args, output)
        assert any(f"{name}:" in line and message in line for line in result.stdout.lines), (args, output)


def test_a_valid_compliance_file_in_yaml_flow_style_is_collected(pytester: pytest.Pytester) -> None:
    front = "{name: flow, version: '1', transport: completions, tags: [core]}"
    (pytester.path / "flow.md").write_text(f"---\n{front}\n---\n\n# Flow\n\n{CASES}")
    (pytester.path / "valid.json").write_text(VALID)
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["flow.md::1. Hello", "valid.json::a"], consecutive=False)
    import io

    from pytest_semantictest import cli

    out = io.StringIO()
    assert cli.validate([str(pytester.path)], out) == 0, out.getvalue()
    assert "flow.md (1 test)" in out.getvalue()


@pytest.mark.parametrize(("name", "text", "_message"), NEAR_MISSES, ids=[n for n, *_ in NEAR_MISSES])
def test_each_near_miss_is_detected(tmp_path: Path, name: str, text: str, _message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    ctx = CollectContext(tmp_path, tmp_path, {}, lambda option: None, ())
    detect = {".md": compliance_markdown, ".json": semantictest_json}.get(path.suffix)
    assert detect(path) if detect else yao_jsonl(path, ctx), name


@pytest.mark.parametrize(("name", "text"), QUIET, ids=[n for n, _ in QUIET])
def test_ordinary_files_stay_quiet(pytester: pytest.Pytester, name: str, text: str) -> None:
    (pytester.path / name).write_text(text)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert "error" not in result.stdout.str().lower()


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        (
            "README.md",
            "# Project\n",
            "not a compliance file: a compliance file starts with YAML front matter",
        ),
        (
            "notes.md",
            "---\ntitle: x\n---\n",
            "not a compliance file: its front matter has no 'transport' key",
        ),
        (
            "data.json",
            '{"a": 1}',
            'not a SemanticTest suite: a suite is a JSON object with a top-level "tests" array',
        ),
        ("report.json", '{"r": {"tests": []}}', "nested inside something else"),
        ("spec.yaml", "x: 1\n", "not a highbar spec: highbar specs are named *.highbar.yaml"),
        ("rows.jsonl", '{"input": "a", "output": "b"}\n', "not a Yao test file: its first case has no 'id'"),
        ("ids.jsonl", '{"id": "a", "output": "b"}\n', "none of 'input', 'turns' or 'checkpoints'"),
    ],
)
def test_a_file_named_on_the_command_line_says_why_it_is_not_a_spec(
    pytester: pytest.Pytester, name: str, text: str, why: str
) -> None:
    (pytester.path / name).write_text(text)
    result = pytester.runpytest("-p", "no:cacheprovider", name)
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    result.stdout.fnmatch_lines([f"{name}: *{why}*"])  # (relative to the rootdir, as node ids are)
    assert "not found" not in output and "Traceback" not in output


def test_a_file_of_another_kind_keeps_pytests_message(pytester: pytest.Pytester) -> None:
    (pytester.path / "notes.txt").write_text("hello\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "notes.txt")
    assert result.ret in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED)
    assert "not a " not in result.stdout.str() + result.stderr.str()


def test_a_named_file_another_plugin_collects_is_left_to_it(pytester: pytest.Pytester) -> None:
    (pytester.path / "guide.md").write_text("# Guide\n\n>>> 1 + 1\n2\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--doctest-glob=*.md", "guide.md")
    result.assert_outcomes(passed=1)


def reference(raw: bytes) -> bool:
    """What ``looks_like_suite`` must answer: a top-level ``tests`` key, whatever its value, or broken
    JSON naming one as a key."""
    try:
        data = json.loads(raw)
    except ValueError:
        return re.search(rb'"tests"\s*(:|$)', raw) is not None
    return isinstance(data, dict) and "tests" in data


SNIFFED: list[bytes] = [
    b'{"tests": []}',
    b'{"name": "s", "context": {"x": "{[["}, "tests": [{"id": "a"}]}',
    b'{"context": {"tests": [1]}, "tests": [2]}',
    b'{"context": {"tests": [1]}}',
    b'[{"tests": []}]',
    b'{"description": "\\"tests\\": [", "x": 1}',
    b'{"d": "say \\\\", "tests": [1]}',
    b'{"r": [{"tests": [1]}], "s": "]]]"}',
    b'{"r": {"tests": "no"}}',
    b'{"tests": {"a": 1}}',
    b'\xef\xbb\xbf{"tests": []}',
    b'{"name": "s", "tests": [{"id": "a"},]}',  # broken: the loader reports it
    b'{"name": "s", "context": {"a": 1, "tests": [{"id": "a"}]}',  # a brace never closed: reported
    b'{"tests" : \n [ ]}',
    b'{"name": "s", "tests": -Infinity}',
    b'{"name": "s", "tests": NaN}',
    b'{"name": "s", "tests": null}',
    b'{"name": "s", "tests"',
    b'{"name": "s", "tests": [{"id": "a", "pipeline": [{"block": "Mo',
    b'{"r": {"tests": null}}',
]


@pytest.mark.parametrize("raw", SNIFFED)
def test_the_sniff_agrees_with_a_parse(raw: bytes) -> None:
    expected = reference(raw.removeprefix(b"\xef\xbb\xbf"))
    assert looks_like_suite(raw) is expected, raw


@pytest.mark.parametrize(("name", "text", "message"), NEAR_MISSES, ids=[n for n, *_ in NEAR_MISSES])
def test_validate_agrees_with_a_folder_run_on_each_near_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, message: str
) -> None:
    """``semantictest validate`` of the folder lists the file as broken, with the run's message, and
    does not exit 0 (the valid sibling alone would say ok)."""
    import io

    from pytest_semantictest import cli

    (tmp_path / name).write_text(text)
    (tmp_path / "valid.json").write_text(VALID)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    code = cli.validate(["."], out)
    shown = out.getvalue()
    assert code in (1, 2), shown
    assert f"✗ {name}" in shown and message in shown, shown
    assert "ok  valid.json (1 test)" in shown


def test_a_file_that_does_not_collect_is_an_error_in_every_artefact(pytester: pytest.Pytester) -> None:
    """JUnit has pytest's own entry for it; the results file has a record of its own, an error."""
    from xml.etree import ElementTree

    (pytester.path / "infinite.json").write_text('{"name": "s", "tests": -Infinity}')
    (pytester.path / "valid.json").write_text(VALID)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--junitxml=junit.xml", "--semantictest-results=results.jsonl"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    cases = {c.get("name"): c for c in ElementTree.parse(pytester.path / "junit.xml").iter("testcase")}
    assert cases["infinite.json"].find("error") is not None
    records = {
        r["id"]: r
        for r in map(json.loads, (pytester.path / "results.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert records["infinite.json"]["outcome"] == "error"
    assert "-Infinity is not a JSON value" in records["infinite.json"]["message"]
    assert list(records) == ["infinite.json"]  # pytest stops after a collection error: nothing ran
