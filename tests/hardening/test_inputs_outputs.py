"""Files we read and write, attacked: a baseline or merge input nested 100,000 deep, a FIFO, a link to
``/dev/zero``, figures of the wrong type, an unknown outcome; a results path that is a folder, under
a file, on a place that cannot be written, or the baseline itself; a replay cache that cannot be
written or a short cache key. Each is one line naming the file, the place and what to do: a usage
error (exit 4) before any test runs, never a traceback, a hang or a silent pass."""

from __future__ import annotations

import io
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_semantictest.files import (
    OverwritesInput,
    UnreadableFile,
    json_value,
    read_regular,
    write_atomic,
    write_problem,
)
from pytest_semantictest.merge import merge
from pytest_semantictest.report.results_file import ResultsFileError, load
from tests.helpers import patience, run_pytest

SUITE = {
    "name": "s",
    "tests": [
        {
            "id": "t",
            "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "d"}],
            "assertions": {"d": 1},
        }
    ],
}
GOOD = {
    "id": "s.json::t",
    "results_version": 1,
    "outcome": "passed",
    "file": "s.json",
    "format": "semantictest",
}
DEEP = (
    '{"id": "s.json::t", "results_version": 1, "outcome": "passed", "x": '
    + "[" * 100_000
    + "]" * 100_000
    + "}"
)


def _line(**changes: object) -> str:
    return json.dumps({**GOOD, **changes}) + "\n"


BAD_RECORDS = {  # name -> (line, what the message says)
    "nested 100,000 deep": (DEEP + "\n", "nested more than 32 levels deep"),
    "runs a string": (_line(runs="passed"), "'runs' input should be a valid list (got 'passed')"),
    "NaN duration": (
        '{"id": "s.json::t", "results_version": 1, "outcome": "passed", "latency_ms": NaN}\n',
        "NaN",
    ),
    "infinite score": (_line(run_scores=[1e999]), "Infinity is not a number JSON allows"),
    "duration a string": (_line(run_durations_ms=["12"]), "'run_durations_ms.0'"),
    "llm_usage a list": (_line(llm_usage=[1, 2]), "'llm_usage' input should be a valid dictionary"),
    "unknown outcome": (_line(outcome="weird"), "'outcome' input should be 'passed'"),
    "unknown run outcome": (_line(runs=["passed", "maybe"]), "'runs.1'"),
    "not a record": ("[1, 2]\n", "is not a test's record (no 'id')"),
    "not JSON": ("{truncated\n", "not JSON"),
}


@pytest.mark.parametrize("name", sorted(BAD_RECORDS))
def test_a_bad_record_is_one_line_naming_file_line_and_field(name: str, tmp_path: Path) -> None:
    line, says = BAD_RECORDS[name]
    path = tmp_path / "r.jsonl"
    path.write_text(_line() + line)
    with pytest.raises(ResultsFileError) as caught:
        load(path, "baseline")
    message = str(caught.value)
    assert message.startswith(f"baseline {path}:2") and says in message and "\n" not in message


def _special(tmp_path: Path, kind: str) -> Path:
    if kind == "fifo":
        path = tmp_path / "fifo.jsonl"
        os.mkfifo(path)
        return path
    if kind == "link to /dev/zero":
        path = tmp_path / "zero.jsonl"
        path.symlink_to("/dev/zero")
        return path
    folder = tmp_path / "folder"  # a folder holding a link to /dev/zero
    folder.mkdir()
    (folder / "good.jsonl").write_text(_line())
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    return folder


