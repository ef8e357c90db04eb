"""Console scripts; both run through pytest (``pytest.main``), never a loader of their own.

``semtest FILE... [--html] [--output PATH] [--debug]``: the SemanticTest CLI's command line mapped to
pytest (other arguments are passed on to pytest as they are).

``semantictest validate PATH... [pytest options]``: collect spec files of every format without running anything; one
line per file (``ok  specs/a.highbar.yaml (3 tests)`` or ``✗ specs/b.json:4: tests[0].id: ...``), then
the problems of a file's tests that will ERROR (``--collect-only`` lists the same); exit 0 when every
file is valid, 2 when a file does not collect (as ``highbar validate``), else 1 when a test will ERROR.
``semantictest agreement LABELS [--min-kappa K] [pytest options]``: ask the LLM judge about labelled
examples and print its agreement with the labels (Cohen's kappa with its 95% interval, the counts).
``semantictest schema NAME [--path]``: print a format's JSON Schema (or where the file is).
``semantictest init``: write a first passing spec for an agent (``scaffold.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TextIO

import pytest

from .runtime import runtime
from .spec_nodes import is_spec_item

SEMTEST_DEFAULT_OUTPUT = "test-report.html"
"""The SemanticTest CLI's report name when ``--html`` comes without ``--output``."""


# --------------------------------------------------------------------------- semtest


def semtest_args(argv: Sequence[str], environ: dict[str, str] | None = None) -> list[str]:
    """The pytest command line for a ``semtest`` command line."""
    environ = dict(os.environ) if environ is None else environ
    parser = argparse.ArgumentParser(
        prog="semtest",
        description="Run SemanticTest suites with pytest (unknown arguments go to pytest).",
    )
    parser.add_argument("files", nargs="*", help="suite files or folders (default: pytest's testpaths)")
    parser.add_argument(
        "--html", action="store_true", help=f"write an HTML report (default {SEMTEST_DEFAULT_OUTPUT})"
    )
    parser.add_argument("--output", metavar="PATH", help="the HTML report's path (implies --html)")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show every test's pipeline trace, passed ones too (also LOG_LEVEL=DEBUG)",
    )
    known, rest = parser.parse_known_args(list(argv))
    args = ["-p", "semantictest", *known.files, *rest]
    if known.html or known.output:
        args += ["-p", "html", f"--html={known.output or SEMTEST_DEFAULT_OUTPUT}", "--self-contained-html"]
    if known.debug or environ.get("LOG_LEVEL", "").upper() == "DEBUG":
        args += ["-vv", "-rA", "--log-level=DEBUG"]
    return args


def semtest(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``semtest``: pytest's exit code (0 all passed, 1 a test failed, ...)."""
    return int(pytest.main(semtest_args(sys.argv[1:] if argv is None else argv)))


# --------------------------------------------------------------------------- semantictest validate


class _Validation:
    """A pytest plugin for ``--collect-only``: which spec files were collected, their tests and errors."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.named = {Path(p.split("::")[0]).resolve() for p in paths}
        self.files: dict[Path, str | None] = {}
        self.counts: dict[Path, int] = {}
        self.test_errors: dict[Path, list[str]] = {}
        self.other_errors: list[str] = []
        self.not_specs: list[Path] = []

    @staticmethod
    def _spec(path: Path, config: pytest.Config) -> bool:
        from .formats.detect import spec_format

        return spec_format(path, lambda: runtime(config).collect_context) is not None

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """Only spec files are collected (test modules are not imported)."""
        if collection_path.is_dir() or collection_path.resolve() in self.named:
            return None
        return None if self._spec(collection_path, config) else True

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        """A file named on the command line that is no spec file: reported, not an error of pytest's."""
        if file_path.resolve() in self.named and not self._spec(file_path, parent.config):
            if file_path not in self.not_specs:
                self.not_specs.append(file_path)
            return _Nothing.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makemodule(self, module_path: Path, parent: pytest.Collector) -> pytest.Collector:
        """A test module named on the command line is not imported either."""
        return _Nothing.from_parent(parent, path=module_path)

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        report = yield
        from .nodes import SpecFile

        if isinstance(collector, SpecFile):
            self.files[collector.path] = report.longreprtext if report.failed else None
        elif report.failed:
            self.other_errors.append(report.longreprtext)
        return report

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from .nodes import known_errors

        for item in session.items:
            if is_spec_item(item):
                self.counts[item.path] = self.counts.get(item.path, 0) + 1
        for item, error in known_errors(session.items):
            self.test_errors.setdefault(item.path, []).append(error)

    def found_nothing(self) -> bool:
        """Whether no file was found at all: no spec file, no collection error, no other file named."""
        return not self.files and not self.other_errors and not self.not_specs

    def every_file_collected(self) -> bool:
        """Whether every named file was a spec file and collected without an error."""
        if self.other_errors or self.not_specs:
            return False
        return all(error is None for error in self.files.values())


class _Nothing(pytest.File):
    def collect(self) -> list[pytest.Item]:
        return []


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def _problem_lines(path: Path, text: str) -> list[str]:
    """A collection error as lines that name the file as the user wrote it."""
    lines = [line for line in text.replace(str(path), _shown(path)).splitlines() if line.strip()]
    if lines and all(line.startswith(_shown(path)) for line in lines):  # a SpecError: one line a problem
        return lines
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]  # a traceback: its last E line
    return [f"{_shown(path)}: {(errors or lines or ['cannot be read'])[-1]}"]


