"""AgentProcess: start, health, stop, start failures, attach mode, process groups, hooks."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest
from agent_helpers import AGENT, alive, wait_gone

from pytest_semantictest.agents import (
    AgentError,
    AgentProcess,
    AgentStartError,
    HookContext,
    SessionHookError,
    SessionHooks,
    send,
)


def test_start_health_stop(make_config, port):
    agent = AgentProcess(make_config())
    agent.start(require_hello=True)
    try:
        assert agent.pid and alive(agent.pid)
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
        assert agent.log_path is not None and agent.log_path.parent.name == "logs"
        assert agent.log_path.name.startswith("trace-agent-") and agent.log_path.suffix == ".log"
        traces = agent.traces_path
        assert traces is not None and traces.exists()
        hello = json.loads(traces.read_text().splitlines()[0])
        assert hello["type"] == "hello" and hello["tools"] == ["cancel_order", "get_order"]
    finally:
        agent.stop()
    assert wait_gone(agent.pid)
    assert not traces.exists()  # the fresh trace file goes with the agent
    assert "listening on" in agent.log_path.read_text()
    agent.stop()  # idempotent


def test_start_without_health_waits_for_the_port(make_config, port):
    agent = AgentProcess(make_config("--slow-start", "0.3", health=None))
    started = time.monotonic()
    with agent:
        assert time.monotonic() - started >= 0.3
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
    assert wait_gone(agent.pid)


def test_never_healthy_times_out_with_the_log_tail(make_config):
    agent = AgentProcess(make_config("--never-healthy", startup_timeout_ms=800))
    with pytest.raises(AgentStartError) as info:
        agent.start()
    message = str(info.value)
    assert "not ready after 0.8s" in message and "/health to answer 200" in message
    assert "last lines of" in message and "listening on" in message
    assert wait_gone(agent.pid)


def test_exit_during_start_reports_code_and_log_tail(make_config):
    agent = AgentProcess(make_config("--exit-at-start"))
    started = time.monotonic()
    with pytest.raises(AgentStartError) as info:
        agent.start()
    assert time.monotonic() - started < 5  # reported at once, not after the startup timeout
    message = str(info.value)
    assert "exited with code 3 before it was ready" in message
    assert "misconfigured: exiting at start" in message


def test_missing_command_is_a_start_error(make_config):
    with pytest.raises(AgentStartError, match="could not run 'no-such-agent-binary'"):
        AgentProcess(make_config(start="no-such-agent-binary --port 1")).start()


def test_busy_port_is_refused_naming_port_and_pid(make_config, port):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        agent = AgentProcess(make_config())
        with pytest.raises(AgentStartError) as info:
            agent.start()
    message = str(info.value)
    assert f"port {port} is already in use" in message
    if shutil.which("lsof"):  # the pid is named when lsof can tell; its absence is tolerated
        assert f"pid {os.getpid()}" in message
    assert agent.pid is None  # nothing was started


def test_no_hello_is_an_error_when_calls_are_observed(make_config):
    agent = AgentProcess(make_config("--no-hello"))
    with pytest.raises(AgentStartError, match="wrote no hello"):
        agent.start(require_hello=True)
    assert wait_gone(agent.pid)
    agent2 = AgentProcess(make_config("--no-hello"))
    with agent2:  # without observation a missing hello is fine
        assert alive(agent2.pid)


def test_ignored_sigterm_gets_sigkill_after_grace(make_config):
    agent = AgentProcess(make_config("--ignore-sigterm", stop_grace_s=0.5))
    agent.start()
    pid = agent.pid
    started = time.monotonic()
    agent.stop()
    elapsed = time.monotonic() - started
    assert not alive(pid)
    assert 0.5 <= elapsed < 3


def test_the_whole_process_group_is_stopped(make_config, tmp_path):
    pidfile = tmp_path / "child.pid"
    agent = AgentProcess(make_config("--spawn-child", str(pidfile)))
    agent.start()
    child = int(pidfile.read_text())
    assert alive(child)
    agent.stop()
    assert wait_gone(agent.pid) and wait_gone(child)


def test_env_and_cwd_reach_the_agent(make_config, tmp_path, port):
    script = tmp_path / "env_agent.py"
    script.write_text(
        "import os, runpy, sys\n"
        "open('seen.json', 'w').write(__import__('json').dumps({'X': os.environ.get('X_EXTRA'),"
        " 'T': os.environ.get('HIGHBAR_TRACES_URL')}))\n"
        f"sys.argv = ['a', '--port', '{port}']\nrunpy.run_path({str(AGENT)!r}, run_name='__main__')\n"
    )
    cfg = make_config(start=f"{sys.executable} env_agent.py", env={"X_EXTRA": "yes"})
    with AgentProcess(cfg) as agent:
        seen = json.loads((tmp_path / "seen.json").read_text())
        assert seen == {"X": "yes", "T": str(agent.traces_path)}


# --- attach mode ---------------------------------------------------------------------------------


def test_attach_checks_health_and_trace_file(make_config, tmp_path):
    traces = tmp_path / "attached.jsonl"
    with AgentProcess(make_config(keep_traces=True)) as running:
        cfg = make_config(managed=False, traces=str(traces))
        attached = AgentProcess(cfg)
        attached.attach()  # health 200
        with pytest.raises(AgentStartError, match="attached.jsonl does not exist"):
            attached.attach(require_traces=True)
        traces.write_text("")
        attached.attach(require_traces=True)
        reader = attached.trace_reader()
        assert reader is not None and reader.path == traces
        attached.stop()  # nothing to stop: still running
        assert alive(running.pid)
        with pytest.raises(AgentStartError, match="no trace file is configured"):
            AgentProcess(make_config(managed=False)).attach(require_traces=True)


def test_attach_to_nothing_is_an_error(make_config, port):
    with pytest.raises(AgentStartError, match="got no answer"):
        AgentProcess(make_config(managed=False)).attach()
    with pytest.raises(AgentStartError, match=f"nothing answers at 127.0.0.1:{port}"):
        AgentProcess(make_config(managed=False, health=None)).attach()


def test_attach_unhealthy_agent(make_config):
    with AgentProcess(make_config("--never-healthy", health=None)):  # noqa: SIM117
        with pytest.raises(AgentStartError, match="answered 503"):
            AgentProcess(make_config(managed=False)).attach()


# --- session hooks -------------------------------------------------------------------------------


def test_command_hooks_run_without_shell_in_cwd(make_config, tmp_path):
    setup = (
        f"{sys.executable} -c \"import sys, json; print('log line'); print(json.dumps({{'sid': sys.argv[1]}}))\""
        " {{test.id}}"
    )
    teardown = (
        f"{sys.executable} -c \"import sys, json; open('closed.txt', 'w').write(json.dumps(sys.argv[1:]))\""
        " {{session.sid}} ';' echo hi"
    )
    hooks = SessionHooks(make_config(session_setup=setup, session_teardown=teardown))
    session = hooks.setup(HookContext("abc123", "t"))
    assert session == {"sid": "abc123"}
    hooks.teardown(HookContext("abc123", "t"), session)
    assert json.loads((tmp_path / "closed.txt").read_text()) == ["abc123", ";", "echo", "hi"]  # no shell


def test_failing_command_hook_shows_output_tail(make_config):
    hook = f"{sys.executable} -c \"import sys; print('db is down', file=sys.stderr); sys.exit(4)\""
    with pytest.raises(SessionHookError) as info:
        SessionHooks(make_config(session_setup=hook)).setup(HookContext("x"))
    assert "exited with code 4" in str(info.value) and "db is down" in str(info.value)
    with pytest.raises(SessionHookError, match="last line of output"):
        SessionHooks(make_config(session_setup=f"{sys.executable} -c pass")).setup(HookContext("x"))


def test_python_hooks(make_config, tmp_path):
    (tmp_path / "my_hooks.py").write_text(
        "calls = []\n"
        "def open_session(ctx):\n    return {'conversation': ctx.test_id[:4], 'headers': {'X-Conv': 'c1'}}\n"
        "def close_session(ctx, session):\n    calls.append(session['conversation'])\n"
    )
    cfg = make_config(
        session_setup={"python": "my_hooks:open_session"},
        session_teardown={"python": "my_hooks:close_session"},
    )
    hooks = SessionHooks(cfg)
    hooks.load()
    session = hooks.setup(HookContext("abcdef"))
    assert session["conversation"] == "abcd"
    hooks.teardown(HookContext("abcdef"), session)
    assert sys.modules["my_hooks"].calls == ["abcd"]


def test_unimportable_python_hook_is_a_clear_error(make_config):
    hooks = SessionHooks(make_config(session_setup={"python": "no_such_module_xyz:setup"}))
    with pytest.raises(SessionHookError, match="cannot import 'no_such_module_xyz'"):
        hooks.load()
    hooks = SessionHooks(make_config(session_teardown={"python": "json:no_such_function"}))
    with pytest.raises(SessionHookError, match="'json' has no 'no_such_function'"):
        hooks.load()


def test_logs_never_overwrite(make_config, tmp_path):
    first = AgentProcess(make_config())
    with first:
        pass
    second = AgentProcess(make_config())
    with second:
        pass
    assert first.log_path != second.log_path
    assert all(p.suffix == ".log" for p in Path(tmp_path / "logs").iterdir())


def test_busy_port_without_lsof(make_config, port, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        with pytest.raises(AgentStartError, match=f"port {port} is already in use: stop it first"):
            AgentProcess(make_config()).start()


def test_an_agent_that_crashes_mid_run(make_config):
    agent = AgentProcess(make_config())
    agent.start()
    with pytest.raises(AgentError):
        asyncio.run(send(None, agent.config, "please crash now", "t1"))
    assert wait_gone(agent.pid)
    assert not agent.running and agent.returncode == 1
    assert "crash requested" in agent.tail()
    agent.stop()  # already gone: no error
    assert agent.returncode == 1


def test_cancel_stops_a_start_under_way_in_another_thread(make_config):
    """A start run ahead in a thread (the look-ahead's) gives up at once when the session ends: the agent
    is stopped, the thread gets an AgentStartError, and nothing is started after."""
    import threading

    agent = AgentProcess(make_config("--never-healthy", startup_timeout_ms=30000))
    failures: list[BaseException] = []

    def start() -> None:
        try:
            agent.start()
        except BaseException as e:  # noqa: BLE001 - what the thread ended with is the assertion
            failures.append(e)

    thread = threading.Thread(target=start)
    thread.start()
    deadline = time.monotonic() + 10
    while agent.pid is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert agent.pid is not None and alive(agent.pid)
    started = time.monotonic()
    agent.cancel()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - started < 3  # not the 30 s start-up timeout
    assert len(failures) == 1 and isinstance(failures[0], AgentStartError), failures
    assert "the session ended" in str(failures[0])
    assert wait_gone(agent.pid)
    with pytest.raises(AgentStartError, match="the session ended before the agent started"):
        agent.start()
