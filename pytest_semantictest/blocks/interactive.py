"""Interactive mode: a person at the terminal types the user's next message.

The terminal is ``/dev/tty`` (so pytest's output capture does not get in the way). There is none in
CI (``CI`` set), on a pytest-xdist worker, or when no terminal can be opened; interactive cases are
then skipped with that reason (or fail, with ``--semantictest-on-missing-input=fail``). Tests of
the plugin put their own object with the same ``ask`` method on ``RunContext.terminal``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..run_context import Asker, RunContext

from ..json_types import JSONValue
from ..threads import start_daemon

TTY = "/dev/tty"


def unavailable_reason(env: Mapping[str, str] | None = None) -> str | None:
    """Why no person can be asked here, or None when the terminal is usable."""
    env = os.environ if env is None else env
    if str(env.get("CI", "")).strip().lower() not in ("", "0", "false", "no"):
        return "CI is set"
    if env.get("PYTEST_XDIST_WORKER"):
        return "tests run on pytest-xdist workers, which have no terminal"
    try:
        fd = os.open(TTY, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return "there is no terminal"
    try:
        if not os.isatty(fd):
            return "there is no terminal"
    finally:
        os.close(fd)
    return None


def skip_reason(why: str) -> str:
    return (
        f"interactive case: needs a person at the terminal, but {why} "
        "(run it locally with a terminal, or --semantictest-on-missing-input=fail to fail instead)"
    )


class Terminal:
    """Asks on the controlling terminal; ``ask`` returns the line typed, or None (timeout, EOF)."""

    def __init__(self, path: str = TTY) -> None:
        self.path = path

    async def ask(self, shown: str, prompt: str, timeout_s: float | None) -> str | None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()

        def read() -> None:
            try:
                with open(self.path, "r+", encoding="utf-8", errors="replace") as tty:
                    tty.write("\n" + shown.rstrip() + "\n" + prompt)
                    tty.flush()
                    line = tty.readline()
                answer: str | None = line.rstrip("\n") if line else None
            except OSError:
                answer = None

            def settle() -> None:  # the wait may have timed out (and cancelled the future) already
                if not future.done():
                    future.set_result(answer)

            loop.call_soon_threadsafe(settle)

        start_daemon(read, "semantictest-terminal")
        try:
            return await asyncio.wait_for(future, timeout_s)
        except TimeoutError:
            return None


def terminal_of(run_context: RunContext) -> Asker | None:
    """The run's terminal (a test double when set), a real one when usable, else None."""
    if run_context.terminal is not None:
        return run_context.terminal
    return Terminal() if unavailable_reason() is None else None


async def ask_person(terminal: Asker, turn: Mapping[str, JSONValue], timeout_s: float | None) -> str | None:
    """Show the agent's reply and ask for the next message; None or "" ends the conversation."""
    calls = ", ".join(str(c.get("name")) for c in turn.get("tool_calls") or [])
    shown = f"[turn {turn.get('turn')}] agent: {turn.get('output') or ''}" + (
        f"\n  tools: {calls}" if calls else ""
    )
    answer = await terminal.ask(shown, "your reply (empty line ends the conversation): ", timeout_s)
    return answer.strip() if answer else None
