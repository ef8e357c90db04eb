"""No agent outlives pytest: a signal during an agent's grace period, and SIGKILL.

The agent ignores SIGTERM (so stopping it takes its whole 5 s grace period, then SIGKILL) and has a
child of its own that ignores it too; it notes each SIGTERM in a file, so a test knows the plugin's
stop has begun. The same runs for a highbar spec, a Yao conversation file and a Python test's
``agent_factory`` (every format starts its agent through the same code, ``agents/process.py``;
compliance's server too), in one process and under ``-n 2`` (``agents/shared.py``):

- SIGTERM or SIGHUP to pytest in the grace period: the agent's group is killed at once, pytest ends
  its cleanup (no lock or temp folder left) with exit status 143 / 129, nothing left when it exits;
- SIGINT there: the same, with no traceback out of ``pytest_unconfigure``, exit status 130 (pytest's
  2 in a session without a spec file);
- SIGKILL to pytest (or to the xdist controller): its agent's watchdog stops the group
  (``agents/watchdog.py``) within the grace period and a few seconds.

``Run`` (``test_no_leaks.py``) finds every process of a run by the marker in its environment, and
its fixture kills whatever is left when a test ends.

A Yao file runs alone once (SIGTERM in one process: its exit status); its other cases run beside a
highbar spec, each file with its own agent (``highbar+yao``): one run checks both formats' agents, and
that a signal in one agent's grace period stops every agent at once, also one whose stop had not begun
(an xdist worker stops the shared agents it was the last to use one after another).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.highbar.test_no_leaks import (  # noqa: F401 (make_run is a fixture)
    QUICK,
    SLOW,
    TRACE_AGENT,
    Run,
    agents_on,
    free_port,
    make_run,
    marked,
    port_answers,
    running,
    start_times,
    wait_for,
    with_group_child,
    workers_of,
)

GRACE_S = 5.0
"""The plugin's grace period between SIGTERM and SIGKILL (``stop_grace_s``)."""


def _ignoring_agent(tmp: Path) -> tuple[list[str], Path]:
    noted = tmp / "sigterm.txt"
    return [sys.executable, str(TRACE_AGENT), "--sigterm-file", str(noted)], noted


@dataclasses.dataclass
class OtherAgent:
    """A second ignoring agent in a run, for its Yao file: its own port, child and SIGTERM note."""

    port: int
    start_command: str
    noted: Path
    child_pidfile: Path

    @classmethod
    def beside(cls, run: Run) -> OtherAgent:
        port, noted, pidfile = free_port(), run.tmp / "yao-sigterm.txt", run.tmp / "yao-agent-child.pid"
        argv = with_group_child([sys.executable, str(TRACE_AGENT), "--sigterm-file", str(noted)])
        return cls(
            port, " ".join([*argv, "--port", str(port), "--spawn-child", str(pidfile)]), noted, pidfile
        )

    def pids(self, run: Run) -> tuple[int, int]:
        """The agent's and its child's, once it started (its child is spawned before it listens)."""
        wait_for(
            "the Yao file's agent",
            lambda: self.child_pidfile.exists() and self.child_pidfile.read_text(),
            90,
            run.proc,
        )
        found = agents_on(self.port, run.since)
        assert len(found) == 1, found
        run._note_traces(found[0])  # (its trace file must be gone too: ``assert_nothing_left``)
        return found[0], int(self.child_pidfile.read_text())


