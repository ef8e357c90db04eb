"""``python -m pytest`` processes for the suite, forked from a warm interpreter (``tests/zygote.py``).

A pytest process the suite starts paid ~0.4-0.8 s of CPU before its first test: the interpreter,
pytest and its plugins, pydantic, httpx, this plugin's formats, openai where a run calls a judge.
Forked from an interpreter that imported all that once (under xdist one zygote for the session,
started by the controller: :func:`start_shared`), a trivial run costs ~0.06 s. It is still a process
of its own: its own pid, file descriptors, signals, exit status and environment. The xdist workers
of a forked run and of an in-process one (the root conftest) are forked too (:func:`xdist_workers`);
the other processes it starts (agents, CLIs) are fresh interpreters as ever.

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
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

ZYGOTE = Path(__file__).with_name("zygote.py")
ENABLED = os.environ.get("SEMANTICTEST_TEST_FORK", "1") != "0"
_SHARED = "SEMANTICTEST_TEST_ZYGOTE"
_TURN = 0.05  # seconds a thread waits for the server's next message while it holds the lock
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


ZYGOTE_PATH = os.environ.get(_SHARED, "")
"""The socket of the session's shared zygote, if there is one (:func:`start_shared`)."""


class Zygote:
    """A zygote this process started: it lives as long as this process (or until :meth:`stop`)."""

    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SESSION_VARIABLES)}
        # Run by path from an empty folder: nothing of tests/ (its secrets/ package would shadow the
        # stdlib's) or of the repository is importable there.
        self.home = tempfile.mkdtemp(prefix="suite-zygote-")
        self.path = os.path.join(self.home, "socket")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import runpy, sys; del sys.argv[0]; runpy.run_path(sys.argv[0], run_name='__main__')",
             str(ZYGOTE), self.path, str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=self.home)
        assert self.proc.stdout is not None
        try:
            if not select.select([self.proc.stdout], [], [], 120)[0]:
                raise RuntimeError("the test suite's fork server did not start within 120 s")
            said = self.proc.stdout.readline().decode().strip()
            if said != "ready":
                raise RuntimeError(f"the test suite's fork server did not start: {said or self.proc.wait()}")
        except BaseException:
            self.stop()
            raise
        self.proc.stdout.close()
        atexit.register(self.stop)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)


def start_shared() -> Zygote:
    """Start a zygote for this session's processes (xdist workers inherit :data:`_SHARED`)."""
    zygote = Zygote()
    os.environ[_SHARED] = zygote.path
    global ZYGOTE_PATH
    ZYGOTE_PATH = zygote.path
    return zygote


