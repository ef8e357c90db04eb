"""pytest hooks: options, collection by file kind, fixtures, session lifecycle. Thin."""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import options

if TYPE_CHECKING:
    from .engine.session import Session
    from .report.redact import Redactor

_SUITE_HINT = re.compile(rb'"tests"\s*:\s*\[')


class Runtime:
    """Per-process state, created on first use so idle sessions pay nothing."""

    def __init__(self, config: pytest.Config) -> None:
        from .dotenv import environment
        from .engine.context import RunContext
        from .engine.session import Session

        rootdir = Path(str(config.rootpath))
        ctx = RunContext(options.settings(config), environment(rootdir), rootdir)
        self.config = config
        self.session: Session = Session(ctx)
        self.context = ctx
        self.concurrency: int = options.value(config, "concurrency")

    def run(self, coro: Any) -> Any:
        return self.session.run(coro)

    @cached_property
    def redactor(self) -> Redactor:
        from .report.redact import Redactor, secret_values

        return Redactor(secret_values(self.context.env))

    def differ(self, actual: Any, expected: Any) -> list[str] | None:
        for lines in self.config.hook.pytest_assertrepr_compare(
            config=self.config, op="==", left=actual, right=expected
        ):
            if lines:
                return list(lines)
        return None


_RUNTIME = pytest.StashKey[Runtime]()


def runtime(config: pytest.Config) -> Runtime:
    state = config.stash.get(_RUNTIME, None)
    if state is None:
        state = Runtime(config)
        config.stash[_RUNTIME] = state
    return state


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "semantictest: a test collected from a SemanticTest JSON suite")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_RUNTIME, None)
    if state is not None:
        state.session.close()


def _semantictest_json(file_path: Path) -> bool:
    try:
        raw = file_path.read_bytes()
    except OSError:
        return False
    if b'"tests"' not in raw:
        return False
    import json

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return bool(_SUITE_HINT.search(raw))
    return isinstance(data, dict) and isinstance(data.get("tests"), list)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".json" and _semantictest_json(file_path):
        from .formats.semantictest.loader import load_file
        from .nodes import SpecFile

        node = SpecFile.for_format(parent, file_path, load_file)
        node.add_marker("semantictest")
        return node
    return None


@pytest.fixture
def databus() -> Any:
    """A fresh DataBus, as a pipeline step sees it."""
    from .engine.databus import DataBus

    return DataBus()


@pytest.fixture
def semantictest_run(request: pytest.FixtureRequest) -> Any:
    """Run a SemanticTest suite (dict, JSON text or file path) and get verdicts by test id."""
    from .api import Runner

    return Runner(runtime(request.config))
