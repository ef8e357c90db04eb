"""The pytest integration, through real pytest runs (pytester)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from tests.helpers import once_per_session, pytest_process, xdist_outcomes

PASSING = {
    "id": "ok",
    "pipeline": [{"block": "MockData", "config": {"data": {"a": 1}}, "output": "d"}],
    "assertions": {"d.a": 1},
}
FAILING = {
    "id": "bad",
    "pipeline": [{"block": "MockData", "config": {"data": {"a": 1}}, "output": "d"}],
    "assertions": {"d.a": 2},
}


def write(pytester: pytest.Pytester, name: str, *tests: dict, **top) -> None:
    pytester.makefile(".json", **{name: json.dumps({"name": name, **top, "tests": list(tests)}, indent=2)})


def test_node_ids_and_source_line(pytester: pytest.Pytester) -> None:
    write(pytester, "suite", PASSING, FAILING)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["suite.json::ok", "suite.json::bad"])
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*bad (suite.json:*)", "*d.a (line *): Expected 1 to equal 2*"])


def test_other_json_files_are_ignored_silently(pytester: pytest.Pytester) -> None:
    pytester.makefile(".json", package=json.dumps({"name": "x", "scripts": {"test": "jest"}}))
    pytester.makefile(".json", fixture=json.dumps([{"tests": []}]))
    pytester.makefile(".json", broken="{ not json at all")
    write(pytester, "suite", PASSING)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert result.ret == 0


def test_dash_k_lf_and_x(pytester: pytest.Pytester) -> None:
    write(pytester, "suite", PASSING, FAILING, {**PASSING, "id": "ok2"})
    pytester.runpytest("-k", "ok").assert_outcomes(passed=2)
    pytester.runpytest("-p", "cacheprovider").assert_outcomes(passed=2, failed=1)
    pytester.runpytest("-p", "cacheprovider", "--lf").assert_outcomes(failed=1)
    result = pytester.runpytest("-x", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)


def test_short_summary_and_junit_name_the_first_check_that_failed(pytester: pytest.Pytester) -> None:
    write(pytester, "suite", PASSING, FAILING)
    result = pytester.runpytest_inprocess("-rf", "--junitxml=junit.xml", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED suite.json::bad - d.a (line *): Expected 1 to equal 2"])
    junit = (pytester.path / "junit.xml").read_text()
    assert 'message="d.a (line ' in junit and 'Expected 1 to equal 2"' in junit
    result.stdout.fnmatch_lines(
        ["bad (suite.json:*)", "d.a (line *): Expected 1 to equal 2", "  operator: equals"]
    )


def test_short_summary_and_junit_name_the_first_check_that_failed_under_xdist(xdist_run: XdistRun) -> None:
    assert {k: v for k, v in xdist_run.outcomes.items() if k.startswith("summary.json")} == {
        "summary.json::ok": "PASSED",
        "summary.json::bad": "FAILED",
    }
    out = pytest.LineMatcher(xdist_run.output.splitlines())
    out.fnmatch_lines(["FAILED summary.json::bad - d.a (line *): Expected 1 to equal 2"])
    junit = xdist_run.junit
    assert 'name="bad" ' in junit and 'message="d.a (line ' in junit and 'Expected 1 to equal 2"' in junit
    out.fnmatch_lines(["bad (summary.json:*)", "d.a (line *): Expected 1 to equal 2", "  operator: equals"])


def test_short_summary_of_errors_names_the_problem(pytester: pytest.Pytester) -> None:
    slow = {
        "id": "slow",
        "timeout": 1000,
        "pipeline": [
            {"id": "m", "block": "MockData", "config": {"data": 1}, "output": "d"},
            {"block": "Loop", "config": {"target": "m", "maxIterations": 3, "delayMs": 5000}},
        ],
        "assertions": {"d": 1},
    }
    write(pytester, "errors", slow)
    pytester.makefile(".json", broken_test=json.dumps({"tests": [{"id": "x", "pipline": []}, {"id": 3}]}))
    result = pytester.runpytest_inprocess(
        "-rE", "-vv", "-p", "no:cacheprovider", "--continue-on-collection-errors"
    )
    result.assert_outcomes(errors=3)  # a problem inside a test is that test's ERROR (Case.error)
    result.stdout.fnmatch_lines(
        [
            "ERROR broken_test.json::x - *broken_test.json:1: tests[[]0]: unknown key 'pipline' — did you mean 'pipeline'?",
            "ERROR broken_test.json::test-1 - *broken_test.json:1: tests[[]1].id: must be a string, got 3 (and 1 more)",
            "ERROR errors.json::slow - timed out after 1 s",
        ],
        consecutive=False,
    )


def test_markers_select(pytester: pytest.Pytester) -> None:
    write(pytester, "suite", {**PASSING, "markers": ["smoke"]}, {**PASSING, "id": "other"})
    pytester.makeini("[pytest]\nmarkers =\n    smoke: quick checks\n")
    pytester.runpytest("-m", "smoke").assert_outcomes(passed=1)
    pytester.runpytest("-m", "semantictest").assert_outcomes(passed=2)


def test_spec_error_is_collection_error_without_traceback(pytester: pytest.Pytester) -> None:
    bad = {
        "id": "x",
        "pipeline": [{"block": "MockDta", "config": {"data": {}}, "output": "d"}],
        "assertions": {"d.a": 1},
    }
    # an unknown block is the file's problem; a bad operator would be the test's
    write(pytester, "suite", bad)
    result = pytester.runpytest()
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        ["*suite.json:* tests[[]0].pipeline[[]0].block: unknown block 'MockDta' — did you mean 'MockData'?*"]
    )
    assert "Traceback" not in result.stdout.str()


RECORD_BLOCK = """
import os
from pytest_semantictest import Block, register_block