@pytest.fixture
def bounded() -> Iterator[None]:
    """Fails the test instead of hanging the suite when it blocks (opening a FIFO, reading /dev/zero)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("still blocked after its deadline: a special file was opened or read")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, patience(120))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.usefixtures("bounded")
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "folder with a link to /dev/zero"])
def test_a_special_file_is_refused_before_a_byte_is_read(kind: str, tmp_path: Path) -> None:
    path = _special(tmp_path, kind)
    with pytest.raises(ResultsFileError, match="not a regular file"):
        load(path)
    target = path if path.is_file() or not path.is_dir() else path / "zero.jsonl"
    with pytest.raises(UnreadableFile, match="not a regular file"):
        read_regular(target, 1000)


def test_json_values_are_bounded_and_finite() -> None:
    assert json_value('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    for text, says in (
        ("[" * 70 + "]" * 70, "nested more than 64"),
        ("[Infinity]", "Infinity"),
        ("[NaN]", "NaN"),
    ):
        with pytest.raises(ValueError, match=says):
            json_value(text)


def _suite(pytester: pytest.Pytester) -> None:
    pytester.makefile(".json", s=json.dumps(SUITE))


@pytest.mark.usefixtures("bounded")
@pytest.mark.parametrize(
    "kind", ["fifo", "folder with a link to /dev/zero", "nested 100,000 deep", "runs a string"]
)
def test_a_baseline_that_cannot_be_used_is_a_usage_error_at_start(
    kind: str, pytester: pytest.Pytester
) -> None:
    _suite(pytester)
    if kind in BAD_RECORDS:
        path = pytester.path / "bad.jsonl"
        path.write_text(BAD_RECORDS[kind][0])
    else:
        path = _special(pytester.path, kind)
    result = run_pytest(pytester, "-p", "no:cacheprovider", f"--semantictest-baseline={path.name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "1 passed" not in text  # before any test ran
    result.stderr.fnmatch_lines(
        [f"ERROR: pytest-semantictest: --semantictest-baseline: baseline *{path.name}*"]
    )


def test_baseline_ids_reach_the_terminal_escaped(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    gone = {**GOOD, "id": "s.json::\x1b[2Jgone\x07"}
    (pytester.path / "old.jsonl").write_text(_line() + json.dumps(gone) + "\n")
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-baseline=old.jsonl")
    assert result.ret == 0
    out = result.stdout.str()
    assert "\x1b[2J" not in out and "\x07" not in out
    result.stdout.fnmatch_lines(
        ["gone: s.json::\\x1b[2Jgone\\x07 in the baseline, not collected in this run"]
    )


@pytest.mark.parametrize(
    "where, says",
    [
        ("folder", "folder is a folder: give a file name"),
        ("afile/r.jsonl", "afile is a file, so */afile/r.jsonl cannot be made under it"),
        ("/proc/r.jsonl", "/proc cannot be written*"),
        ("old.jsonl", "old.jsonl is also --semantictest-baseline: this run would replace the baseline*"),
        ("base/new.jsonl", "*new.jsonl is in the --semantictest-baseline folder*"),
    ],
)
def test_a_results_file_that_cannot_be_written_is_a_usage_error_at_start(
    where: str, says: str, pytester: pytest.Pytester
) -> None:
    _suite(pytester)
    (pytester.path / "folder").mkdir()
    (pytester.path / "afile").write_text("")
    (pytester.path / "old.jsonl").write_text(_line())
    (pytester.path / "base").mkdir()
    (pytester.path / "base" / "a.jsonl").write_text(_line())
    baseline = "base" if where.startswith("base/") else "old.jsonl"
    before = (pytester.path / "old.jsonl").read_text()
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        f"--semantictest-results={where}",
        f"--semantictest-baseline={baseline}",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "passed" not in result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: pytest-semantictest: --semantictest-results: *{says}"])
    assert (pytester.path / "old.jsonl").read_text() == before  # the baseline is never replaced


def test_the_results_file_is_written_whole(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-results=out/r.jsonl")
    assert result.ret == 0
    records, _ = load(pytester.path / "out" / "r.jsonl")
    assert list(records) == ["s.json::t"]
    assert not [p for p in (pytester.path / "out").iterdir() if p.name != "r.jsonl"]  # no temporary left


def test_a_short_cache_key_is_one_usage_error_at_start(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(pytester)
    monkeypatch.setenv("SEMANTICTEST_CACHE_KEY", "short-key")
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: pytest-semantictest: SEMANTICTEST_CACHE_KEY is set but shorter than 16*"]
    )
    out = result.stdout.str() + result.stderr.str()
    assert "short-key" not in out  # a key is never printed
    assert "Pluggy" not in out and "warning" not in out and "s.json" not in out  # at start, not in a teardown


def test_a_cache_folder_that_cannot_be_written_is_a_usage_error_at_start(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    (pytester.path / "afile").write_text("")
    result = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-llm-cache-dir=afile/cache")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*the LLM replay cache (--semantictest-llm-cache-dir, mode read-write) cannot be*"]
    )
    read_only = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-llm-cache-dir=afile/cache",
        "--semantictest-llm-cache=read",
    )
    assert read_only.ret == 0  # a cache only read is not written


def _merge(*args: str, out: str | None = None, html: str | None = None) -> tuple[int, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = merge(list(args), out, html, [], stdout, stderr)
    return code, stderr.getvalue()


def test_merge_fails_on_anything_it_cannot_count(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(_line(id="a::t"))
    for name, (line, says) in BAD_RECORDS.items():
        (tmp_path / "b.jsonl").write_text(line)
        code, err = _merge(str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"))
        assert code == 4 and says in err and err.count("\n") == 1, name


def test_merge_outputs_are_checked_before_reading_and_never_replace_an_input(tmp_path: Path) -> None:
    job = tmp_path / "job.jsonl"
    job.write_text(_line())
    (tmp_path / "afile").write_text("")
    cases = [
        ({"html": str(tmp_path)}, "--html: * is a folder: give a file name"),
        ({"out": str(tmp_path / "afile" / "m.jsonl")}, "-o: *afile is a file, so *"),
        ({"out": str(job)}, "-o: *job.jsonl is one of the results files merged*"),
        ({"out": str(tmp_path / "m"), "html": str(tmp_path / "m")}, "-o and --html name the same file*"),
    ]
    for outputs, says in cases:
        code, err = _merge(str(job), **outputs)
        assert code == 4 and err.count("\n") == 1 and "Traceback" not in err
        assert __import__("fnmatch").fnmatch(err.strip(), f"semantictest merge: {says}"), err
    assert job.read_text() == _line()
    code, err = _merge(str(job), out=str(tmp_path / "new" / "m.jsonl"), html=str(tmp_path / "new" / "r.html"))
    assert code == 0 and (tmp_path / "new" / "m.jsonl").read_text() == _line().replace('": ', '": ')


def test_write_atomic_refuses_an_input_and_a_folder(tmp_path: Path) -> None:
    given = tmp_path / "in.jsonl"
    given.write_text("kept")
    link = tmp_path / "link.jsonl"
    link.symlink_to(given)
    with pytest.raises(OverwritesInput):
        write_atomic(link, "lost", inputs=[given])
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path, "x")
    assert given.read_text() == "kept"
    assert write_problem(tmp_path / "new" / "deeper" / "f") is None
    assert write_problem(given / "f") == f"{given} is a file, so {given / 'f'} cannot be made under it"


@pytest.mark.parametrize("headers, part", [({"X-Note": "café"}, "value"), ({"X-Nöte": "plain"}, "name")])
def test_a_non_ascii_header_is_one_line_naming_the_header(headers: dict[str, str], part: str) -> None:
    from tests.helpers import run_one

    request = {"url": "http://127.0.0.1:9/x", "method": "GET", "headers": headers}
    verdict = run_one([{"block": "HttpRequest", "input": request, "output": "r"}], {"r.status": 200})
    text = str(verdict.error or "") + " ".join(str(f.message) + str(f.cause or "") for f in verdict.failures)
    name = next(iter(headers))
    assert f"HttpRequest header {ascii(name)[1:-1]!r}: its {part} holds a character that is not ASCII" in text
    assert "UnicodeEncodeError" not in text and "café" not in text


@pytest.mark.parametrize("kind", ["link to /dev/zero", "fifo", "too large"])
def test_a_replay_cache_entry_that_is_no_regular_file_is_an_error_naming_it(
    kind: str, tmp_path: Path
) -> None:
    from pytest_semantictest.llm import cache as cache_module
    from pytest_semantictest.llm.cache import CorruptEntry, ReplayCache

    cache = ReplayCache(tmp_path / "cache", "replay")
    target = cache.path("judge", "k" * 64)
    target.parent.mkdir(parents=True)
    if kind == "link to /dev/zero":
        target.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        with target.open("wb") as fh:  # sparse: no disk spent
            fh.truncate(cache_module.MAX_ENTRY_BYTES + 1)
    with pytest.raises(CorruptEntry) as caught:
        cache.get("judge", "k" * 64)
    said = "larger than 16 MB" if kind == "too large" else "not a regular file"
    assert str(target) in str(caught.value) and said in str(caught.value)
