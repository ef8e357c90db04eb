"""Ctrl-C while tests run ahead: exit 130 quickly, nothing reported twice, no process left."""

from __future__ import annotations

import os
import re
import signal
import sys
import time

from tests.highbar.test_no_leaks import QUICK, SLOW_AGENT, make_run  # noqa: F401 (fixture)


def test_ctrl_c_with_tests_in_flight(make_run) -> None:  # type: ignore[no-untyped-def]
    run = make_run(QUICK, 8, agent=[sys.executable, str(SLOW_AGENT), "--delay", "1.5"])
    proc = run.start()
    run.agent_pid()
    time.sleep(2.5)  # the first test (alone: it shows the records are tagged) is done, the others in flight
    assert proc.poll() is None
    started = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    code, out = run.finish(timeout=30)
    assert code == 130, out
    assert time.monotonic() - started < 10, out
    reported = re.findall(r"^PASSED (\S+::Leaks::quick \d+)", out, re.MULTILINE)
    assert len(reported) == len(set(reported)) < 8, out  # each at most once, not all of them
    assert re.search(r"^\S+\.py:\d+: KeyboardInterrupt$", out, re.MULTILINE), out  # where it stopped
    assert "use --full-trace" in out, out
    run.assert_nothing_left(out)


def test_ctrl_c_with_full_trace_shows_every_frame(make_run) -> None:  # type: ignore[no-untyped-def]
    """The plugin has pytest render only the entry it prints of an interrupt (the whole traceback costs
    up to half a second of CPU under the event loop's stack): ``--full-trace`` still gets every frame."""
    run = make_run(QUICK, 2, agent=[sys.executable, str(SLOW_AGENT), "--delay", "30"])
    proc = run.start("--full-trace")
    run.agent_pid()
    time.sleep(1.5)  # the first test waits for its reply
    os.kill(proc.pid, signal.SIGINT)
    code, out = run.finish(timeout=30)
    assert code == 130, out
    run.assert_nothing_left(out)
    frames = re.findall(r"^\S+\.py:\d+: ", out, re.MULTILINE)
    assert len(frames) > 5, out  # (without --full-trace: the one line where it stopped)