@register_block
class Record(Block):
    name = "Record"
    config_keys = None
    async def process(self, inputs, ctx):
        with open({log!r}, "a") as fh:
            fh.write(f"{{self.config['event']}} {{os.environ.get('PYTEST_XDIST_WORKER', '-')}}\\n")
        return {{"event": self.config["event"], "token": "t-1"}}
"""


def record_block(pytester: pytest.Pytester) -> Path:
    """A conftest with a ``Record`` block that appends ``<event> <xdist worker>`` to the returned log."""
    log = pytester.path / "events.log"
    pytester.makeconftest(RECORD_BLOCK.format(log=str(log)))
    return log


def _record(event: str, n: int = 0) -> dict:
    return {
        "id": f"t{n}",
        "pipeline": [{"block": "Record", "config": {"event": event}, "output": "r"}],
        "assertions": {"r.token": "t-1"},
    }


@dataclass
class XdistRun:
    """One ``pytest -n 2`` run the xdist tests below share (each checks its own files in it)."""

    outcomes: dict[str, str]
    output: str
    junit: str
    events: list[list[str]]


def _xdist_run(folder: Path) -> XdistRun:
    folder.mkdir(exist_ok=True)
    log = folder / "events.log"
    (folder / "conftest.py").write_text(RECORD_BLOCK.format(log=str(log)))

    def put(name: str, *tests: dict, **top) -> None:
        (folder / f"{name}.json").write_text(
            json.dumps({"name": name, **top, "tests": list(tests)}, indent=2)
        )

    put("summary", PASSING, FAILING)
    put("items", PASSING, {**PASSING, "id": "ok2"}, {**PASSING, "id": "ok3"}, {**FAILING, "id": "bad_item"})
    for name in ("accounts", "orders"):
        put(
            name,
            *(_record(f"test-{name}", n) for n in range(6)),
            setup=[{"block": "Record", "config": {"event": f"setup-{name}"}, "output": "auth"}],
            teardown=[{"block": "Record", "config": {"event": f"teardown-{name}"}, "output": "bye"}],
        )
    put("plain", *(_record("test-plain", n) for n in range(12)))
    done = pytest_process(folder, "-n", "2", "-v", "-rf", "--junitxml=junit.xml", "-p", "no:cacheprovider")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # the two failures
    return XdistRun(
        xdist_outcomes(output),
        output,
        (folder / "junit.xml").read_text(),
        [line.split() for line in log.read_text().splitlines()],
    )


@pytest.fixture(scope="module")
def xdist_run(request: pytest.FixtureRequest) -> XdistRun:
    """``summary.json`` (a pass, a failure), ``items.json`` (3 pass, 1 fails), ``accounts.json`` and
    ``orders.json`` (6 tests each between a setup and a teardown) and ``plain.json`` (12 tests), all
    with a ``Record`` block logging which worker ran what, under ``-n 2``: one run for the tests below."""
    return once_per_session(request, "plugin-xdist", _xdist_run, asdict, lambda d: XdistRun(**d))


def test_setup_once_visible_to_tests_and_teardown_runs_after_failures(pytester: pytest.Pytester) -> None:
    log = record_block(pytester)
    write(
        pytester,
        "suite",
        {
            "id": "a",
            "pipeline": [{"block": "MockData", "config": {"data": {"t": "${auth.token}"}}, "output": "d"}],
            "assertions": {"d.t": "t-1"},
        },
        {**FAILING, "id": "b"},
        setup=[{"block": "Record", "config": {"event": "setup"}, "output": "auth"}],
        teardown=[{"block": "Record", "config": {"event": "teardown"}, "output": "bye"}],
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    assert [line.split()[0] for line in log.read_text().splitlines()] == ["setup", "teardown"]


def test_failing_setup_makes_every_test_an_error_naming_the_step(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "suite",
        PASSING,
        {**PASSING, "id": "ok2"},
        setup=[
            {
                "id": "login",
                "block": "HttpRequest",
                "input": {"url": "http://127.0.0.1:9/nothing"},
                "output": "auth",
            }
        ],
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*setup step 'login' (HttpRequest) failed at *suite.json:*"])


def test_custom_block_via_conftest_and_unknown_block_lists_known(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
from pytest_semantictest import Block, register_block

@register_block
class Upper(Block):
    name = "Upper"
    primary_input = "text"
    async def process(self, inputs, ctx):
        return {"text": inputs["text"].upper()}
"""
    )
    write(
        pytester,
        "suite",
        {
            "id": "u",
            "pipeline": [{"block": "Upper", "input": "shout", "output": "o"}],
            "assertions": {"o.text": "SHOUT"},
        },
    )
    pytester.runpytest().assert_outcomes(passed=1)
    write(pytester, "other", {"id": "u", "pipeline": [{"block": "Uper", "input": "x"}], "assertions": {}})
    result = pytester.runpytest("other.json")
    result.stdout.fnmatch_lines(["*unknown block 'Uper' — did you mean 'Upper'?*known blocks:*HttpRequest*"])


