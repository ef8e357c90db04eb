"""Session hooks: open a clean session before each test execution, close it after.

A hook is a command line (shlex-split, run without a shell in ``cwd``, in its own process
group, killed if it outlives ``timeout_ms``; placeholders resolved argument by argument)
or ``{"python": "module:function"}``. The setup's result becomes ``{{session.*}}``: a
command prints it as a JSON object on its last line of output, a function returns a
mapping; ``headers`` in it are added to every request. Python hooks are imported and
called on one daemon thread, so a hook stuck past the timeout is abandoned, never joined.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, TypeVar, cast

from ..json_types import JSONObject, JSONValue
from ..shown import shorten
from ..threads import handled_signals_unblocked, start_daemon
from .config import AgentConfig, Hook
from .errors import SessionHookError
from .placeholders import PlaceholderError, Values, render

T = TypeVar("T")


@dataclass(frozen=True)
class HookContext:
    """What a hook knows about the execution it serves (same fields as highbar's)."""

    test_id: str
    test_name: str = ""
    spec_path: str = ""


class SessionHooks:
    """The config's ``session_setup`` / ``session_teardown``; no-ops when unset."""

    def __init__(self, cfg: AgentConfig) -> None:
        self.cfg = cfg
        self._timeout_s = cfg.timeout_ms / 1000
        self._functions: dict[str, Callable[..., object]] = {}
        self._worker: _Worker | None = None

    @property
    def active(self) -> bool:
        return self.cfg.session_setup is not None or self.cfg.session_teardown is not None

    def load(self) -> None:
        """Import the Python hooks (before any agent starts). Raises ``SessionHookError``."""
        for what, hook in (("setup", self.cfg.session_setup), ("teardown", self.cfg.session_teardown)):
            if isinstance(hook, Mapping) and what not in self._functions:
                target = str(hook.get("python", ""))
                self._functions[what] = self._in_worker(what, functools.partial(self._import, target, what))

    def setup(self, ctx: HookContext) -> JSONObject:
        """Open a session: ``{}`` without a setup hook. Raises ``SessionHookError``."""
        hook = self.cfg.session_setup
        if hook is None:
            return {}
        if isinstance(hook, Mapping):
            self.load()
            result = self._in_worker("setup", lambda: self._functions["setup"](ctx))
            if not isinstance(result, Mapping):
                raise SessionHookError(f"session.setup must return a mapping, got {type(result).__name__}")
            session = dict(result)
        else:
            session = _last_json_object(self._run(hook, "setup", ctx, {}))
        if "headers" in session and not isinstance(session["headers"], Mapping):
            raise SessionHookError("session.setup returned 'headers' that is not an object")
        for key, value in session.items():
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                raise SessionHookError(
                    f"session.setup returned a value that is not JSON: {key} is {type(value).__name__}"
                ) from None
        return session

    def teardown(self, ctx: HookContext, session: Mapping[str, JSONValue]) -> None:
        """Close the session. Raises ``SessionHookError``."""
        hook = self.cfg.session_teardown
        if hook is None:
            return
        if isinstance(hook, Mapping):
            self.load()
            self._in_worker("teardown", lambda: self._functions["teardown"](ctx, session))
        else:
            self._run(hook, "teardown", ctx, session)

    async def asetup(self, ctx: HookContext) -> JSONObject:
        return await asyncio.to_thread(self.setup, ctx)

    async def ateardown(self, ctx: HookContext, session: Mapping[str, JSONValue]) -> None:
        await asyncio.to_thread(self.teardown, ctx, session)

    def _import(self, target: str, what: str) -> Callable[..., object]:
        module_name, _, function_name = target.partition(":")
        if not module_name or not function_name:
            raise SessionHookError(f"session.{what}: python hook must be 'module:function', got {target!r}")
        cwd = str(self.cfg.cwd)
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
        try:
            module = importlib.import_module(module_name)
        except Exception as e:  # noqa: BLE001
            raise SessionHookError(
                f"session.{what}: cannot import '{module_name}': {type(e).__name__}: {e}"
            ) from None
        function: Callable[..., object] | None = getattr(module, function_name, None)
        if function is None:
            raise SessionHookError(f"session.{what}: '{module_name}' has no '{function_name}'")
        if not callable(function):
            raise SessionHookError(f"session.{what}: '{target}' is not a function")
        return function

    def _in_worker(self, what: str, task: Callable[[], T]) -> T:
        if self._worker is None:
            self._worker = _Worker()
        finished, outcome = self._worker.call_within(task, self._timeout_s)
        if not finished:
            self._worker = None  # its thread stays stuck in the hook
            raise SessionHookError(f"session.{what} did not finish in {self._timeout_s:g}s (timeout)")
        if "error" in outcome:
            error = outcome["error"]
            if isinstance(error, SessionHookError):
                raise SessionHookError(self.cfg.redactor.text(str(error)))
            raise SessionHookError(
                self.cfg.redactor.text(f"session.{what} raised {type(error).__name__}: {error}")
            )
        return cast(T, outcome.get("result"))  # (what task returned)

    def _run(self, hook: Hook, what: str, ctx: HookContext, session: Mapping[str, JSONValue]) -> str:
        argv = _command(hook, what, Values(test_id=ctx.test_id, test_name=ctx.test_name, session=session))
        # Files, not pipes: a daemon the hook leaves behind could hold a pipe open forever.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = self._spawn(argv, what, out, err)
            self._wait(process, what)
            stdout, stderr = _read(out), _read(err)
        if process.returncode != 0:
            tail = "\n".join((stderr.strip() or stdout.strip()).splitlines()[-20:])
            raise SessionHookError(
                self.cfg.redactor.text(
                    f"session.{what} `{hook}` exited with code {process.returncode}"
                    + (f":\n{tail}" if tail else "")
                )
            )
        return stdout

    def _spawn(self, argv: list[str], what: str, out: IO[bytes], err: IO[bytes]) -> subprocess.Popen[bytes]:
        try:
            with handled_signals_unblocked():  # (this runs on a helper thread: threads.py)
                return subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    cwd=self.cfg.cwd,
                    start_new_session=True,
                )
        except OSError as e:
            raise SessionHookError(f"session.{what}: could not run '{argv[0]}': {e.strerror or e}") from None

    def _wait(self, process: subprocess.Popen[bytes], what: str) -> None:
        """Wait for the hook within its timeout; killed (its process group) on a timeout or an interrupt."""
        try:
            process.wait(timeout=self._timeout_s)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise SessionHookError(
                f"session.{what} did not finish in {self._timeout_s:g}s (timeout)"
            ) from None
        except BaseException:
            _kill(process)
            raise


