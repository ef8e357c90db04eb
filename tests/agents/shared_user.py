"""A process that uses a SharedAgent, driven by the shared-agent tests.

    python shared_user.py STATE_DIR KEY CONFIG_JSON

Acquires, prints the handle as one JSON line, then obeys stdin lines: ``release``
(release and print ``released``), ``exit`` (exit without releasing: atexit cleans up),
``hang`` (sleep until killed).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from dataclasses import asdict
from pathlib import Path

from pytest_semantictest.agents import AgentConfig, AgentStartError, SharedAgent


def hang() -> None:
    """Wait until a signal ends the process. Not ``time.sleep``: a signal that lands between Python's
    last check and the start of the sleep's system call is handled only when the sleep ends. The
    wakeup fd is written by the signal itself, so ``select`` returns whenever it came."""
    readable, writable = os.pipe()
    os.set_blocking(writable, False)
    signal.set_wakeup_fd(writable)
    while True:
        select.select([readable], [], [])
        os.read(readable, 64)  # the handler (run right after) ends the process; any other signal: wait on


def main() -> None:
    state_dir, key, raw = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    for name in ("cwd", "log_dir", "traces_dir"):
        if raw.get(name):
            raw[name] = Path(raw[name])
    shared = SharedAgent(state_dir, key, AgentConfig(**raw))
    try:
        handle = shared.acquire()
    except AgentStartError as e:
        print(json.dumps({"error": str(e)}), flush=True)
        return
    print(
        json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in asdict(handle).items()}), flush=True
    )
    for line in sys.stdin:
        command = line.strip()
        if command == "release":
            shared.release()
            print("released", flush=True)
        elif command == "exit":
            sys.exit(0)
        elif command == "hang":
            hang()


if __name__ == "__main__":
    main()
