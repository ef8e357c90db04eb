"""Agent processes across spec files, and the exit status.

Real pytest subprocesses on highbar specs whose agents (managed mode) are the trace agent:

- two files whose agents differ but listen on the same port run each against its own agent, one
  after the other (highbar runs each spec's agent in turn), in one process and under ``-n 2``
  (where the files' tests are spread over both workers: one worker waits for the port);
- the exit status is highbar's: 2 when a file's agent could not start or be used, 1 for a failed
  test, 0 otherwise.

A test sees its own tool calls only through its own agent's trace file, so a test served by the
wrong agent could not pass: "every test passed" proves each file talked to its own agent.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from tests.highbar.test_no_leaks import (
    SLOW_AGENT,
    TRACE_AGENT,
    Run,
    agents_on,
    free_port,
    port_answers,
    with_group_child,
)

QUICK = """
      - name: {name} {i}
        trigger: "Where is order 1042?"
        expect:
          function_calls: [{{name: get_order, params: {{order_id: "1042"}}}}]
          response: {{contains: shipped}}
"""


def spec(start: list[str], port: int, name: str, count: int, extra: str = "") -> str:
    command = " ".join([*with_group_child(start), "--port", str(port)])
    tests = "".join(QUICK.format(name=name, i=i) for i in range(count))
    return f"""agent:
  start: "{command}"
  endpoint: "http://127.0.0.1:{port}/chat"
  health: "http://127.0.0.1:{port}/health"
  settle_time: 0
  startup_timeout: 20000
{extra}suites:
  - name: {name}
    tests:
{tests}"""


def run_pytest(tmp: Path, *args: str, files: dict[str, str], nothing_left: bool = False) -> tuple[int, str]:
    """pytest on ``files`` in ``tmp`` (a Run gives it a private temp dir and a marker); exit code, output.
    ``nothing_left``: also no process of the run remains (agents' own children too), nor a file of
    the plugin's in its temp dir (``Run.assert_nothing_left``)."""
    run = Run(tmp, QUICK, 0)
    for name, text in files.items():
        (tmp / name).write_text(text)
    run.start(*args, paths=tuple(sorted(files)))
    try:
        code, out = run.finish(timeout=120)
        if nothing_left:
            run.assert_nothing_left(out)
        return code, out
    finally:
        run.kill_all()


@pytest.fixture
def same_port_files(tmp_path: Path) -> dict[str, str]:
    port = free_port()
    with_child = [sys.executable, str(TRACE_AGENT), "--spawn-child", str(tmp_path / "first-child.pid")]
    return {
        "a_first.highbar.yaml": spec(with_child, port, "First", 3),  # an agent with a child of its own
        # another start command: another agent process, on the same port
        "b_second.highbar.yaml": spec(
            [sys.executable, str(SLOW_AGENT), "--delay", "0.05"], port, "Second", 3
        ),
        "c_first_again.highbar.yaml": spec(with_child, port, "Again", 2),
    }


def test_files_with_different_agents_on_one_port_each_get_theirs(tmp_path: Path, same_port_files) -> None:
    """Also, in the same run (one pytest process for all three properties): two more files whose agents
    are the same share one process; one of their tests fails and nothing else goes wrong: highbar's
    exit status 1. And the leak check of a normal run: every process gone (the first agent's child too)."""
    port = free_port()
    agent = [sys.executable, str(TRACE_AGENT)]
    failing = spec(agent, port, "E", 2).replace("contains: shipped", "contains: nope", 1)
    files = {
        **same_port_files,
        "d_same.highbar.yaml": spec(agent, port, "D", 2),
        "e_same.highbar.yaml": failing,
    }
    code, out = _run_files(tmp_path, files)
    assert code == 1, out
    assert "1 failed, 11 passed" in out, out
    assert "FAILED e_same.highbar.yaml::E::E 0" in out, out
    # a, b, then a's agent again on one port; d's agent on another, for e too (a log per agent start,
    # named for the file that started it)
    logs = sorted(log.name.split("-", 1)[0] for log in tmp_path.glob(".semantictest/logs/*.log"))
    assert logs == ["a_first", "a_first", "b_second", "d_same"], out
    assert (tmp_path / "first-child.pid").exists(), out  # the child whose end _run_files checked


BROKEN = {
    "start-failure": ("", ["--exit-at-start"]),
    "unimportable-hook": ('  session: {setup: {python: "no_such_module_here:setup"}}\n', []),
    "no-hello": ("", ["--no-hello"]),  # its tests check tool calls: the agent must say hello
}


def _broken_name(broken: str) -> str:
    return f"d_{broken.replace('-', '_')}.highbar.yaml"  # (after the files on one port)


def _broken_file(broken: str, name: str) -> str:
    extra, flags = BROKEN[broken]
    return spec([sys.executable, str(TRACE_AGENT), *flags], free_port(), name, 2, extra)


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_an_agent_that_cannot_be_used_exits_2(tmp_path: Path, broken: str) -> None:
    files = {
        "a_fine.highbar.yaml": spec([sys.executable, str(TRACE_AGENT)], free_port(), "Fine", 2),
        "b_broken.highbar.yaml": _broken_file(broken, "Broken"),
    }
    code, out = _run_files(tmp_path, files)
    assert code == 2, out  # highbar: "nothing could run"; pytest alone said 1
    assert "2 passed" in out and "2 error" in out, out  # the other file still ran


def test_under_xdist_workers_take_turns_on_the_port(tmp_path: Path, same_port_files) -> None:
    """Also the leak check of an xdist run: every process gone (the first agent's child too).

    And in the same run (one xdist run, ~2 s of CPU, for both), after the three files on one port, a
    file whose agent cannot be used for each cause (``BROKEN``): their tests error, the others' pass,
    and the controller exits 2 (each cause sets the same flag, which each worker hands to the
    controller; each cause alone is ``test_an_agent_that_cannot_be_used_exits_2``)."""
    files = dict(same_port_files)
    for broken in sorted(BROKEN):
        files[_broken_name(broken)] = _broken_file(broken, broken.title().replace("-", ""))
    code, out = _run_files(tmp_path, files, "-n", "2", "-rE")
    assert code == 2, out
    assert "8 passed" in out and f"{2 * len(BROKEN)} error" in out, out
    for broken in BROKEN:
        assert f"ERROR {_broken_name(broken)}::" in out, out
    assert "already in use" not in out, out
    assert (tmp_path / "first-child.pid").exists(), out  # the child whose end _run_files checked


def test_a_busy_port_exits_2(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        files = {"busy.highbar.yaml": spec([sys.executable, str(TRACE_AGENT)], port, "Busy", 1)}
        code, out = run_pytest(tmp_path, files=files)
    assert code == 2 and "already in use" in out, out


def _run_files(tmp: Path, files: dict[str, str], *args: str) -> tuple[int, str]:
    code, out = run_pytest(tmp, *args, files=files, nothing_left=True)
    for text in files.values():  # every agent stopped
        port = int(text.split("--port ", 1)[1].split('"', 1)[0].split()[0])
        assert agents_on(port) == [] and not port_answers(port), out
    return code, out
