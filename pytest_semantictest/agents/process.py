"""One agent: started and stopped by us (managed mode) or already running (attach mode).

Managed mode guarantees, as highbar does:

- the endpoint's port is free before we start (an old agent would answer in its place);
- output goes to a log file, never a pipe (a pipe nobody reads fills and freezes the agent);
- the agent leads its own process group, and stopping kills the group (``sh -c``, ``npm run``
  would otherwise leave the real server behind): SIGTERM, a grace period, SIGKILL;
- an agent that exits while starting is reported at once, with its exit code and log tail;
- a watchdog process stops the group if this process dies without stopping it (``watchdog.py``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..threads import handled_signals_unblocked, start_daemon
from ..trace_context import EXPORT_ENV
from . import cleanup, procs, watchdog
from .config import AgentConfig
from .errors import AgentStartError
from .mcp_proxy import ENV_VAR as MCP_PROXY_VAR
from .mcp_proxy import proxy_prefix
from .net import endpoint_address, health_status, listener, port_open
from .traces import TraceReader

if TYPE_CHECKING:
    import httpx

POLL_FIRST_S = 0.01
POLL_INTERVAL_S = 0.05
"""Readiness is polled after 10 ms, then twice as long each time up to 50 ms: an agent is often ready
within a tenth of a second, and a probe of a port nothing listens on yet costs little."""
HEALTH_PROBE_TIMEOUT_S = 2.0
ATTACH_HEALTH_TIMEOUT_S = 5.0
TAIL_LINES = 20
_TAIL_BYTES = 64 * 1024


class AgentProcess:
    """Start (``start``), attach to (``attach``) or ``stop`` the agent of ``config``."""

    def __init__(
        self, config: AgentConfig, *, register_cleanup: bool = True, users: Path | None = None
    ) -> None:
        """``users``: the state file listing the processes that share it (xdist), for its watchdog."""
        self.config = config
        self.log_path: Path | None = None
        self.traces_path: Path | None = None if config.managed else config.traces_path()
        self.pid: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._returncode: int | None = None
        self._register_cleanup = register_cleanup
        self._cleanup_token: int | None = None
        self._users = users
        self._watchdog: watchdog.Watchdog | None = None
        self._spawning = threading.Lock()  # a start in another thread (started ahead) and cancel()
        self._cancelled = False

    @property
    def pgid(self) -> int | None:
        """The process group (the agent leads its own session, so it equals ``pid``)."""
        return self.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once the agent has exited (None while it runs or before start)."""
        popen = self._popen
        if popen is None:
            return self._returncode
        if popen.returncode is None and not procs.pid_alive(popen.pid):
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=1)  # exited: let the reaper thread record it
        return popen.returncode

    @property
    def running(self) -> bool:
        return self._popen is not None and self._popen.returncode is None and procs.pid_alive(self._popen.pid)

    def open(self, *, observe: bool = False) -> None:
        """``start`` in managed mode, else ``attach``; ``observe``: tool calls will be checked."""
        if self.config.managed:
            self.start(require_hello=observe)
        else:
            self.attach(require_traces=observe)

    def start(
        self, *, require_hello: bool = False, on_spawn: Callable[[AgentProcess], None] | None = None
    ) -> None:
        """Start the agent and wait until it is ready. Raises ``AgentStartError``.

        ``on_spawn`` is called as soon as the process exists (before it is ready), so a record
        of it can be written that a reaper finds even if this process dies during startup.
        """
        cfg = self.config
        if cfg.start is None:
            raise AgentStartError("no start command: this agent is attached to, not started")
        if self._popen is not None:
            raise AgentStartError("the agent is already started")
        host, port = endpoint_address(cfg.endpoint)
        self._check_port_free(host, port)
        argv = self._argv(cfg.start)
        log = self._open_log()
        self.traces_path = self._new_trace_file()
        popen = self._spawn(argv, log)
        self.pid = popen.pid
        # Reap the agent the moment it exits, whoever stopped it (no zombie in our table).
        start_daemon(popen.wait, f"reap-{self.pid}")
        if self._register_cleanup:
            self._cleanup_token = cleanup.register(self.stop)
        try:
            if on_spawn is not None:
                on_spawn(self)
            self._wait_until_ready(host, port)
            if require_hello:
                self._wait_for_hello()
        except BaseException:
            self.stop()  # Ctrl-C during startup lands here too
            raise

    def _check_port_free(self, host: str, port: int) -> None:
        """An agent already on the port would answer in place of the one started here."""
        if port_open(host, port):
            who = listener(port)
            raise self._error(
                f"port {port} is already in use"
                + (f" by {who}" if who else "")
                + ": stop it first, or tests would talk to it instead of the agent started here"
            )

    def _argv(self, start: str) -> list[str]:
        """The start command as arguments (as given, or split as a shell would)."""
        try:
            argv = self.config.start_argv if self.config.start_argv is not None else shlex.split(start)
        except ValueError as e:
            raise self._error(f"start is not a valid command line: {e}") from None
        if not argv:
            raise self._error("start is an empty command")
        return argv

    def _spawn(self, argv: list[str], log: BinaryIO) -> subprocess.Popen[bytes]:
        """Run the agent in a process group of its own, output to ``log``, guarded by a watchdog; it is
        ``_popen`` before the spawn lock is let go (a ``cancel()`` waiting for it then stops it)."""
        cfg = self.config
        assert self.traces_path is not None
        # (with the OTLP receiver on, its exporter settings; the agent's own env may override them)
        env = {
            **os.environ,
            **EXPORT_ENV,
            **cfg.env,
            "HIGHBAR_TRACES_URL": str(self.traces_path),
            MCP_PROXY_VAR: proxy_prefix(str(self.traces_path)),  # its MCP tool calls become trace records
        }
        with (
            log,
            handled_signals_unblocked(),
            self._spawning,
        ):  # (the agent must take SIGTERM, whichever thread starts it)
            if self._cancelled:
                self._remove_traces()
                raise self._error("the session ended before the agent started")
            try:
                popen = self._popen = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=cfg.cwd,
                    env=env,
                    start_new_session=True,
                )
            except OSError as e:
                self._remove_traces()
                raise self._error(f"could not run '{argv[0]}': {e.strerror or e}") from None
            self._watchdog = watchdog.guard(
                popen.pid, cfg.stop_grace_s, self._users, None if cfg.keep_traces else self.traces_path
            )
        return popen

    def attach(self, *, require_traces: bool = False) -> None:
        """Check an already running agent answers. Raises ``AgentStartError``."""
        cfg = self.config
        if cfg.health is not None:
            status = health_status(cfg.health, ATTACH_HEALTH_TIMEOUT_S)
            if status is None:
                raise self._error(
                    f"health check {cfg.health} got no answer in {ATTACH_HEALTH_TIMEOUT_S:g}s; "
                    "in attach mode (no start command) the agent must already be running"
                )
            if status != 200:
                raise self._error(f"health check {cfg.health} answered {status}")
        else:
            host, port = endpoint_address(cfg.endpoint)
            if not port_open(host, port):
                raise self._error(
                    f"nothing answers at {host}:{port}; in attach mode (no start command) "
                    "the agent must already be running"
                )
        if require_traces:
            path = cfg.traces_path()
            if path is None:
                raise self._error("tool calls are checked but no trace file is configured (traces)")
            if not path.exists():
                raise self._error(
                    f"the trace file {path} does not exist, so no test could see what the agent does; "
                    "check traces (relative paths start at the invocation directory) or create it empty"
                )

    def cancel(self) -> None:
        """Stop a start under way in another thread (it raises ``AgentStartError`` within one poll), and
        the agent if it runs; no start happens after this."""
        with self._spawning:
            self._cancelled = True
        self.stop()

    def stop(self) -> None:
        """Stop the whole process group: SIGTERM, grace, SIGKILL. Idempotent; raises nothing but an
        interrupt, and that only after the group got SIGKILL and its trace file and watchdog are gone.

        Its last-chance cleanup stays registered until the group is gone: a SIGTERM's handler that
        runs meanwhile finishes the job (``cleanup``), the group being killed by then."""
        popen, self._popen = self._popen, None
        try:
            if popen is not None:
                with contextlib.suppress(Exception):
                    procs.stop_group(popen.pid, self.config.stop_grace_s)
                with contextlib.suppress(Exception):
                    self._returncode = popen.wait(timeout=2)
        finally:
            cleanup.unregister(self._cleanup_token)
            self._cleanup_token = None
            self._remove_traces()
            self.detach()

    def detach(self) -> None:
        """Let go of a running agent that another process still uses (xdist): its watchdog now
        watches that process (``users``)."""
        guard, self._watchdog = self._watchdog, None
        if guard is not None:
            guard.release()

    def trace_reader(self) -> TraceReader | None:
        """A reader for this agent's trace file (None in attach mode without ``traces``)."""
        return None if self.traces_path is None else TraceReader(self.traces_path)

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last ``lines`` lines of the agent's log (reading at most its last 64 KB)."""
        if self.log_path is None:
            return ""
        return tail_of(self.log_path, lines)

    def __enter__(self) -> AgentProcess:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wait_until_ready(self, host: str, port: int) -> None:
        cfg = self.config
        timeout_s = cfg.startup_timeout_ms / 1000
        deadline = time.monotonic() + timeout_s
        pause = POLL_FIRST_S
        from ..http_clients import sync_client  # httpx on the first start: collecting a spec needs none

        with sync_client(timeout=HEALTH_PROBE_TIMEOUT_S) as client:  # one client for every probe
            while True:
                popen = self._popen
                if popen is None or self._cancelled:  # cancel() stopped it
                    raise self._error("the session ended before the agent was ready")
                if _has_exited(popen):
                    raise self._exited()
                if self._answers(client, host, port):
                    time.sleep(0.01)  # `start` that backgrounds the agent exits right away
                    if self._cancelled:
                        continue  # (said at the top of the loop)
                    if _has_exited(popen):
                        raise self._exited()
                    return
                if time.monotonic() >= deadline:
                    raise self._not_ready(timeout_s, host, port)
                time.sleep(pause)
                pause = min(2 * pause, POLL_INTERVAL_S)

    def _answers(self, client: httpx.Client, host: str, port: int) -> bool:
        """The health check answers 200 (or, without one, the port accepts connections)."""
        if self.config.health:
            return health_status(self.config.health, HEALTH_PROBE_TIMEOUT_S, client) == 200
        return port_open(host, port)

    def _not_ready(self, timeout_s: float, host: str, port: int) -> AgentStartError:
        health = self.config.health
        waited = f"{health} to answer 200" if health else f"{host}:{port} to accept connections"
        return self._error(
            f"agent not ready after {timeout_s:g}s (waited for {waited})" + self._log_section()
        )

    def _wait_for_hello(self) -> None:
        assert self.traces_path is not None
        timeout = self.config.hello_timeout_s
        reader, deadline = TraceReader(self.traces_path), time.monotonic() + timeout
        while reader.wait_for_hello(min(0.25, max(0.0, deadline - time.monotonic()))) is None:
            if self._cancelled:
                raise self._error("the session ended before the agent was ready")
            if time.monotonic() < deadline:  # (in slices: a cancel() is seen within a quarter second)
                continue
            raise self._error(
                f"the agent answered, but wrote no hello to its trace file within {timeout:g}s: "
                "another process on the port, or its tracing SDK never started (it must read "
                "HIGHBAR_TRACES_URL)" + self._log_section()
            )

    def _exited(self) -> AgentStartError:
        assert self._popen is not None
        code = self._popen.wait()
        message = f"agent exited with code {code} before it was ready"
        if code == 0:
            message += (
                " (it exited cleanly: the start command probably launches the agent in the "
                "background; remove start and attach to the running agent instead)"
            )
        return self._error(message + self._log_section())

    def _error(self, message: str) -> AgentStartError:
        """The error, and for a started agent the command and the folder it ran in, after the first line."""
        cfg = self.config
        if cfg.start is not None:
            first, newline, rest = message.partition("\n")
            message = f"{first}\n  start: {cfg.start}\n  in folder: {cfg.cwd}{newline}{rest}"
        return AgentStartError(cfg.redactor.text(message))

    def _log_section(self) -> str:
        text = self.tail()
        if not text:
            return f"\n(no output in {self.log_path})"
        return f"\n--- last lines of {self.log_path} ---\n{text}"

    def _open_log(self) -> BinaryIO:
        base = self.config.log_path_base()
        stem = f"{self.config.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            base.mkdir(parents=True, exist_ok=True)
            path, n = base / f"{stem}.log", 1
            while True:
                try:
                    log = open(path, "xb")  # noqa: SIM115 - closed right after Popen
                    break
                except FileExistsError:
                    n += 1
                    path = base / f"{stem}-{n}.log"
        except OSError as e:
            raise self._error(f"cannot write the agent log in {base}: {e.strerror or e}") from None
        self.log_path = path
        return log

    def _new_trace_file(self) -> Path:
        directory = self.config.traces_dir
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(
            prefix="semantictest-traces-", suffix=".jsonl", dir=None if directory is None else str(directory)
        )
        os.close(fd)
        return Path(name)

    def _remove_traces(self) -> None:
        if self.config.managed and self.traces_path is not None and not self.config.keep_traces:
            with contextlib.suppress(OSError):
                self.traces_path.unlink()


def _has_exited(popen: subprocess.Popen[bytes]) -> bool:
    return popen.poll() is not None or popen.returncode is not None


def tail_of(path: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a text file (reading at most its last 64 KB)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - _TAIL_BYTES))
            data = f.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", errors="replace").splitlines()[-lines:])
