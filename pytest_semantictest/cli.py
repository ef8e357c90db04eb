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
from typing import TYPE_CHECKING, TextIO

import pytest

from .errors import SpecError
from .runtime import runtime
from .spec_nodes import is_spec_item

if TYPE_CHECKING:
    from .formats.labels import Labelled
    from .json_types import JSONObject

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


def validate(paths: Sequence[str], out: TextIO | None = None) -> int:
    """Check spec files without running anything; 0 when all are valid, 2 when a file does not
    collect, else 1 when a test will ERROR on a problem in its spec."""
    out = out or sys.stdout
    plugin = _Validation([p for p in paths if not p.startswith("-")])
    captured = io.StringIO()
    args = ["-p", "semantictest", "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *paths]
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        code = pytest.main(args, plugins=[plugin])
    if code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR):
        text = captured.getvalue()
        errors = [line for line in text.splitlines() if line.startswith("ERROR:")]
        out.write("\n".join(errors) + "\n" if errors else text)
        return 2
    for path in sorted(plugin.files, key=_shown):
        error = plugin.files[path]
        if error is None:
            count = plugin.counts.get(path, 0)
            tests = f"{count} test{'' if count == 1 else 's'}"
            failing = plugin.test_errors.get(path, [])
            if not failing:
                out.write(f"ok  {_shown(path)} ({tests})\n")
                continue
            out.write(f"✗ {_shown(path)} ({tests}, {len(failing)} will ERROR)\n")
            out.writelines(
                f"  {line}\n"
                for text in failing
                for line in text.replace(str(path), _shown(path)).splitlines()
                if line.strip()
            )
            continue
        first, *more = _problem_lines(path, error)
        out.write(f"✗ {first}\n")
        out.writelines(f"  {line}\n" for line in more)
    for text in plugin.other_errors:
        out.write(f"✗ {text.strip()}\n")
    for path in plugin.not_specs:
        out.write(f"✗ {_shown(path)}: not a spec file of any format\n")
    if not plugin.files and not plugin.other_errors and not plugin.not_specs:
        where = " ".join(p for p in paths if not p.startswith("-")) or "the testpaths"
        out.write(f"no spec files found in {where}\n")
        return 2
    valid = (
        all(error is None for error in plugin.files.values())
        and not plugin.other_errors
        and not plugin.not_specs
    )
    return (1 if plugin.test_errors else 0) if valid else 2


# --------------------------------------------------------------------------- semantictest agreement


class _Agreement:
    """A pytest plugin that collects nothing: it asks the session's judge about each labelled example
    (with the session's LLM options and replay cache) and keeps the pairs (label, judge)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        self.results: list[tuple[str, bool, bool, float | None]] = []
        """``(name, label, judge passed, score)`` per example."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool:
        session.items = []
        try:
            self._judge_all(session.config)
        except SpecError as exc:  # the labels file: each problem names its line
            self.problem = exc.render()
        except Exception as exc:  # noqa: BLE001  said as one line (secrets masked), never a traceback
            self.problem = runtime(session.config).current_redactor().text(f"{self.path}: {exc}")
        return True

    def _judge_all(self, config: pytest.Config) -> None:
        import asyncio

        from .formats.labels import load_labels
        from .llm.judge_request import JudgeRequest

        def judge_rules(example: Labelled) -> str | None:
            try:
                JudgeRequest.from_inputs(example.inputs, example.config)
            except ValueError as exc:
                return str(exc)
            return None

        examples = load_labels(self.path, judge_rules)
        state = runtime(config)
        judge = state.judge
        if judge is None:
            raise RuntimeError(
                "no LLM judge is configured: set OPENAI_API_KEY, or --semantictest-llm-base-url "
                "(or use --semantictest-llm-cache=replay with a recorded cache)"
            )
        samples = state.context.settings.judge_samples

        async def ask(example: Labelled) -> JSONObject:
            answer: JSONObject = await judge.judge(
                JudgeRequest.from_inputs(example.inputs, example.config), samples=samples
            )
            return answer

        async def ask_all() -> list[JSONObject | BaseException]:
            return await asyncio.gather(*(ask(e) for e in examples), return_exceptions=True)

        answers = state.run(ask_all())
        failed = [(e, a) for e, a in zip(examples, answers) if isinstance(a, BaseException)]
        if failed:
            example, error = failed[0]
            raise RuntimeError(
                state.redactor.text(
                    f"{example.name} (line {example.line}): the judge gave no verdict: "
                    f"{error}" + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
                )
            )
        self.results = [
            (e.name, e.label, bool(a["passed"]), a.get("score"))
            for e, a in zip(examples, answers)
            if not isinstance(a, BaseException)
        ]


def agreement(path: str, args: Sequence[str], min_kappa: float | None, out: TextIO | None = None) -> int:
    """Judge every labelled example; print Cohen's kappa with its interval and the confusion counts.
    0, or 1 when the kappa's lower bound is below ``min_kappa`` or the kappa is undefined (a constant
    judge or labels of one class); 2 when nothing could be judged."""
    from .stats import cohen_kappa

    out = out or sys.stdout
    plugin = _Agreement(Path(path))
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        code = pytest.main(
            ["-p", "semantictest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *args], plugins=[plugin]
        )
    if code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR):
        errors = [line for line in captured.getvalue().splitlines() if line.startswith("ERROR:")]
        out.write("\n".join(errors or [captured.getvalue().strip()]) + "\n")
        return 2
    if plugin.problem is not None or not plugin.results:
        out.write(f"✗ {plugin.problem or f'{path}: no labelled examples'}\n")
        return 2
    found = cohen_kappa([(label, judged) for _, label, judged, _ in plugin.results])
    counts = found.counts
    kappa = (
        f"kappa {found.kappa:.2f} (95% CI {found.low:.2f} to {found.high:.2f})"
        if found.kappa is not None and found.low is not None and found.high is not None
        else f"kappa {found.undefined} (agreement beyond chance cannot be measured)"
    )
    out.write(
        f"judge agreement with {found.total} labelled examples in {path}:\n"
        f"  {kappa}; observed agreement {found.observed:.0%}\n"
        f"  labelled pass: judge passed {counts[True, True]}, judge failed {counts[True, False]}\n"
        f"  labelled fail: judge passed {counts[False, True]}, judge failed {counts[False, False]}\n"
    )
    for name, label, judged, score in plugin.results:
        if label != judged:
            shown = f", score {score:g}" if isinstance(score, (int, float)) else ""
            out.write(
                f"  disagrees: {name} (labelled {'pass' if label else 'fail'}, judge "
                f"{'passed' if judged else 'failed'}{shown})\n"
            )
    if min_kappa is not None and found.low is None:
        out.write(f"✗ --min-kappa {min_kappa:g}: the kappa is {found.undefined}; label both classes\n")
        return 1
    if min_kappa is not None and found.low is not None and found.low < min_kappa:
        out.write(f"✗ the kappa's lower bound {found.low:.2f} is below --min-kappa {min_kappa:g}\n")
        return 1
    return 0


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``semantictest``."""
    from . import schemas

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
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["init"]:  # its own options and questions (scaffold.py)
        from .scaffold import main as init

        return init(given[1:])
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
    source = schemas.named(args.name) if args.name else None
    if source is None:
        if args.name:
            sys.stderr.write(f"semantictest schema: no schema called {args.name!r}\n")
        (sys.stderr if args.name else sys.stdout).write(schemas.listing())
        return 2 if args.name else 0
    target = schemas.path(source.name)
    sys.stdout.write(f"{target}\n" if args.path else target.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
