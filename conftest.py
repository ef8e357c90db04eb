"""Root conftest: pytester for the plugin's own tests (pytest_plugins must live here).

In-process pytester runs (``pytester.runpytest``, ``inline_run``) drop every module first imported
during the inner run, so the next run imports a second copy (httpx's map of httpcore's exceptions
then misses the new classes: a refused connection escapes as a raw error). A plugin given to each
run (``inline_run``'s public ``plugins``) notes, as the inner session ends, the modules it imported
from outside the test's own folder, and so does the teardown of each test that uses pytester (its
snapshot drops what the test imported); they go back into ``sys.modules`` after the run and after
each test, so every other module has one copy of its classes for the whole session.

The plugin keeps a little module-level state (blocks registered from a ``conftest.py``, loaded
conversation scripts, whether signals unwind the session): each in-process run starts from the
state the plugin has after import and leaves the outer session's state as it found it.

Inner runs leave out the pytest plugins they do not use (``tests.helpers.without_unused_plugins``).
Subprocess runs (``runpytest_subprocess``) and xdist workers are plain fresh interpreters.
"""

from __future__ import annotations

import functools
import gc
import os
import signal
import sys
from collections.abc import Callable, Generator, Iterator
from types import ModuleType
from typing import Any

import pytest

from pytest_semantictest import plugin as semantictest_plugin
from pytest_semantictest.agents import cleanup
from pytest_semantictest.blocks import registry
from pytest_semantictest.checks import conversation
from tests.helpers import HTML_PLUGINS, without_unused_plugins, writes_html_report

pytest_plugins = ["pytester"]
_KEEP = pytest.StashKey[Callable[[ModuleType], bool]]()
_KEPT: dict[str, ModuleType] = {}
"""Modules first imported by an in-process run from outside its test's folder (:class:`_KeepImports`)."""


def _in_process_only(args: tuple[Any, ...]) -> tuple[tuple[str, ...], list[object]]:
    """What an in-process run adds to its arguments, and the plugins it registers itself:

    - no plugin autoloading: this plugin is registered as the module it is (its entry point's), and a
      run that writes an HTML report loads pytest-html by name. Autoloading read every installed
      distribution's entry points and, to mark their modules for assertion rewriting, its file list:
      about 20 ms a run here, some 5 s of CPU over the suite. (Those modules are imported already.)
    - the plugin's collector freeze (``gc_freeze.py``) left out: this process froze its own collection
      (:func:`pytest_collection`), so the plugin would leave the collector alone anyway, but only after
      ``gc.get_freeze_count()``, which walks every frozen object (another ~20 ms a run).

    Not under ``-n``: xdist passes the run's arguments on to its workers, fresh interpreters that load
    their plugins as a user's run does and keep the freeze."""
    if "-n" in args:
        return (), []
    html = tuple(a for name in HTML_PLUGINS for a in ("-p", name)) if writes_html_report(args) else ()
    return ("--disable-plugin-autoload", *html, "-p", "no:semantictest-gc"), [semantictest_plugin]


def pytest_configure(config: pytest.Config) -> None:
    """SIGINT handled, also when this session started with it ignored (a command a shell script put in
    the background, ``cmd &``): the processes the tests start inherit an ignored signal, and every
    Ctrl-C test failed, its pytest never seeing the signal. Set before xdist starts the workers, which
    inherit it (a handled signal is the default again in a new program)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(optionalhook=True)  # (pytest-xdist's hook: `-p no:xdist` runs without it)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: four workers per usable core. Much of this suite's time is waiting (agents that
    answer late on purpose, pytest processes it starts and waits for): with one worker per core the
    cores were idle half the time, and four per core kept them busy (docs/development.md)."""
    return 4 * len(os.sched_getaffinity(0))


