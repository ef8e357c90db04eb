"""Interrupting ``pytest -n 2``: quick, highbar's exit status, nothing left.

The controller alone gets the signal (as ``kill <pid>``, ``timeout`` or a CI runner send it) while
every worker waits for a 30 s reply. Before, the controller waited for the workers to finish their
test (xdist's 10 s shutdown timeout); now it forwards the interrupt to them. The bound is generous
for a loaded 2-core machine, and far below the reply's 30 s.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from tests.highbar.test_no_leaks import SLOW, SLOW_AGENT, make_run, wait_for, workers_of  # noqa: F401 (fixture)

QUICK_EXIT_S = 10.0


def _interrupt_controller(make_run, sig: int) -> tuple[int, str, float]:  # noqa: F811
    run = make_run(SLOW, 4, route="chat", agent=[sys.executable, str(SLOW_AGENT), "--delay", "30"])
    # (its own warning names site-packages); fresh workers: the controller forwards the signal to its children
    proc = run.start("-n", "2", "-p", "no:benchmark")
    run.agent_pid()
    wait_for("two xdist workers", lambda: len(workers_of(run)) == 2 and workers_of(run), 30, proc)
    time.sleep(1.5)  # both workers are now waiting for their reply
    assert proc.poll() is None
    started = time.monotonic()
    os.kill(proc.pid, sig)
    code, out = run.finish(timeout=60)
    took = time.monotonic() - started
    run.assert_nothing_left(out)
    return code, out, took


def test_sigint_to_the_controller_ends_the_run_quickly(make_run) -> None:  # noqa: F811
    code, out, took = _interrupt_controller(make_run, signal.SIGINT)
    assert code == 130, out
    assert took < QUICK_EXIT_S, f"took {took:.1f}s to exit\n{out}"


def test_sigterm_to_the_controller_unwinds_every_process(make_run) -> None:  # noqa: F811
    code, out, took = _interrupt_controller(make_run, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, out
    assert took < QUICK_EXIT_S, f"took {took:.1f}s to exit\n{out}"
    assert "PluggyTeardownRaisedWarning" not in out, out
    assert "site-packages" not in out, out  # no traceback or warning from a worker
    assert "terminated by SIGTERM" in out, out
