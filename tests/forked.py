"""``python -m pytest`` processes for the suite, forked from a warm interpreter (``tests/zygote.py``).

A pytest process the suite starts pays ~0.4-0.8 s of CPU before its first test: the interpreter,
pytest and its plugins, pydantic, httpx, this plugin's formats, openai where a run calls a judge.
Forked from an interpreter that imported all that once per suite worker, it pays ~0.1 s. It is still
a process of its own: its own pid, file descriptors, signals, exit status and environment (the
processes it starts, agents and xdist workers, are fresh interpreters as ever).

What it does not have of a fresh interpreter: imports already done (so a test of what a run imports,
or of its warnings, starts a real ``python``), a hash seed of its own, and its environment in
``/proc/<pid>/environ`` (the one it was forked with is there; its children's is theirs).

``SEMANTICTEST_TEST_FORK=0`` starts every run as a fresh interpreter.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

ZYGOTE = Path(__file__).with_name("zygote.py")
ENABLED = os.environ.get("SEMANTICTEST_TEST_FORK", "1") != "0"
_SESSION_VARIABLES = ("PYTEST_XDIST", "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
# The interpreter's variables a child takes on (``zygote.become``); any other ``PYTHON*`` variable is
# read at start-up only, so a run that sets it otherwise than the server's starts a fresh interpreter.
_CHILD_SETS = ("PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


def _startup_variables(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON") and k not in _CHILD_SETS}


def pytest_argv(argv: Sequence[object]) -> list[str] | None:
    """pytest's arguments if ``argv`` is ``python -m pytest ...`` of this interpreter, else ``None``."""
    args = [os.fspath(a) for a in argv]  # type: ignore[arg-type]
    if len(args) >= 2 and args[0] == sys.executable and args[1] == "-mpytest":
        return args[2:]
    if len(args) >= 3 and args[0] == sys.executable and args[1:3] == ["-m", "pytest"]:
        return args[3:]
    return None


class _Server:
    """This process's zygote: started at the first run, it ends when this process does."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SESSION_VARIABLES)}
        self.startup = _startup_variables(env)
        # Run by path from an empty folder: nothing of tests/ (its secrets/ package would shadow the
        # stdlib's) or of the repository is importable there.
        self.home = tempfile.mkdtemp(prefix="suite-zygote-")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import runpy, sys; del sys.argv[0]; runpy.run_path(sys.argv[0], run_name='__main__')", str(ZYGOTE),
             str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=env, cwd=self.home)
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.exits: dict[int, int] = {}
        self.pids: dict[int, int] = {}
        self.next_id = 0
        try:
            ready = self._receive(timeout=120)
            if "ready" not in ready:
                raise RuntimeError(f"the test suite's fork server did not start: {ready}")
        except BaseException:
            self.close()
            raise
        atexit.register(self.close)

    def _receive(self, timeout: float | None) -> dict[str, Any]:
        if not select.select([self.sock], [], [], timeout)[0]:
            return {}
        data = self.sock.recv(1 << 16)
        if not data:
            raise RuntimeError(f"the test suite's fork server ended (exit status {self.proc.poll()})")
        message: dict[str, Any] = json.loads(data)
        if "exit" in message:
            self.exits[message["exit"]] = message["code"]
        elif "pid" in message:
            self.pids[message["id"]] = message["pid"]
        return message

    def spawn(self, args: list[str], cwd: str, env: Mapping[str, str], fds: tuple[int, int, int],
              new_session: bool) -> int:
        with self.lock:
            self.next_id += 1
            request = {"id": self.next_id, "args": args, "cwd": cwd, "env": dict(env), "new_session": new_session}
            socket.send_fds(self.sock, [json.dumps(request).encode()], list(fds))
            while self.next_id not in self.pids:
                self._receive(timeout=None)
            return self.pids.pop(self.next_id)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit code once it ended (``None`` after ``timeout`` seconds: 0 polls)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            while pid not in self.exits:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not self._receive(left) and left is not None and left <= 0:
                    return None
            return self.exits.pop(pid)

    def close(self) -> None:
        self.sock.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.home, ignore_errors=True)


_server: tuple[int, _Server] | None = None


def _the_server() -> _Server:
    """This process's server (a process forked from this one starts its own)."""
    global _server
    if _server is None or _server[0] != os.getpid():
        _server = (os.getpid(), _Server())
    return _server[1]


