"""Helper threads that never take the signals the main thread handles.

A signal sent to the process (``kill``, a terminal's Ctrl-C) goes to any one thread that does not
block it. Python runs handlers on the main thread only, and one that lands on a helper thread (an
agent's reaper, blocked in ``waitpid``) leaves the main thread asleep in its system call: a SIGTERM
or Ctrl-C unnoticed until that call returns (a ``time.sleep``, the event loop waiting for a slow
agent). So every thread of ours blocks them, and they always reach the main thread.

A process inherits the mask of the thread that starts it: one started with them blocked would ignore
SIGTERM and Ctrl-C, and so would every process it starts. So a helper thread takes them again while
it starts a process or runs a user's hook (which may start one): :func:`handled_signals_unblocked`.
One that lands there meanwhile still wakes the event loop (its wakeup fd) and runs on the main thread.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

HANDLED = (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM))
_CAN_MASK = hasattr(signal, "pthread_sigmask")


def block_handled_signals() -> None:
    """Block :data:`HANDLED` in the calling thread (an executor's thread initializer)."""
    if _CAN_MASK:
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)


def start_daemon(target: Callable[..., object], name: str, *args: object) -> threading.Thread:
    """Start a daemon thread running ``target(*args)`` with :data:`HANDLED` blocked from its first
    instruction (it inherits the mask of the thread that starts it, restored right after)."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    if not _CAN_MASK:
        thread.start()
        return thread
    previous = _current_mask()
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return thread


def _current_mask() -> set[int | signal.Signals]:
    """This thread's mask, changing nothing: taken before a change, so that an exception a signal
    handler raises right after the change (before a ``try`` could begin) cannot leave it changed."""
    return signal.pthread_sigmask(signal.SIG_BLOCK, [])


@contextmanager
def handled_signals_unblocked() -> Iterator[None]:
    """While it lasts, the calling thread does not block :data:`HANDLED` (see the module doc)."""
    if not _CAN_MASK:
        yield
        return
    previous = _current_mask()
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def unblocked(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` called with :func:`handled_signals_unblocked` (a user's hook on a helper thread)."""

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with handled_signals_unblocked():
            return function(*args, **kwargs)

    return call
