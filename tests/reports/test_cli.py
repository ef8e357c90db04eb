"""Console scripts: ``semtest`` (the SemanticTest CLI's arguments) and ``semantictest validate``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_semantictest import cli, schemas
from tests.reports.scenario import PYTEST_ARGS

BIN = Path(sys.executable).parent


def script(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"the {name} console script is not installed next to {sys.executable} (pip install -e .)")
    return str(path)


# ----------------------------------------------------------------------------- semtest


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["tests/a.json"], {}, ["tests/a.json"]),
        (
            ["tests/a.json", "tests/b.json", "--html"],
            {},
            [
                "tests/a.json",
                "tests/b.json",
                "-p",
                "html",
                "--html=test-report.html",
                "--self-contained-html",
            ],
        ),
        (
            ["t.json", "--html", "--output", "r.html"],
            {},
            ["t.json", "-p", "html", "--html=r.html", "--self-contained-html"],
        ),
        (
            ["--output", "out/r.html", "t.json"],
            {},
            ["t.json", "-p", "html", "--html=out/r.html", "--self-contained-html"],
        ),
        (["t.json", "--debug"], {}, ["t.json", "-vv", "-rA", "--log-level=DEBUG"]),
        (["t.json"], {"LOG_LEVEL": "debug"}, ["t.json", "-vv", "-rA", "--log-level=DEBUG"]),
        (["t.json", "-x", "-k", "smoke", "-n", "2"], {}, ["t.json", "-x", "-k", "smoke", "-n", "2"]),
        ([], {}, []),
    ],
)
def test_semtest_arguments_map_to_pytest(argv: list[str], env: dict[str, str], expected: list[str]) -> None:
    assert cli.semtest_args(argv, env) == ["-p", "semantictest", *expected]


SUITE = {
    "name": "cli",
    "tests": [
        {
            "id": "ok",
            "pipeline": [{"block": "MockData", "config": {"data": {"n": 1}}, "output": "d"}],
            "assertions": {"d.n": 1},
        },
        {
            "id": "bad",
            "pipeline": [{"block": "MockData", "config": {"data": {"n": 1}}, "output": "d"}],
            "assertions": {"d.n": 2},
        },
    ],
}


def test_semtest_runs_suites_and_writes_the_html_report(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "a.json").write_text(json.dumps(SUITE))
    (tmp_path / "tests" / "b.json").write_text(json.dumps({"tests": [SUITE["tests"][0]]}))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [script("semtest"), "tests/a.json", "tests/b.json", "--html", "--output", "r.html", *PYTEST_ARGS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout  # like the SemanticTest CLI: 1 when a test did not pass
    assert "1 failed, 2 passed" in done.stdout and "semantictest  2 passed, 1 failed" in done.stdout
    report = (tmp_path / "r.html").read_text()
    assert "a.json::bad" in report and "<style" in report  # self-contained
    debug = subprocess.run(
        [script("semtest"), "tests/b.json", "--debug", *PYTEST_ARGS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert debug.returncode == 0, debug.stdout
    # passed tests' traces too
    assert "PASSED" in debug.stdout and "Captured pipeline trace call" in debug.stdout


# ----------------------------------------------------------------------------- semantictest validate


def project(tmp_path: Path) -> Path:
    """Valid and broken spec files of two formats, plus files that must not be touched."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.json").write_text(json.dumps(SUITE))
    (tmp_path / "specs" / "b.json").write_text(
        json.dumps(
            {"tests": [{"id": "x", "pipeline": [{"block": "MockDat", "output": "d"}], "assertions": {}}]},
            indent=2,
        )
    )
    (tmp_path / "specs" / "c.highbar.yaml").write_text(
        textwrap.dedent(f"""\
        agent:
          start: "{sys.executable} -c 'open(\\"agent-started\\", \\"w\\")'"
          endpoint: "http://127.0.0.1:9/chat"
        suites:
          - name: S
            tests:
              - trigger: "hi"
                expect: {{response: {{contains: hello}}}}
              - trigger: "bye"
                runs: 3
                expect: {{response: {{contains: bye}}}}
        """)
    )
    (tmp_path / "specs" / "d.highbar.yaml").write_text(
        "agent:\n  endpoint: http://x\nsuites:\n  - name: S\n    tests:\n      - trigger: hi\n        expect:\n          ordrd: true\n"
    )
    (tmp_path / "specs" / "package.json").write_text('{"name": "not a suite"}')
    (tmp_path / "specs" / "test_module.py").write_text("open('module-imported', 'w')\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --definitely-not-an-option\n")
    return tmp_path