def test_idle_session_prints_nothing_and_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import sys
def test_plain():
    heavy = [m for m in ("httpx", "pydantic", "openai", "pytest_semantictest.engine.runner") if m in sys.modules]
    assert heavy == []
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:asyncio", "-p", "no:html", "-p", "no:metadata")
    result.assert_outcomes(passed=1)
    lines = [ln for ln in result.stdout.lines if not ln.startswith("plugins:")]
    assert "semantictest" not in "\n".join(lines).lower()


def test_running_one_test_file_does_not_load_a_sibling_specs_format(pytester: pytest.Pytester) -> None:
    """pytest offers every file of the folder to the plugin: a spec beside the file that is run gets a
    node, but its format's modules are imported only when it is collected."""
    pytester.makepyfile(
        test_plain="""
import sys
def test_plain():
    assert [m for m in sys.modules if m.startswith("pytest_semantictest.formats.highbar.")] == []
"""
    )
    (pytester.path / "beside.highbar.yaml").write_text(
        "agent: {endpoint: 'http://127.0.0.1:9/chat'}\nsuites: []\n"
    )
    result = pytester.runpytest_subprocess(
        "test_plain.py", "-p", "no:asyncio", "-p", "no:html", "-p", "no:metadata"
    )
    result.assert_outcomes(passed=1)


