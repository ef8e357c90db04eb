"""Console scripts; both run through pytest (``pytest.main``), never a loader of their own.

``semtest FILE... [--html] [--output PATH] [--debug]``: the SemanticTest CLI's command line mapped to
pytest (other arguments are passed on to pytest as they are).

``semantictest validate PATH... [pytest options]``: collect spec files of every format without running anything; one
line per file (``ok  specs/a.highbar.yaml (3 tests)`` or ``✗ specs/b.json:4: tests[0].id: ...``), then
the problems of a file's tests that will ERROR (``--collect-only`` lists the same); exit 0 when every
file is valid, 2 when a file does not collect (as ``highbar validate``), else 1 when a test will ERROR.
``semantictest schema NAME [--path]``: print a format's JSON Schema (or where the file is).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from .runtime import runtime

SEMTEST_DEFAULT_OUTPUT = "test-report.html"
"""The SemanticTest CLI's report name when ``--html`` comes without ``--output``."""


# --------------------------------------------------------------------------- semtest


def semtest_args(argv: Sequence[str], environ: dict[str, str] | None = None) -> list[str]:
    """The pytest command line for a ``semtest`` command line."""
    environ = dict(os.environ) if environ is None else environ
    parser = argparse.ArgumentParser(
        prog="semtest", description="Run SemanticTest suites with pytest (unknown arguments go to pytest).",
    )
    parser.add_argument("files", nargs="*", help="suite files or folders (default: pytest's testpaths)")
    parser.add_argument("--html", action="store_true", help=f"write an HTML report (default {SEMTEST_DEFAULT_OUTPUT})")
    parser.add_argument("--output", metavar="PATH", help="the HTML report's path (implies --html)")
    parser.add_argument("--debug", action="store_true",
                        help="show every test's pipeline trace, passed ones too (also LOG_LEVEL=DEBUG)")
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
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        report = yield
        from .nodes import SpecFile

        if isinstance(collector, SpecFile):
            self.files[collector.path] = report.longreprtext if report.failed else None
        elif report.failed:
            self.other_errors.append(report.longreprtext)
        return report

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from .nodes import SpecItem, known_errors

        for item in session.items:
            if isinstance(item, SpecItem):
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


def validate(paths: Sequence[str], out: Any = None) -> int:
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
            out.writelines(f"  {line}\n" for text in failing
                           for line in text.replace(str(path), _shown(path)).splitlines() if line.strip())
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
    valid = all(error is None for error in plugin.files.values()) and not plugin.other_errors and not plugin.not_specs
    return (1 if plugin.test_errors else 0) if valid else 2


# --------------------------------------------------------------------------- semantictest


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``semantictest``."""
    from . import schemas

    parser = argparse.ArgumentParser(prog="semantictest", description="pytest-semantictest tools (tests run with pytest)")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="check spec files of every format without running anything")
    check.add_argument("paths", nargs="*", default=[], help="files or folders (default: pytest's testpaths)")
    show = commands.add_parser("schema", help="print a format's JSON Schema (for editors)")
    show.add_argument("name", choices=[s.name for s in schemas.SCHEMAS])
    show.add_argument("--path", action="store_true", help="print where the schema file is instead")
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.command == "validate":  # other options (--semantictest-..., -c, --rootdir) go to pytest
        return validate([*args.paths, *rest])
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    target = schemas.path(args.name)
    sys.stdout.write(f"{target}\n" if args.path else target.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
