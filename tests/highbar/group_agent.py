"""Runs a test agent script with a child of its own in its process group, the child a ``sleep``.

    python -S group_agent.py AGENT_SCRIPT [agent options] --spawn-child PIDFILE

The trace agent's own ``--spawn-child`` starts a second Python interpreter for its child (~0.1 s of
CPU here); the leak and signal tests start one agent per pytest run and only need the child to be
in the agent's group, to carry the run's environment, and (``--sigterm-file``/``--ignore-sigterm``)
to ignore SIGTERM as the agent does. A ``sleep`` does all that: it inherits the environment, and an
ignored signal stays ignored across ``exec``. Everything else is the agent script's, run as
``__main__`` (``runpy``); its command line still names the script, as ``agents_on`` looks for it.
Started with ``-S``: the agents use the standard library only.
"""

from __future__ import annotations

import runpy
import signal
import subprocess
import sys


def main() -> None:
    script, *args = sys.argv[1:]
    if "--spawn-child" in args:
        at = args.index("--spawn-child")
        pidfile = args[at + 1]
        del args[at : at + 2]
        if "--sigterm-file" in args or "--ignore-sigterm" in args:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # (the child ignores it too, as the agent's)
        child = subprocess.Popen(["sleep", "120"])
        with open(pidfile, "w") as f:
            f.write(str(child.pid))
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