def _fd(stream: int | IO[Any] | None, default: int) -> tuple[int, bool]:
    """A file descriptor for a Popen stream argument (and whether it is ours to close)."""
    if stream is None:
        return os.dup(default), True
    if stream == subprocess.DEVNULL:
        return os.open(os.devnull, os.O_RDWR), True
    if isinstance(stream, int):
        return stream, False
    return stream.fileno(), False


class Forked:
    """A forked ``python -m pytest``: the parts of :class:`subprocess.Popen` the suite uses."""

    def __init__(self, argv: Sequence[object], args: list[str], *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, stdin: int | IO[Any] | None = None,
                 stdout: int | IO[Any] | None = None, stderr: int | IO[Any] | None = None, text: bool = False,
                 start_new_session: bool = False) -> None:
        self.args = list(argv)
        self.returncode: int | None = None
        self.stdin = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None
        mine: list[int] = []
        fds: list[int] = []
        for stream, default in ((stdin, 0), (stdout, 1), (stderr, 2)):
            if stream == subprocess.PIPE and default != 0:
                read, write = os.pipe()
                fds.append(write)
                mine.append(write)
                pipe = os.fdopen(read, "r" if text else "rb")
                self.stdout, self.stderr = (pipe, self.stderr) if default == 1 else (self.stdout, pipe)
            elif stream == subprocess.STDOUT:
                fds.append(fds[1])
            else:
                fd, close = _fd(subprocess.DEVNULL if stream == subprocess.PIPE else stream, default)
                fds.append(fd)
                if close:
                    mine.append(fd)
        try:
            self.pid = _the_server().spawn(args, os.fspath(cwd or os.getcwd()), os.environ if env is None else env,
                                           (fds[0], fds[1], fds[2]), start_new_session)
        finally:
            for fd in mine:
                os.close(fd)

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = _the_server().exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = _the_server().exit_code(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[Any, Any]:
        """Read the pipes to their end, then wait (as Popen's, for a run whose output fits the pipes'
        reading here: both are read as they fill)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pipes = [p for p in (self.stdout, self.stderr) if p is not None and not p.closed]
        chunks: dict[int, list[bytes]] = {p.fileno(): [] for p in pipes}
        while pipes:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            for pipe in select.select(pipes, [], [], left)[0]:
                data = os.read(pipe.fileno(), 1 << 16)
                if data:
                    chunks[pipe.fileno()].append(data)
                else:
                    pipes.remove(pipe)
        outputs = []
        for pipe in (self.stdout, self.stderr):
            if pipe is None or pipe.closed:
                outputs.append(None)
                continue
            data = b"".join(chunks.get(pipe.fileno(), []))
            outputs.append(data if "b" in pipe.mode else data.decode().replace("\r\n", "\n").replace("\r", "\n"))
            pipe.close()
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return outputs[0], outputs[1]

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(15)

    def kill(self) -> None:
        self.send_signal(9)


Process = Forked | subprocess.Popen[Any]
"""What :func:`Popen` gives."""


def Popen(argv: Sequence[object], **kwargs: Any) -> Process:  # noqa: N802 (Popen's name)
    """:class:`Forked` for ``python -m pytest ...``, :class:`subprocess.Popen` for anything else (or
    with ``SEMANTICTEST_TEST_FORK=0``)."""
    args = pytest_argv(argv)
    env = kwargs.get("env")
    if args is None or not ENABLED or (_startup_variables(os.environ if env is None else env)
                                       != _the_server().startup):
        return subprocess.Popen(argv, **kwargs)  # type: ignore[arg-type]
    return Forked(argv, args, **kwargs)


def run(argv: Sequence[object], *, timeout: float | None = None, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """:func:`subprocess.run` with ``capture_output=True``, through :func:`Popen`."""
    kwargs.pop("capture_output", None)
    kwargs.pop("check", None)
    proc = Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(list(argv), proc.wait(), out, err)
