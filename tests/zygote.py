"""The fork server behind ``tests/forked.py``: a warm interpreter that forks one child per pytest run.

Run by path from an empty folder (``runpy.run_path``, so ``tests/`` is not on ``sys.path``); it
imports nothing of the suite's, so a run's own ``tests`` package is not shadowed. It imports pytest,
this plugin, its formats and openai by running one collect-only session over a folder of one spec
per format (the way a real run imports them: the plugins' modules through pytest's assertion
rewriter), freezes its heap, and serves the connections to its Unix socket (:func:`main`):

- on connecting, ``{"ready": pid, "environ": {...}}``;
- ``{"id", "args", "code", "unbuffered", "cwd", "env", "new_session", "fork_xdist_workers",
  "zygote"}`` with three file descriptors (stdin, stdout, stderr): it forks, answers ``{"id",
  "pid"}``, and the child becomes ``python -m pytest *args`` in ``cwd`` with ``env``
  (:func:`become`), or with ``code`` ``python [-u] -c code`` (an xdist worker's bootstrap);
- each child's end, to the connection that asked for it: ``{"exit": pid, "code": returncode}``
  (``-N`` for a signal, as Popen has it).

It exits when the process that started it is gone (or on SIGTERM); its running children go on as
any orphaned process would.
"""

from __future__ import annotations

import gc
import io
import json
import os
import runpy
import select
import signal
import socket
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

# One file per format the plugin collects: collecting them imports each format's loader.
_WARM_FILES = {
    "pytest.ini": "[pytest]\n",
    "w.json": '{"name": "w", "tests": []}\n',
    "w.highbar.yaml": "agent: {}\n",
    "w.md": "---\nname: w\n---\n# w\n",
    "w.jsonl": '{"id": "w", "input": "hi"}\n',
}
_READY_FD = os.dup(1)  # where it says it is ready (stdout, before the warm-up's output goes to /dev/null)
_OWN_PATH = os.getcwd()  # the empty folder it runs in (``''`` on ``sys.path``): no child sees it


def _warm_up() -> None:
    """Import what a pytest run of this suite's specs imports, with pytest's own machinery."""
    import pytest

    with tempfile.TemporaryDirectory() as folder:
        for name, text in _WARM_FILES.items():
            Path(folder, name).write_text(text)
        # Every installed plugin loads (a module imported otherwise, as httpx imports anyio, would
        # make a child's pytest warn that it cannot rewrite it). Collection errors are expected:
        # the files only have to reach their loaders.
        pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", folder])
    import openai  # noqa: F401  (the judge client: ~0.4 s of every run that calls one)


def _base_path() -> list[str]:
    """``sys.path`` as a child starts it from: without this script's folder and ``PYTHONPATH``."""
    own = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    return [p for p in sys.path if p and os.path.abspath(p) != _OWN_PATH and os.path.abspath(p) not in own]


def serve(listener: socket.socket, owner: int) -> dict[str, Any] | None:
    """Answer every connection's requests until ``owner`` (a pid) is gone (``None``); in a forked
    child, its request. Each child's end goes to the connection that asked for it."""
    # (imported here, after the warm-up: imported before it, the package would bypass pytest's
    # rewriter, and every child's pytest would warn that it cannot rewrite it)
    from pytest_semantictest.agents.procs import pid_alive

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for the runs (become() resets it)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    clients: list[socket.socket] = []
    asked_by: dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([listener, wake_r, *clients], [], [], 1.0)
        if not pid_alive(owner):  # (a zombie owner is gone too)
            return None
        if wake_r in ready:
            os.read(wake_r, 512)
            _reap(asked_by)
        if listener in ready:
            client, _ = listener.accept()
            client.send(json.dumps({"ready": os.getpid(), "environ": dict(os.environ)}).encode())
            clients.append(client)
        for client in [c for c in clients if c in ready]:
            data, fds, _, _ = socket.recv_fds(client, 1 << 20, 3)
            if not data:
                clients.remove(client)
                client.close()
                continue
            request = json.loads(data)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                for fd in (wake_r, wake_w):
                    os.close(fd)
                for sock in (listener, *clients):
                    sock.close()
                return {**request, "fds": fds}
            for fd in fds:
                os.close(fd)
            asked_by[pid] = client
            client.send(json.dumps({"id": request["id"], "pid": pid}).encode())