def _quiet_pytest(args: list[str], plugin: object) -> tuple[pytest.ExitCode | int, str]:
    """Run pytest with ``plugin``, its terminal output captured: the exit code and that output."""
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        code = pytest.main(args, plugins=[plugin])
    return code, captured.getvalue()


def _pytest_refused(code: pytest.ExitCode | int) -> bool:
    """Whether pytest stopped before collecting (a usage or internal error): exit 2 for us."""
    return code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR)


def _write_collected(out: TextIO, plugin: _Validation, path: Path) -> None:
    """The lines of one spec file that collected: ``ok``, or the problems of tests that will ERROR."""
    count = plugin.counts.get(path, 0)
    tests = f"{count} test{'' if count == 1 else 's'}"
    failing = plugin.test_errors.get(path, [])
    if not failing:
        out.write(f"ok  {_shown(path)} ({tests})\n")
        return
    out.write(f"✗ {_shown(path)} ({tests}, {len(failing)} will ERROR)\n")
    out.writelines(
        f"  {line}\n"
        for text in failing
        for line in text.replace(str(path), _shown(path)).splitlines()
        if line.strip()
    )


def _write_uncollected(out: TextIO, path: Path, error: str) -> None:
    """The lines of a spec file that did not collect: its first problem, then the others indented."""
    first, *more = _problem_lines(path, error)
    out.write(f"✗ {first}\n")
    out.writelines(f"  {line}\n" for line in more)


def _write_files(out: TextIO, plugin: _Validation) -> None:
    """One entry per spec file (sorted as shown), then errors outside spec files and non-spec files."""
    for path in sorted(plugin.files, key=_shown):
        error = plugin.files[path]
        if error is None:
            _write_collected(out, plugin, path)
        else:
            _write_uncollected(out, path, error)
    for text in plugin.other_errors:
        out.write(f"✗ {text.strip()}\n")
    for path in plugin.not_specs:
        out.write(f"✗ {_shown(path)}: not a spec file of any format\n")


def _error_lines(text: str) -> list[str]:
    """pytest's own ``ERROR:`` lines in its captured output (a usage error names the option so)."""
    return [line for line in text.splitlines() if line.startswith("ERROR:")]


