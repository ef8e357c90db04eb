"""Last-chance cleanup in this process: at exit and on SIGTERM / SIGHUP.

Agents run in their own session, so a terminal's Ctrl-C or a killed pytest never reaches
them. Whatever started one registers how to let go of it here; a normal stop unregisters.

While a pytest session runs (``unwind_on_signals(True)``), the first SIGTERM / SIGHUP raises
``Terminated`` (a ``KeyboardInterrupt``) in the main thread instead, as highbar turns them into
an exit: pytest unwinds as on Ctrl-C, every ``finally`` and atexit handler runs (pytest's own
temp-dir lock, the xdist state folder), and the exit status is 128 + the signal. A second one
cleans up at once and dies by the signal. ``unwind_on_signals(True, sigint_once=True)`` (xdist
workers) also makes every SIGINT after the first a no-op: the controller forwards a Ctrl-C to
its workers, which a terminal has often already delivered to them.

A SIGTERM / SIGHUP that does not unwind (one after the session, while the agents are being stopped,
or a second one) first kills every process group this process is stopping, and every later stop
skips its grace period (``procs.kill_stopping``): an agent that ignores SIGTERM is not left running
when the signal ends pytest during the agent's grace period. The first one after the session lets
its cleanup end (``finish_on_signals``).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

from . import procs

_callbacks: dict[int, Callable[[], None]] = {}
_lock = threading.RLock()  # a signal handler may run while this thread holds it
_ids = itertools.count(1)
_installed = False
_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None
"""A signal's handler as ``signal.signal`` returns it."""
_previous: dict[int, _Handler] = {}
_critical_depth = 0
_deferred: list[tuple[int, FrameType | None]] = []
_unwind = 0  # sessions (an in-process pytester run nests one) that asked for unwinding
_interrupted: list[int] = []  # the signals that already raised in this process
_finishing = 0  # sessions that ended and are cleaning up (``finish_on_signals``)
_late: list[int] = []  # a SIGTERM / SIGHUP that came while one did


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP during a session: unwinds like Ctrl-C; ``code`` is 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum
        self.code = 128 + signum


def unwind_on_signals(enabled: bool, *, sigint_once: bool = False) -> None:
    """Raise ``Terminated`` on the first SIGTERM/SIGHUP (main thread only) until as many
    ``unwind_on_signals(False)`` as ``True`` calls were made."""
    global _unwind
    _unwind = _unwind + 1 if enabled else max(0, _unwind - 1)
    if not enabled or threading.current_thread() is not threading.main_thread():
        return
    _install_handlers()
    if sigint_once and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signal.SIGINT, _on_sigint)


def finish_on_signals(enabled: bool) -> int | None:
    """From the end of a session (``True``) to the end of its cleanup (``False``, which returns the
    signal that came meanwhile, if one did): a first SIGTERM / SIGHUP kills what is being stopped,
    runs every registered cleanup at once and lets the session's own cleanup end (no traceback, no
    lock or temp folder left); the caller makes the exit status 128 + the signal. A second one
    dies by the signal as ever."""
    global _finishing
    _finishing = _finishing + 1 if enabled else max(0, _finishing - 1)
    if enabled:
        return None
    late = _late[0] if _late else None
    _late.clear()
    return late


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    if _interrupted:
        return  # already unwinding: a forwarded or repeated Ctrl-C must not break the cleanup
    _interrupted.append(signum)
    raise KeyboardInterrupt


def register(callback: Callable[[], None]) -> int:
    """Run ``callback`` at exit or on SIGTERM/SIGHUP unless unregistered first; a token."""
    _install()
    with _lock:
        token = next(_ids)
        _callbacks[token] = callback
    return token


def unregister(token: int | None) -> None:
    """Forget a callback (it was run or is no longer needed)."""
    if token is not None:
        with _lock:
            _callbacks.pop(token, None)


def run_all() -> None:
    """Run every registered callback once, newest first; errors are swallowed."""
    while True:
        with _lock:
            if not _callbacks:
                return
            token = max(_callbacks)
            callback = _callbacks.pop(token)
        with contextlib.suppress(Exception):
            callback()


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """A section (holding a file lock) that a SIGTERM must not interrupt: the signal waits.

    A handler that ran inside would try to take the same lock again and hang.
    """
    global _critical_depth
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers run on the main thread: only its sections can be re-entered
        return
    _critical_depth += 1
    try:
        yield
    finally:
        _critical_depth -= 1
        if _critical_depth == 0 and _deferred:
            _on_signal(*_deferred.pop(0))


def _install() -> None:
    """atexit once; the signal handlers as soon as a register happens on the main thread."""
    global _installed
    if not _previous and not _installed:
        atexit.register(run_all)
    _installed = True
    if threading.current_thread() is threading.main_thread():
        _install_handlers()


def _install_handlers() -> None:
    if _previous:
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            _previous[sig] = signal.signal(sig, _on_signal)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if not _unwind or _interrupted:  # this one ends the process: an agent being stopped is killed now
        procs.kill_stopping()
    if _critical_depth:
        _deferred.append((signum, frame))
        return
    if _unwind and not _interrupted:
        _interrupted.append(signum)
        raise Terminated(signum)
    run_all()
    if _finishing and not _interrupted:  # the session is over: let its cleanup end, at once
        _interrupted.append(signum)
        _late.append(signum)
        return
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
    elif previous != signal.SIG_IGN:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
