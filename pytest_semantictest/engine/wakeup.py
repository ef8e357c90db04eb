"""A signal wakes the event loop's wait, whenever it comes.

Python runs a signal handler on the main thread between two steps of its own code. A signal that
lands after the last such check and before the loop's ``select`` starts waiting is seen only when
that wait ends: a SIGTERM or Ctrl-C unnoticed while the loop waits for a slow agent. The signal
module's wakeup fd closes that gap: the signal itself writes a byte to it, the loop watches it, and
its wait returns at once. Installed on the main thread only, and only when nothing else of the
process has claimed the wakeup fd (there is one per process): otherwise left as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading


class Wakeup:
    """The wakeup fd of one event loop; :meth:`remove` gives it back."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pair: tuple[socket.socket, socket.socket] | None = None
        if threading.current_thread() is not threading.main_thread():
            return
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        try:
            previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):
            previous = None
        if previous != -1:  # not on this platform, or the process has one already: keep it
            if previous is not None:
                signal.set_wakeup_fd(previous)
            reader.close()
            writer.close()
            return
        self._pair = (reader, writer)
        loop.add_reader(reader.fileno(), self._drain)

    def _drain(self) -> None:
        if self._pair is not None:
            with contextlib.suppress(OSError):
                while self._pair[0].recv(4096):
                    pass

    def remove(self) -> None:
        """Stop watching; the process's wakeup fd is unset again if it is still ours."""
        if self._pair is None:
            return
        reader, writer = self._pair
        self._pair = None
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(-1)
            if current not in (-1, writer.fileno()):
                signal.set_wakeup_fd(current)  # someone set another since: theirs stays
        with contextlib.suppress(Exception):
            self._loop.remove_reader(reader.fileno())
        reader.close()
        writer.close()