def _yao_files(run: Run, cases: int = 1, other: OtherAgent | None = None) -> tuple[str, ...]:
    """A Yao conversation file whose sidecar starts the same agent (highbar protocol), or ``other``."""
    port, start = (run.port, run.start_command) if other is None else (other.port, other.start_command)
    (run.tmp / "orders_test.agent.yaml").write_text(
        f"protocol: highbar\nendpoint: http://127.0.0.1:{port}/{run.route}\n"
        f"start: {json.dumps(start)}\nhealth: http://127.0.0.1:{port}/health\n"
        "startup_timeout: 20000\n",
        encoding="utf-8",
    )
    lines = [
        json.dumps(
            {
                "id": f"hello-{i}",
                "input": "hello there",
                "assertions": [{"type": "contains", "value": "Hello"}],
            }
        )
        for i in range(cases)
    ]
    (run.tmp / "orders_test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ("orders_test.jsonl",)


def _python_files(run: Run) -> tuple[str, ...]:
    """A Python test that starts the same agent with ``agent_factory`` (no spec file: pytest's codes)."""
    base = f"http://127.0.0.1:{run.port}"
    (run.tmp / "test_agent.py").write_text(
        "def test_hello(agent_factory):\n"
        f"    agent = agent_factory(start={run.start_command!r}, endpoint={base + '/' + run.route!r},\n"
        f"                          health={base + '/health'!r}, startup_timeout=20000)\n"
        "    assert agent.send('hello there')['response']\n",
        encoding="utf-8",
    )
    return ("test_agent.py",)


def _paths(run: Run, fmt: str, cases: int = 1) -> tuple[str, ...]:
    if fmt == "python":
        return _python_files(run)
    return _yao_files(run, cases) if fmt == "yao" else ("leaks.highbar.yaml",)


def _files(run: Run, fmt: str, cases: int = 1) -> tuple[tuple[str, ...], OtherAgent | None]:
    """The run's files for ``fmt``; ``highbar+yao``: a highbar spec and a Yao file, each with its agent."""
    if fmt != "highbar+yao":
        return _paths(run, fmt, cases), None
    other = OtherAgent.beside(run)
    return ("leaks.highbar.yaml", *_yao_files(run, cases, other)), other


def _gone_at_exit(run: Run, pids: list[int], out: str) -> None:
    """Right after pytest exited, the agents and their children are gone (not a grace period later)."""
    alive = {pid for pid in pids if pid in marked(run.mark, run.since)}
    assert not alive, f"still running when pytest had exited: {alive}\n{out}"


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _when_gone(*pids: int) -> concurrent.futures.Future[float]:
    """The moment (``time.monotonic()``) none of ``pids`` runs any more, watched from now on. Timing the
    agents' end rather than pytest's exit: on a busy machine pytest may take seconds to exit after it
    stopped its agents at once, which is not waiting out their grace period."""
    done: concurrent.futures.Future[float] = concurrent.futures.Future()

    def watch() -> None:
        deadline = time.monotonic() + 60
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        done.set_result(time.monotonic())

    threading.Thread(target=watch, daemon=True).start()
    return done


def _until_a_stop_began(notes: list[Path], proc) -> None:
    """Until an agent got the plugin's SIGTERM (its grace period began), and a little more. (An xdist
    worker stops the shared agents it was the last to use one after another: a signal then comes in the
    first one's grace period, before the next one's stop began, and that one must be killed at once too.)"""
    wait_for(
        "the plugin's SIGTERM to an agent (its grace period)",
        lambda: any(n.exists() for n in notes),
        60,
        proc,
    )
    time.sleep(0.3)  # well inside the 5 s


def _signal_in_the_grace_period(
    run: Run,
    noted: Path,
    sig: int,
    also: tuple[int, ...] = (),
    spec: bool = True,
    other: OtherAgent | None = None,
) -> None:
    """Signal pytest (and ``also``) once the agent's (or ``other``'s) stop began; what must hold when
    pytest has exited: every agent and its child stopped at once."""
    proc = run.proc
    agent, child = run.agent_pid(), run.child_pid()
    pids = [agent, child, *(other.pids(run) if other is not None else ())]
    # the tests passed; the session's end is stopping the agents
    _until_a_stop_began([noted, *([other.noted] if other is not None else [])], proc)
    assert proc is not None and proc.poll() is None
    started = time.monotonic()
    stopped = _when_gone(*pids)
    for pid in [proc.pid, *also]:
        with contextlib.suppress(
            ProcessLookupError
        ):  # (an xdist worker that did not use the agent may be done)
            os.kill(pid, sig)
    code, out = run.finish(timeout=30)
    _gone_at_exit(run, pids, out)
    assert "Traceback" not in out, out
    took = stopped.result(timeout=5) - started
    assert took < GRACE_S - 1, (
        f"the agent was stopped only when its grace period was over ({took:.1f}s)\n{out}"
    )
    # highbar's 130, 143, 129, or pytest's
    assert code == (128 + sig if spec else pytest.ExitCode.INTERRUPTED), out
    what = "interrupted" if sig == signal.SIGINT else f"terminated by {signal.Signals(sig).name}"
    assert f"semantictest: {what} at the end of the run: the agents were stopped at once" in out, out
    run.assert_nothing_left(out, within=2)
    if other is not None:
        assert agents_on(other.port, run.since) == [] and not port_answers(other.port), out


def _killed_then_stopped(run: Run, noted: Path, other: OtherAgent | None = None) -> None:
    """SIGKILL pytest while a test waits for a reply: the watchdog stops the agent and its child
    (SIGTERM, noted and ignored, the grace period, SIGKILL); so does ``other``'s (started ahead)."""
    assert run.proc is not None
    pids = [run.agent_pid(), run.child_pid(), *(other.pids(run) if other is not None else ())]
    every = start_times(*pids)
    assert set(every) == set(pids) and set(pids) <= set(marked(run.mark, run.since))
    time.sleep(0.5)
    assert run.proc.poll() is None
    run.proc.kill()
    code, out = run.finish(timeout=30)
    assert code == -signal.SIGKILL, out
    wait_for("the agents and their children to be stopped", lambda: not running(every), GRACE_S + 5)
    assert noted.exists(), "the agent got no SIGTERM before its SIGKILL"
    if other is not None:
        assert other.noted.exists(), "the Yao file's agent got no SIGTERM before its SIGKILL"


@pytest.mark.parametrize(
    ("fmt", "sig"),
    [
        ("highbar", signal.SIGTERM),
        ("highbar", signal.SIGHUP),
        ("highbar+yao", signal.SIGINT),
        ("yao", signal.SIGTERM),
        ("python", signal.SIGINT),
    ],
)
def test_a_signal_in_the_grace_period_stops_the_group_first(
    make_run,  # noqa: F811
    tmp_path: Path,
    fmt: str,
    sig: int,  # noqa: F811
) -> None:
    """``highbar+yao``: a highbar spec and a Yao file, each with its agent, both in their grace period
    (one run for both formats' SIGINT; a Yao file alone, for its exit status, is the SIGTERM case)."""
    argv, noted = _ignoring_agent(tmp_path)
    run = make_run(QUICK, 1, agent=argv)
    paths, other = _files(run, fmt)
    run.start(paths=paths)
    _signal_in_the_grace_period(run, noted, sig, spec=fmt != "python", other=other)


@pytest.mark.parametrize("fmt", ["highbar+yao", "python"])
def test_sigkill_to_pytest_leaves_no_agent(make_run, tmp_path: Path, fmt: str) -> None:  # noqa: F811
    argv, noted = _ignoring_agent(tmp_path)
    run = make_run(SLOW, 3, route="slow", agent=argv)  # /slow answers after 3 s: pytest waits for a reply
    paths, other = _files(run, fmt)
    run.start(paths=paths)
    _killed_then_stopped(run, noted, other)
    run.assert_nothing_left("", within=2)
    if other is not None:
        assert agents_on(other.port, run.since) == [] and not port_answers(other.port)


@pytest.mark.parametrize(("fmt", "sig"), [("highbar+yao", signal.SIGTERM), ("highbar", signal.SIGINT)])
def test_xdist_a_signal_in_the_grace_period(make_run, tmp_path: Path, fmt: str, sig: int) -> None:  # noqa: F811
    # The worker that used the agent stops it as the run ends; the controller (a CI runner's cancel)
    # or, for Ctrl-C, the controller and its workers (a terminal's process group) get the signal.
    argv, noted = _ignoring_agent(tmp_path)
    run = make_run(QUICK, 4, agent=argv)  # (four tests of each file: the first file's go two to each worker)
    paths, other = _files(run, fmt, 4)
    proc = run.start("-n", "2", paths=paths)
    workers = wait_for("two xdist workers", lambda: len(workers_of(run)) == 2 and workers_of(run), 30, proc)
    also = tuple(workers) if sig == signal.SIGINT else ()
    _signal_in_the_grace_period(run, noted, sig, also=also, other=other)


def test_xdist_sigkill_to_the_controller_leaves_no_agent(make_run, tmp_path: Path) -> None:  # noqa: F811
    """A highbar spec and a Yao file, each with its agent: both are stopped."""
    argv, noted = _ignoring_agent(tmp_path)
    run = make_run(SLOW, 4, route="slow", agent=argv)
    paths, other = _files(run, "highbar+yao", 4)
    proc = run.start("-n", "2", paths=paths)
    wait_for("two xdist workers", lambda: len(workers_of(run)) == 2 and workers_of(run), 30, proc)
    _killed_then_stopped(run, noted, other)
    # the workers end on their own once their controller is gone (execnet: within 15 s)
    wait_for("the orphaned workers to exit", lambda: not marked(run.mark, run.since), 30)
    assert other is not None and agents_on(run.port, run.since) == agents_on(other.port, run.since) == []