def validate(paths: Sequence[str], out: TextIO | None = None) -> int:
    """Check spec files without running anything; 0 when all are valid, 2 when a file does not
    collect, else 1 when a test will ERROR on a problem in its spec."""
    out = out or sys.stdout
    named = [p for p in paths if not p.startswith("-")]
    plugin = _Validation(named)
    args = ["-p", "semantictest", "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *paths]
    code, text = _quiet_pytest(args, plugin)
    if _pytest_refused(code):
        errors = _error_lines(text)
        out.write("\n".join(errors) + "\n" if errors else text)
        return 2
    _write_files(out, plugin)
    if plugin.found_nothing():
        where = " ".join(named) or "the testpaths"
        out.write(f"no spec files found in {where}\n")
        return 2
    if not plugin.every_file_collected():
        return 2
    return 1 if plugin.test_errors else 0


# --------------------------------------------------------------------------- semantictest agreement


def agreement(path: str, args: Sequence[str], min_kappa: float | None, out: TextIO | None = None) -> int:
    """Judge every labelled example; print Cohen's kappa with its interval and the confusion counts.
    0, or 1 when the kappa's lower bound is below ``min_kappa`` or the kappa is undefined (a constant
    judge or labels of one class); 2 when nothing could be judged."""
    from .judge_agreement import JudgeAgreement, write_agreement

    out = out or sys.stdout
    plugin = JudgeAgreement(Path(path))
    code, text = _quiet_pytest(
        ["-p", "semantictest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *args], plugin
    )
    if _pytest_refused(code):
        out.write("\n".join(_error_lines(text) or [text.strip()]) + "\n")
        return 2
    if plugin.problem is not None or not plugin.results:
        out.write(f"✗ {plugin.problem or f'{path}: no labelled examples'}\n")
        return 2
    return write_agreement(out, path, plugin.results, min_kappa)


def report(paths: Sequence[str], out: str, prices: Sequence[str]) -> int:
    """``semantictest report``: as ``merge``, 0 when every test passed (or was skipped), 1 when one failed,
    errored or passed unexpectedly (the page is written either way), 4 when an input or the output is
    unusable."""
    from .files import write_problem
    from .llm.limits import parse_prices
    from .merge import MergeError, load_jobs
    from .redact import Redactor, secret_values
    from .report.viewer import red, write

    target = Path(out)
    try:
        records = load_jobs([Path(p) for p in paths])
        table = parse_prices(list(prices))
        problem = write_problem(target)
        if problem is not None:
            raise ValueError(f"-o {problem}")
        write(target, records, Redactor(secret_values()), table, inputs=[Path(p) for p in paths])
    except (MergeError, ValueError, OSError) as exc:
        sys.stderr.write(f"semantictest report: {exc}\n")
        return 4
    sys.stdout.write(f"results viewer of {len(records)} tests in {target}\n")
    return 1 if red(records) else 0


# --------------------------------------------------------------------------- semantictest


def _parser() -> argparse.ArgumentParser:
    """The command line of ``semantictest`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="semantictest", description="pytest-semantictest tools (tests run with pytest)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="check spec files of every format without running anything")
    check.add_argument("paths", nargs="*", default=[], help="files or folders (default: pytest's testpaths)")
    agree = commands.add_parser(
        "agreement", help="how well the LLM judge agrees with labelled examples (Cohen's kappa)"
    )
    agree.add_argument("labels", help="a labels file (*.labels.jsonl: text, expected, label per line)")
    agree.add_argument(
        "--min-kappa",
        type=float,
        default=None,
        help="exit 1 when the kappa's 95%% lower bound is below this (a CI gate for a rubric)",
    )
    show = commands.add_parser("schema", help="print a format's JSON Schema (for editors)")
    show.add_argument("name", nargs="?", help="a format (without one: the list)")
    show.add_argument("--path", action="store_true", help="print where the schema file is instead")
    commands.add_parser("init", help="write a first spec that passes against your agent", add_help=False)
    join = commands.add_parser(
        "merge",
        help="one summary, results file and HTML report from a split run's "
        "per-job results files (docs/ci.md)",
    )
    join.add_argument(
        "results", nargs="+", help="the jobs' --semantictest-results files (or folders of *.jsonl)"
    )
    join.add_argument("-o", "--out", default=None, help="write the merged results here (a baseline file)")
    join.add_argument("--html", default=None, help="write one HTML report here")
    join.add_argument(
        "--history",
        action="store_true",
        help="the files are several runs of one suite: pool each test's runs into one record (a "
        "baseline history, docs/baseline.md) instead of refusing a test two files ran",
    )
    join.add_argument(
        "--price",
        action="append",
        default=[],
        help="MODEL=INPUT/OUTPUT, money per million tokens: the summary shows each model's cost",
    )
    view = commands.add_parser(
        "report",
        help="one self-contained HTML results viewer from results files (docs/reports.md)",
    )
    view.add_argument("results", nargs="+", help="--semantictest-results files (or folders of *.jsonl)")
    view.add_argument("-o", "--out", default="report.html", help="the HTML file to write (report.html)")
    view.add_argument(
        "--price",
        action="append",
        default=[],
        help="MODEL=INPUT/OUTPUT, money per million tokens: the header shows each model's cost",
    )
    return parser


def _schema(name: str | None, path_only: bool) -> int:
    """``semantictest schema [NAME] [--path]``: a format's schema, where it is, or the list of names."""
    from . import schemas

    source = schemas.named(name) if name else None
    if source is None:
        if name:
            sys.stderr.write(f"semantictest schema: no schema called {name!r}\n")
        (sys.stderr if name else sys.stdout).write(schemas.listing())
        return 2 if name else 0
    target = schemas.path(source.name)
    sys.stdout.write(f"{target}\n" if path_only else target.read_text(encoding="utf-8"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``semantictest``."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["init"]:  # its own options and questions (scaffold.py)
        from .scaffold import main as init

        return init(given[1:])
    parser = _parser()
    args, rest = parser.parse_known_args(given)
    if args.command == "validate":  # other options (--semantictest-..., -c, --rootdir) go to pytest
        return validate([*args.paths, *rest])
    if args.command == "agreement":  # the LLM options (--semantictest-llm-...) go to pytest
        return agreement(args.labels, rest, args.min_kappa)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "merge":
        from .merge import merge

        return merge(args.results, args.out, args.html, args.price, sys.stdout, sys.stderr, args.history)
    if args.command == "report":
        return report(args.results, args.out, args.price)
    return _schema(args.name, args.path)


if __name__ == "__main__":
    sys.exit(main())