@pytest.hookimpl(tryfirst=True)  # (before xdist's, which makes "load" of an unset --dist)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n`` without ``--dist``: xdist's ``worksteal`` (a worker that runs out of tests takes half of the
    busiest worker's queue) rather than ``load`` (the tests handed out in batches of consecutive tests as
    workers ask): here, with the long tests in a few places, a ``load`` run ended with one worker running
    its last batch for a minute after the others had finished (tests/conftest.py also starts the slowest
    tests first, spread over the workers)."""
    numprocesses, dist = config.getoption("numprocesses", None), config.getoption("dist", None)
    if numprocesses and dist == "no":  # (both None under -p no:xdist)
        config.option.dist = "worksteal"


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """What collection builds (every test module, its items and their imports) lives until the end:
    no garbage collection while it is built, then out of the collector's way, so each full collection
    walks only what the tests make (about a tenth of each worker's CPU went to walking it again). The xdist
    controller runs no test: it does not import openai."""
    gc.disable()
    try:
        if hasattr(session.config, "workerinput") or not session.config.getoption("numprocesses", None):
            import openai  # noqa: F401  (every worker runs LLM tests: its ~0.7 s import here, frozen with the rest)

        return (yield)
    finally:
        gc.enable()
        gc.freeze()


def _plugins_own_blocks() -> dict[str, Any]:
    """The registered blocks the plugin registered itself (a module of it, e.g. the Yao hooks, on import)."""
    return {
        name: cls
        for name, cls in registry._registered.items()
        if str(getattr(cls, "__module__", "")).startswith("pytest_semantictest.")
    }


def _module_state() -> dict[str, Any]:
    return {
        "blocks": dict(registry._registered),
        "entry_points": registry._loaded_entry_points,
        "scripts": dict(conversation._SCRIPTS),
        "unwind": cleanup._unwind,
        "interrupted": list(cleanup._interrupted),
        "sigint": signal.getsignal(signal.SIGINT),
    }


def _set_module_state(state: dict[str, Any]) -> None:
    registry._registered.clear()
    registry._registered.update(state["blocks"])
    registry._loaded_entry_points = state["entry_points"]
    conversation._SCRIPTS.clear()
    conversation._SCRIPTS.update(state["scripts"])
    cleanup._unwind = state["unwind"]
    cleanup._interrupted[:] = state["interrupted"]
    if state["sigint"] is not None:
        signal.signal(signal.SIGINT, state["sigint"])


def _fresh_state() -> dict[str, Any]:
    return {
        "blocks": _plugins_own_blocks(),
        "entry_points": False,
        "scripts": {},
        "unwind": 0,
        "interrupted": [],
        "sigint": None,
    }


@functools.lru_cache(maxsize=None)
def _real(path: str) -> str:
    """``os.path.realpath``, once per path: every in-process run asks it for all ~2000 loaded modules."""
    return os.path.realpath(path)


def _outside(folder: str) -> Callable[[ModuleType], bool]:
    """Whether a module comes from outside ``folder`` (or from no file)."""
    prefix = os.path.join(os.path.realpath(folder), "")

    def keep(module: ModuleType) -> bool:
        try:
            where = getattr(module, "__file__", None) or next(
                iter(getattr(module, "__path__", None) or ()), None
            )
        except KeyError:  # a namespace package's path, which asks for its parent package (already dropped)
            return True
        return not isinstance(where, str) or not _real(where).startswith(prefix)

    return keep


class _KeepImports:
    """A plugin for one in-process run: as its session ends, the modules it imported from outside
    the test's folder go into :data:`_KEPT` (pytester then drops them from ``sys.modules``)."""

    def __init__(self, keep: Callable[[ModuleType], bool]) -> None:
        self.before = set(sys.modules)
        self.keep = keep

    def pytest_unconfigure(self) -> None:
        for name, module in list(sys.modules.items()):
            if name not in self.before and module is not None and self.keep(module):
                _KEPT.setdefault(name, module)


def _put_back_kept_modules() -> None:
    for name, module in _KEPT.items():
        sys.modules.setdefault(name, module)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    """After a test's fixtures (pytester restores ``sys.modules`` as it was before the test), the
    modules the test and its in-process runs imported from outside its folder are back: one copy of
    each for the whole session."""
    keep = item.stash.get(_KEEP, None)
    before = dict(sys.modules) if keep is not None else {}
    try:
        return (yield)
    finally:
        for name in before.keys() - sys.modules.keys():
            if (module := before[name]) is not None and keep is not None and keep(module):
                _KEPT.setdefault(name, module)
        _put_back_kept_modules()


@pytest.fixture(autouse=True)
def _fresh_plugin_state_per_inprocess_run(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every in-process pytester run of this test starts with the plugin's module state fresh and
    drops only the modules imported from the test's folder; every pytester run leaves out the plugins
    it does not use."""
    if "pytester" not in request.fixturenames:
        yield
        return
    pytester: pytest.Pytester = request.getfixturevalue("pytester")
    keep = request.node.stash[_KEEP] = _outside(str(pytester.path))
    inline_run: Callable[..., Any] = pytester.inline_run

    def isolated_inline_run(*args: Any, **kwargs: Any) -> Any:
        outer = _module_state()
        _set_module_state(_fresh_state())
        try:
            extra, plugins = _in_process_only(args)
            plugins = [*kwargs.pop("plugins", ()), *plugins, _KeepImports(keep)]
            return inline_run(*without_unused_plugins(args), *extra, *args, plugins=plugins, **kwargs)
        finally:
            _put_back_kept_modules()
            # by plugin modules first imported in this run: they stay imported
            imported = _plugins_own_blocks()
            _set_module_state(outer)
            for name, cls in imported.items():
                registry._registered.setdefault(name, cls)

    pytester.inline_run = isolated_inline_run  # type: ignore[method-assign]
    runpytest_subprocess: Callable[..., pytest.RunResult] = pytester.runpytest_subprocess

    def lean_subprocess_run(*args: Any, **kwargs: Any) -> pytest.RunResult:
        return runpytest_subprocess(*without_unused_plugins(args), *args, **kwargs)

    pytester.runpytest_subprocess = lean_subprocess_run  # type: ignore[method-assign]
    yield