def _reap(asked_by: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        client = asked_by.pop(pid, None)
        if client is not None and client.fileno() != -1:
            try:
                client.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}).encode())
            except OSError:
                pass  # that client is gone


def become(request: dict[str, Any], base_path: list[str]) -> None:
    """Turn this forked child into ``python -m pytest *args`` as a fresh interpreter would start it."""
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(request["fds"]):
        os.dup2(fd, target)
    for fd in set(request["fds"]) - {0, 1, 2}:
        os.close(fd)
    if request["new_session"]:
        os.setsid()
    env: dict[str, str] = request["env"]
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(env)
    extra = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = ["" if request["code"] is not None else os.getcwd(), *extra, *base_path]
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
    _fresh_stdio(env, unbuffered=request["unbuffered"] or bool(env.get("PYTHONUNBUFFERED")))
    sys.argv = ["-c"] if request["code"] is not None else ["-m", *request["args"]]  # (runpy puts __main__.py first)
    if request.get("fork_xdist_workers"):
        _fork_xdist_workers(request["zygote"])


def _fork_xdist_workers(path: str) -> None:
    """This run's xdist workers are forked by the zygote at ``path`` too (``forked.xdist_workers``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_suite_forked", Path(__file__).with_name("forked.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.ZYGOTE_PATH = path
    module.active = module.xdist_workers()  # (kept: a context manager collected would undo it)
    module.active.__enter__()  # for the rest of this process


def _fresh_stdio(env: dict[str, str], unbuffered: bool) -> None:
    """New ``sys.stdin/stdout/stderr`` on fds 0-2 (``unbuffered``: as ``-u`` or ``PYTHONUNBUFFERED``)."""
    encoding = (env.get("PYTHONIOENCODING") or "utf-8").split(":")[0]

    def stream(fd: int, mode: str, errors: str, line: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: Any = raw if unbuffered and mode == "w" else (
            io.BufferedWriter(raw) if mode == "w" else io.BufferedReader(raw))
        return io.TextIOWrapper(buffered, encoding=encoding, errors=errors,
                                line_buffering=line or raw.isatty(), write_through=unbuffered)

    sys.stdin = sys.__stdin__ = stream(0, "r", "strict", False)
    sys.stdout = sys.__stdout__ = stream(1, "w", "strict", False)
    sys.stderr = sys.__stderr__ = stream(2, "w", "backslashreplace", True)


def main() -> None:
    """``zygote.py PATH OWNER``: listen on the Unix socket ``PATH`` while the process ``OWNER`` lives;
    one line on stdout says it is ready (or why it is not)."""
    path, owner = sys.argv[1], int(sys.argv[2])
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    try:
        _warm_up()
        if threading.active_count() != 1:
            raise RuntimeError(f"threads left after warm-up: {threading.enumerate()}")
    except BaseException as error:  # noqa: BLE001  (told to the client, which fails the test with it)
        os.write(_READY_FD, f"warm-up failed: {error!r}\n".encode())
        raise
    base_path = _base_path()
    # Out of the collector's way: a child's collections would walk (and so copy, page by page) all
    # of it; a trivial run took 0.2 s of CPU instead of 0.06. (The plugin's own freeze, gc_freeze.py,
    # leaves a process that froze objects alone: tests/test_gc_freeze.py runs a fresh interpreter.)
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    os.write(_READY_FD, b"ready\n")
    os.close(_READY_FD)
    request = serve(listener, owner)
    if request is None:
        listener.close()
        os.unlink(path)
        return
    become(request, base_path)
    if request["code"] is not None:
        exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    else:
        runpy.run_module("pytest", run_name="__main__", alter_sys=True)  # as ``python -m pytest`` runs it


if __name__ == "__main__":
    main()
