"""A signal sent to the process is always handled at once: our helper threads block the signals the
main thread handles (one delivered to a helper thread left the main thread asleep), and the event
loop watches the process's wakeup fd (a signal just before its wait began was seen when it ended)."""

from __future__ import annotations

import asyncio
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.engine.loop import EventLoopRunner
from pytest_semantictest.run_context import RunContext
from pytest_semantictest.threads import HANDLED, start_daemon
from tests.helpers import SIGBLK, signal_set

if not Path("/proc/self/task").is_dir():  # pragma: no cover - Linux only
    pytest.skip("reads thread signal masks from /proc", allow_module_level=True)


def blocked(thread_id: int) -> set[int]:
    """The signals a thread of this process blocks (``SigBlk`` of /proc/self/task/<tid>/status)."""
    for line in Path(f"/proc/self/task/{thread_id}/status").read_text().splitlines():
        if line.startswith("SigBlk:"):
            return signal_set(line.split()[1])
    raise AssertionError("no SigBlk line")


def test_a_helper_thread_blocks_the_handled_signals_and_the_main_thread_keeps_them() -> None:
    started, release = threading.Event(), threading.Event()
    ids: list[int] = []

    def work() -> None:
        ids.append(threading.get_native_id())
        started.set()
        release.wait(10)

    before = blocked(threading.get_native_id())
    thread = start_daemon(work, "probe")
    try:
        assert started.wait(10)
        assert set(HANDLED) <= blocked(ids[0])
        assert blocked(threading.get_native_id()) == before
        assert not set(HANDLED) & before
    finally:
        release.set()
        thread.join(10)


def test_the_event_loop_threads_block_them_too() -> None:
    runner = EventLoopRunner(RunContext())
    try:
        tid = runner.run(asyncio.to_thread(threading.get_native_id))
        assert set(HANDLED) <= blocked(tid)
    finally:
        runner.close()
    assert signal.SIGTERM in HANDLED and signal.SIGINT in HANDLED


def _peek_wakeup_fd() -> int:
    current = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(current)
    return current


def test_the_event_loop_is_woken_by_a_signal_and_keeps_a_wakeup_fd_the_process_has() -> None:
    """The loop claims the process's wakeup fd (a signal then ends its wait at once, also one that
    came just before the wait began), gives it back when closed, and leaves one set by others."""
    saved = signal.set_wakeup_fd(-1)  # this worker's own session may have one: put back at the end
    try:
        runner = EventLoopRunner(RunContext())
        runner.loop  # noqa: B018  (creating it installs the wakeup fd)
        assert _peek_wakeup_fd() != -1
        got: list[int] = []
        previous = signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))
        try:

            async def signalled() -> None:
                signal.raise_signal(signal.SIGUSR1)
                await asyncio.sleep(0.05)  # the loop drains the byte the signal wrote

            runner.run(signalled())
        finally:
            signal.signal(signal.SIGUSR1, previous)
        assert got == [signal.SIGUSR1]
        runner.close()
        assert _peek_wakeup_fd() == -1

        import socket

        reader, writer = socket.socketpair()
        writer.setblocking(False)
        signal.set_wakeup_fd(writer.fileno())
        try:
            other = EventLoopRunner(RunContext())
            other.loop  # noqa: B018
            assert _peek_wakeup_fd() == writer.fileno()  # the process's own stays
            other.close()
            assert _peek_wakeup_fd() == writer.fileno()
        finally:
            signal.set_wakeup_fd(-1)
            reader.close()
            writer.close()
    finally:
        signal.set_wakeup_fd(saved)


@pytest.mark.parametrize("unblock", [True, False], ids=["unblocked", "as-is"])
def test_a_process_started_on_a_helper_thread_takes_the_signals(unblock: bool) -> None:
    """A child inherits its starter's mask: a helper thread takes the signals again while it starts
    one (else the child, and all it starts, would ignore SIGTERM and Ctrl-C), then blocks them again."""
    import contextlib
    import subprocess
    import sys

    from pytest_semantictest.threads import handled_signals_unblocked

    seen: dict[str, object] = {}

    def work() -> None:
        with handled_signals_unblocked() if unblock else contextlib.nullcontext():
            seen["child"] = subprocess.run(
                [sys.executable, "-c", SIGBLK], capture_output=True, text=True, timeout=30
            ).stdout.strip()
        seen["after"] = blocked(threading.get_native_id())

    thread = start_daemon(work, "starter")
    thread.join(30)
    child = signal_set(str(seen["child"]))
    assert (not set(HANDLED) & child) if unblock else set(HANDLED) <= child, child
    after = seen["after"]
    assert isinstance(after, set) and set(HANDLED) <= after


def test_a_yao_hook_runs_with_the_signals_unblocked() -> None:
    """A Yao ``before``/``after`` hook is user code on a helper thread: what it starts takes signals."""
    from pytest_semantictest.blocks.yao_hook import call_hook

    runner = EventLoopRunner(RunContext())
    try:
        mask = runner.run(call_hook(lambda: blocked(threading.get_native_id()), []))
    finally:
        runner.close()
    assert isinstance(mask, set)  # what the hook returned: the signals its thread blocked
    assert not set(HANDLED) & mask, mask


def test_an_interrupt_right_after_the_mask_changes_leaves_the_mask_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A signal handler may raise at any instruction, also the one right after the mask changed: the
    main thread must not stay blocked (every process it started from then on would ignore Ctrl-C)."""
    real = signal.pthread_sigmask

    def then_interrupted(how: int, mask: Any) -> Any:
        previous = real(how, mask)
        if how == signal.SIG_BLOCK and set(mask) == set(HANDLED):
            raise KeyboardInterrupt  # as a handler would, right after the call
        return previous

    before = blocked(threading.get_native_id())
    monkeypatch.setattr(signal, "pthread_sigmask", then_interrupted)  # (what threads.py calls)
    with pytest.raises(KeyboardInterrupt):
        start_daemon(lambda: None, "never")
    monkeypatch.undo()
    assert blocked(threading.get_native_id()) == before
