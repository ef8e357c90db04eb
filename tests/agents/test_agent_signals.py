"""cleanup.unwind_on_signals: the first SIGTERM unwinds (``Terminated``, code 143), a second one
cleans up and dies by the signal; forwarded SIGINTs after the first are ignored (xdist workers)."""

from __future__ import annotations

import signal
import subprocess
import sys

SCRIPT = """
import os, signal, sys, time
# The process this test starts from decides neither: the disposition and mask a child inherits are
# its parent's at that moment (once, under xdist, this child started with SIGINT blocked or ignored:
# both SIGINTs were lost). What it inherited goes to stderr.
inherited = [line for line in open('/proc/self/status') if line.startswith(('SigBlk', 'SigIgn'))]
print(*inherited, sep='', end='', file=sys.stderr)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
signal.signal(signal.SIGINT, signal.default_int_handler)
from pytest_semantictest.agents import cleanup
cleanup.register(lambda: print('cleaned', flush=True))
cleanup.unwind_on_signals(True, sigint_once=True)
try:
    os.kill(os.getpid(), signal.SIG{first})
    time.sleep(5)
except cleanup.Terminated as e:
    print('terminated', e.code, flush=True)
except KeyboardInterrupt:
    print('interrupted', flush=True)
os.kill(os.getpid(), signal.SIG{second})
time.sleep(0.5)
print('after second', flush=True)
"""


def run(first: str, second: str) -> subprocess.CompletedProcess[str]:
    code = SCRIPT.format(first=first, second=second)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)


def test_first_sigterm_unwinds_second_one_kills() -> None:
    done = run("TERM", "TERM")
    assert done.stdout.split() == ["terminated", "143", "cleaned"], done
    assert done.returncode == -signal.SIGTERM


def test_sighup_is_129() -> None:
    done = run("HUP", "INT")
    assert done.stdout.split()[:2] == ["terminated", "129"], done
    assert "after second" in done.stdout  # the SIGINT after an interrupt is ignored


def test_a_second_sigint_is_ignored() -> None:
    done = run("INT", "INT")
    assert done.stdout.split() == ["interrupted", "after", "second", "cleaned"], done
    assert done.returncode == 0