def test_xdist_runs_items(xdist_run: XdistRun) -> None:
    assert {k: v for k, v in xdist_run.outcomes.items() if k.startswith("items.json")} == {
        "items.json::ok": "PASSED",
        "items.json::ok2": "PASSED",
        "items.json::ok3": "PASSED",
        "items.json::bad_item": "FAILED",
    }
    assert len(xdist_run.outcomes) == 30 and "28 passed" in xdist_run.output  # and nothing else ran


def test_xdist_runs_a_file_with_setup_on_one_worker_setup_and_teardown_once(xdist_run: XdistRun) -> None:
    assert [
        v
        for k, v in xdist_run.outcomes.items()
        if k.split("::")[0] in ("accounts.json", "orders.json", "plain.json")
    ] == ["PASSED"] * 24
    events = xdist_run.events
    assert {worker for _, worker in events} == {"gw0", "gw1"}  # both workers ran tests
    for name in ("accounts", "orders"):
        mine = [(n, worker) for n, (event, worker) in enumerate(events) if event.endswith(name)]
        assert [events[n][0] for n, _ in mine] == [f"setup-{name}", *[f"test-{name}"] * 6, f"teardown-{name}"]
        assert len({worker for _, worker in mine}) == 1, mine  # one worker ran the whole file


def test_only_files_with_setup_or_teardown_are_one_scheduling_unit(tmp_path: Path) -> None:
    from pytest_semantictest.formats.semantictest.loader import runs_on_one_worker as has_setup
    from pytest_semantictest.formats.semantictest.pytest_glue.xdist_scheduling import _FileScopes

    (tmp_path / "with.json").write_text(json.dumps({"setup": [{"block": "MockData"}], "tests": []}))
    (tmp_path / "without.json").write_text(json.dumps({"setup": [], "tests": []}))
    (tmp_path / "data.json").write_text(json.dumps({"setup": [1]}))  # not a suite
    assert [has_setup(tmp_path / n) for n in ("with.json", "without.json", "data.json", "gone.json")] == [
        True,
        False,
        False,
        False,
    ]
    scopes = _FileScopes.__new__(_FileScopes)  # the scope rule alone (the scheduler needs live workers)
    scopes._root, scopes._grouped = tmp_path, {}
    assert scopes._split_scope("with.json::a") == scopes._split_scope("with.json::b") == "with.json"
    assert scopes._split_scope("without.json::a") == "without.json::a"
    assert scopes._split_scope("test_x.py::test_a") == "test_x.py::test_a"  # everything else: test by test


def test_repeated_test_reports_k_of_n(pytester: pytest.Pytester) -> None:
    flaky = {
        "id": "flaky",
        "runs": 4,
        "minPass": 0.5,
        "pipeline": [{"block": "MockData", "config": {"data": {"a": 1}}, "output": "d"}],
        "assertions": {"d.a": 2},
    }
    write(pytester, "suite", flaky)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*runs: 0/3 passed*stopped after 3 of 4 runs*"])  # the first runs decide


def test_semantictest_run_fixture_and_databus(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
def test_run(semantictest_run, databus):
    result = semantictest_run({"pipeline": [{"block": "MockData", "config": {"data": {"x": 3}}, "output": "d"}],
                               "assertions": {"d.x": 3}})
    assert result.passed
    assert result.verdict.bus["d"] == {"x": 3}
    databus.set("a", {"b": [1, 2]})
    assert databus.get("a.b[1]") == 2
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_semantictest_run_async(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.asyncio
async def test_run(semantictest_run):
    result = await semantictest_run.arun({"pipeline": [{"block": "MockData", "config": {"data": [1, 2]}, "output": "d"}],
                                          "assertions": {"d": [1, 2]}})
    assert result.passed
"""
    )
    pytester.runpytest("-p", "asyncio").assert_outcomes(passed=1)
