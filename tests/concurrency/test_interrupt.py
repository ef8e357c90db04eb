"""Ctrl-C while tests run ahead: exit 130 quickly, nothing reported twice, no process left; also when
it lands inside a task group."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from pytest_semantictest.agents.cleanup import Terminated
from pytest_semantictest.engine.loop import interrupt_in
from tests.highbar.test_no_leaks import QUICK, SLOW_AGENT, make_run  # noqa: F401 (fixture)


def test_ctrl_c_with_tests_in_flight(make_run) -> None:  # noqa: F811
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


def test_ctrl_c_with_full_trace_shows_every_frame(make_run) -> None:  # noqa: F811
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


SPIN_IN_A_TASK_GROUP = """
import pathlib
import anyio
from pytest_semantictest import Block, register_block

@register_block
class SpinInTaskGroup(Block):
    name = "SpinInTaskGroup"
    async def process(self, inputs, ctx):
        async with anyio.create_task_group():
            pathlib.Path("spinning").write_text("yes")
            while True:  # Ctrl-C's KeyboardInterrupt is raised here, inside the task group's body
                pass
"""


def test_ctrl_c_inside_a_task_group_still_interrupts_the_session(pytester: pytest.Pytester) -> None:
    """anyio's task group (httpx's connect has one) wraps what its body raises in a BaseExceptionGroup:
    an interrupt that lands there is still the session's interrupt, not the test's error (seen as a
    flaky ``assert 1 == 130`` in test_no_leaks.test_sigint_mid_run)."""
    pytester.makeconftest(SPIN_IN_A_TASK_GROUP)
    pytester.makeini("[pytest]\n")
    suite = {
        "name": "s",
        "tests": [
            {"id": f"t{i}", "pipeline": [{"block": "SpinInTaskGroup", "output": "o"}], "assertions": {}}
            for i in range(2)
        ],
    }
    pytester.makefile(".json", suite=json.dumps(suite))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "suite.json"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (pytester.path / "spinning").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=30)  # (wrapped, the interrupt was t0's error: t1 spun forever)
    finally:
        proc.kill()
    assert proc.returncode == 130, out  # a spec session's Ctrl-C, as highbar's
    assert "KeyboardInterrupt" in out and "ExceptionGroup" not in out, out
    assert "ERROR" not in out and "t1" not in out, out  # not the test's error; the next test never ran


def test_the_interrupt_in_a_group_is_found_and_other_groups_stay_groups() -> None:
    terminated = Terminated(signal.SIGTERM)  # (SIGTERM's: its exit code travels with it)
    nested = BaseExceptionGroup("outer", [ValueError("a test's"), BaseExceptionGroup("inner", [terminated])])
    assert interrupt_in(nested) is terminated
    assert interrupt_in(ExceptionGroup("errors", [ValueError("a"), KeyError("b")])) is None


FRAMES_RENDERED = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_keyboard_interrupt(excinfo):
    with open("frames.txt", "w") as out:
        out.write(str(len(excinfo.traceback)))
"""


@pytest.mark.parametrize(
    ("args", "one_frame"), [((), True), (("--full-trace",), False)], ids=["short", "full-trace"]
)
def test_a_collection_error_renders_one_frame_of_pytests_interrupt(
    pytester: pytest.Pytester, args: tuple[str, ...], one_frame: bool
) -> None:
    """No spec file in the session: pytest's own ``Interrupted`` (a collection error) is rendered from
    its crash entry alone too, and the output is pytest's."""
    pytester.makeconftest(FRAMES_RENDERED)
    pytester.makepyfile(test_broken="def test_x(:\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*ERROR collecting test_broken.py*", "*Interrupted: 1 error during collection*"]
    )
    frames = int((pytester.path / "frames.txt").read_text())
    assert (frames == 1) if one_frame else (frames > 1), frames