def test_validate_prints_one_line_per_file_and_exits_2_on_a_broken_one(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = subprocess.run(
        [script("semantictest"), "validate", "specs"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "ok  specs/a.json (2 tests)",
        "✗ specs/b.json:7: tests[0].pipeline[0].block: unknown block 'MockDat' — did you mean 'MockData'? "
        "(known blocks: " + done.stdout.split("(known blocks: ")[1].split(")")[0] + ")",
        "ok  specs/c.highbar.yaml (2 tests)",
        "✗ specs/d.highbar.yaml:8: suites[0].tests[0].expect: unknown key 'ordrd' — did you mean 'ordered'?",
    ]
    assert not (root / "agent-started").exists() and not (root / "module-imported").exists()  # nothing ran
    assert not (root / ".pytest_cache").exists()


def test_validate_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path)
    monkeypatch.chdir(root)
    assert cli.validate(["specs/a.json", "specs/c.highbar.yaml"]) == 0
    assert capsys.readouterr().out == "ok  specs/a.json (2 tests)\nok  specs/c.highbar.yaml (2 tests)\n"
    assert cli.validate(["specs/package.json", "specs/a.json"]) == 2
    assert (
        capsys.readouterr().out
        == "ok  specs/a.json (2 tests)\n✗ specs/package.json: not a spec file of any format\n"
    )
    (root / "empty").mkdir()
    assert cli.validate(["empty"]) == 2
    assert capsys.readouterr().out == "no spec files found in empty\n"
    assert cli.validate(["no-such-dir"]) == 2
    assert capsys.readouterr().out == "ERROR: file or directory not found: no-such-dir\n"
    (root / "specs" / "e.json").write_text('{"tests": [')  # not JSON: place and line
    assert cli.validate(["specs/e.json"]) == 2
    assert capsys.readouterr().out.startswith("✗ specs/e.json:1: ")


def test_schema_command_prints_the_schema_or_its_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["schema", "highbar"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "highbar spec"
    assert cli.main(["schema", "semantictest", "--path"]) == 0
    assert capsys.readouterr().out == f"{schemas.path('semantictest')}\n"


SHOP = {
    "name": "shop",
    "tests": [
        {
            "id": "items",
            "pipeline": [
                {
                    "block": "HttpRequest",
                    "input": {"url": "${SHOP_API}/items", "method": "GET"},
                    "output": "r",
                }
            ],
            "assertions": {"r.status": 200},
        },
        {
            "id": "mock",
            "pipeline": [{"block": "MockData", "config": {"data": {"a": 1}}, "output": "m"}],
            "assertions": {"m.a": 1},
        },
    ],
}


def test_validate_lists_the_tests_that_will_error_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A problem confined to one test (a reference nothing defines) is no collection error, but the
    test will ERROR: validate names it and exits 1 (2 stays for a file that does not collect)."""
    (tmp_path / "shop.json").write_text(json.dumps(SHOP))
    monkeypatch.chdir(tmp_path)
    assert cli.validate(["shop.json"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "✗ shop.json (2 tests, 1 will ERROR)",
        "  shop.json:1: tests[0].pipeline[0].input.url: references 'SHOP_API', which no step, setup or context provides",
    ]
    (tmp_path / "broken.json").write_text('{"tests": [')
    assert cli.validate(["shop.json", "broken.json"]) == 2
