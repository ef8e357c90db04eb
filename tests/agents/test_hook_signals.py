"""What a session hook starts takes SIGTERM and Ctrl-C: the hooks run on a helper thread, which blocks
the signals the main thread handles (``threads.py``), and a process inherits its starter's mask. A hook
command, and a process a Python hook starts, write the signals they block."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_semantictest.threads import HANDLED
from tests.helpers import signal_set
from tests.highbar.test_no_leaks import TRACE_AGENT
from tests.ports import free_port

WRITE_MASK = """
import json, sys
open(sys.argv[1], 'w').write([line.split()[1] for line in open('/proc/self/status') if line.startswith('SigBlk')][0])
print(json.dumps({"conversation_id": 1}))
"""
PYTHON_HOOK = """
import subprocess, sys

def setup(ctx):
    subprocess.run([sys.executable, "write_mask.py", "python.json"], check=True, capture_output=True)
    return {"conversation_id": 1}
"""


def spec(port: int, setup: str) -> str:
    return f"""agent:
  start: "{sys.executable} {TRACE_AGENT} --port {port}"
  endpoint: "http://127.0.0.1:{port}/chat"
  health: "http://127.0.0.1:{port}/health"
  settle_time: 0
  session:
    setup: {setup}
suites:
  - name: Hooks
    tests:
      - name: one
        trigger: "Where is order 1042?"
        expect:
          function_calls: [{{name: get_order}}]
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads signal masks from /proc")
def test_what_a_session_hook_starts_blocks_no_signal_we_handle(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(write_mask=WRITE_MASK, hooks_module=PYTHON_HOOK)
    (pytester.path / "a_command.highbar.yaml").write_text(
        spec(free_port(), f'"{sys.executable} write_mask.py command.json"')
    )
    (pytester.path / "b_python.highbar.yaml").write_text(spec(free_port(), '{python: "hooks_module:setup"}'))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    for name in ("command.json", "python.json"):
        blocked = signal_set((pytester.path / name).read_text())
        assert not blocked & set(HANDLED), (name, blocked)