class _Connection:
    """This process's connection to a zygote."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)
        self.lock = threading.Lock()
        self.exits: dict[int, int] = {}
        self.pids: dict[int, int] = {}
        self.next_id = 0
        hello = self._receive(timeout=60)
        if "ready" not in hello:
            raise RuntimeError(f"the test suite's fork server at {path} did not answer")
        self.pid: int = hello["ready"]
        self.startup = _startup_variables(hello["environ"])

    def _receive(self, timeout: float | None) -> dict[str, Any]:
        if not select.select([self.sock], [], [], timeout)[0]:
            return {}
        data = self.sock.recv(1 << 20)
        if not data:
            raise RuntimeError(f"the test suite's fork server at {self.path} ended")
        message: dict[str, Any] = json.loads(data)
        if "exit" in message:
            self.exits[message["exit"]] = message["code"]
        elif "pid" in message:
            self.pids[message["id"]] = message["pid"]
        return message

    def spawn(self, request: dict[str, Any], fds: tuple[int, int, int]) -> int:
        """Fork a child for ``request`` (``zygote.serve``) with ``fds`` as its stdin, stdout, stderr."""
        with self.lock:
            self.next_id += 1
            ident = self.next_id
            socket.send_fds(self.sock, [json.dumps({**request, "id": ident}).encode()], list(fds))
        while True:
            with self.lock:
                if ident in self.pids:
                    return self.pids.pop(ident)
                self._receive(timeout=_TURN)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit code once it ended (``None`` after ``timeout`` seconds: 0 polls). The
        lock is held a turn at a time: an xdist controller waits for its workers in several threads."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self.lock:
                if pid in self.exits:
                    return self.exits.pop(pid)
                left = _TURN if deadline is None else min(_TURN, deadline - time.monotonic())
                if left < 0:
                    return None
                self._receive(left)


_connection: tuple[int, _Connection] | None = None
_own: Zygote | None = None


def _the_server() -> _Connection:
    """This process's connection: to the session's shared zygote, else to one of its own, started
    at its first run (a process forked from this one connects again)."""
    global _connection, _own
    if _connection is None or _connection[0] != os.getpid():
        if not ZYGOTE_PATH and (_own is None or _own.proc.poll() is not None):
            _own = Zygote()
        _connection = (os.getpid(), _Connection(ZYGOTE_PATH or _own.path))  # type: ignore[union-attr]
        atexit.register(_connection[1].sock.close)  # (else: "ResourceWarning: unclosed socket" at exit)
    return _connection[1]


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
    """A forked ``python -m pytest *args`` (or, with ``code``, ``python [-u] -c code``): the parts of
    :class:`subprocess.Popen` the suite (and execnet, for an xdist worker) uses. Its own xdist workers
    are forked too, unless not ``fork_xdist_workers`` (a test that needs them as they are in a user's
    run: a fresh interpreter's ``/proc/<pid>/environ`` is its own, and its parent is the controller,
    which forwards an interrupt only to its own children)."""

    def __init__(self, argv: Sequence[object], args: list[str], *, code: str | None = None, unbuffered: bool = False,
                 cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
                 stdin: int | IO[Any] | None = None, stdout: int | IO[Any] | None = None,
                 stderr: int | IO[Any] | None = None, text: bool = False, start_new_session: bool = False,
                 fork_xdist_workers: bool = True) -> None:
        self.args = list(argv)
        self.returncode: int | None = None
        self.stdin: IO[Any] | None = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None
        mine: list[int] = []
        fds: list[int] = []
        for stream, default in ((stdin, 0), (stdout, 1), (stderr, 2)):
            if stream == subprocess.PIPE:
                read, write = os.pipe()
                theirs, ours = (read, write) if default == 0 else (write, read)
                fds.append(theirs)
                mine.append(theirs)
                pipe = os.fdopen(ours, ("w" if default == 0 else "r") + ("" if text else "b"))
                setattr(self, ("stdin", "stdout", "stderr")[default], pipe)
            elif stream == subprocess.STDOUT:
                fds.append(fds[1])
            else:
                fd, close = _fd(stream, default)
                fds.append(fd)
                if close:
                    mine.append(fd)
        server = _the_server()
        request = {"args": args, "code": code, "unbuffered": unbuffered, "cwd": os.fspath(cwd or os.getcwd()),
                   "env": dict(os.environ if env is None else env), "new_session": start_new_session,
                   "fork_xdist_workers": fork_xdist_workers and code is None, "zygote": server.path}
        try:
            self.pid = server.spawn(request, (fds[0], fds[1], fds[2]))
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
        if self.stdin is not None and not self.stdin.closed:
            self.stdin.close()
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
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


Process = Forked | subprocess.Popen[Any]
"""What :func:`Popen` gives."""


def Popen(argv: Sequence[object], **kwargs: Any) -> Process:  # noqa: N802 (Popen's name)
    """:class:`Forked` for ``python -m pytest ...``, :class:`subprocess.Popen` for anything else (or
    with ``SEMANTICTEST_TEST_FORK=0``)."""
    args = pytest_argv(argv)
    env = kwargs.get("env")
    if args is None or not ENABLED or (_startup_variables(os.environ if env is None else env)
                                       != _the_server().startup):
        kwargs.pop("fork_xdist_workers", None)  # (a fresh interpreter's workers are fresh ones)
        return subprocess.Popen(argv, **kwargs)  # type: ignore[arg-type]
    return Forked(argv, args, **kwargs)


@contextmanager
def xdist_workers() -> Iterator[None]:
    """While it lasts, the xdist workers an xdist controller in this process starts (execnet's popen
    gateways: ``python -u -c <bootstrap>``, talking over stdin and stdout) are forked too."""
    from execnet import gateway_base, gateway_io

    original = gateway_io.Popen2IOMaster.__init__
    bootstrap = [sys.executable, "-u", "-c", gateway_io.popen_bootstrapline]

    def forked_gateway(self: Any, args: list[str], execmodel: Any) -> None:
        if args != bootstrap or _startup_variables(os.environ) != _the_server().startup:
            return original(self, args, execmodel)
        self.popen = worker = Forked(args, [], code=gateway_io.popen_bootstrapline, unbuffered=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        gateway_base.Popen2IO.__init__(self, worker.stdin, worker.stdout, execmodel=execmodel)

    gateway_io.Popen2IOMaster.__init__ = forked_gateway  # type: ignore[method-assign]
    try:
        yield
    finally:
        gateway_io.Popen2IOMaster.__init__ = original  # type: ignore[method-assign]


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