def _command(hook: Hook, what: str, values: Values) -> list[str]:
    """The hook's command line, its placeholders filled in."""
    try:
        argv = [_argument(render(token, values)) for token in shlex.split(str(hook))]
    except (PlaceholderError, ValueError) as e:
        raise SessionHookError(f"session.{what}: {e}") from None
    if not argv:
        raise SessionHookError(f"session.{what}: empty command")
    return argv


class _Worker:
    """A daemon thread that runs Python hooks (imports and calls) one at a time."""

    def __init__(self) -> None:
        self._tasks: queue.Queue[tuple[Callable[[], object], dict[str, object], threading.Event]] = (
            queue.Queue()
        )
        start_daemon(self._serve, "semantictest-session")

    def call_within(self, task: Callable[[], object], timeout: float) -> tuple[bool, dict[str, object]]:
        """Run ``task`` on the hook thread; whether it finished within ``timeout`` s, and its outcome."""
        outcome: dict[str, object] = {}
        done = threading.Event()
        self._tasks.put((task, outcome, done))
        return done.wait(timeout), outcome

    def _serve(self) -> None:
        while True:
            task, outcome, done = self._tasks.get()
            try:
                with handled_signals_unblocked():  # a user's hook: what it starts must take signals
                    outcome["result"] = task()
            except BaseException as e:  # SystemExit from a hook is the hook's failure too  # noqa: BLE001
                outcome["error"] = e
            done.set()


def _last_json_object(stdout: str) -> JSONObject:
    lines = [line for line in stdout.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    try:
        value = json.loads(last)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        shown = shorten(last, 200)
        raise SessionHookError(
            f"session.setup must print a JSON object as its last line of output, got {shown!r}"
        )
    return value


def _argument(value: JSONValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    data: bytes = file.read()
    return data.decode("utf-8", errors="replace")


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
