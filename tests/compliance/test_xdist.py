"""depends_on under pytest-xdist (``-n 2``, ``--dist load``): a dependant case on another worker waits
for its dependencies' cases, then is skipped naming a failed one, or runs when they passed.

The dependency's request is held by a gate server until the dependant's case has started on the
other worker, so without sharing between workers the dependant would run (and pass) first.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.compliance.conftest import chat_case, doc
from tests.helpers import run_pytest

pytest_plugins = ["pytester"]

GATE_BOUND_S = 60
"""The gate answers anyway after this long (a run where the marker never appears must not hang)."""

MARKER_CONFTEST = """
from pathlib import Path

def pytest_runtest_logstart(nodeid, location):
    if "Waits" in nodeid:  # the dependant case started (before its setup, where it may wait)
        (Path(__file__).parent / "started").write_text(nodeid)
"""


class _GateServer(ThreadingHTTPServer):
    """The gate: what it received and answered, in order, and the file whose existence opens it."""

    def __init__(self, marker: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Gate)
        self.daemon_threads = True
        self.log: list[tuple[str, str]] = []
        self.marker = marker


class _Gate(BaseHTTPRequestHandler):
    """``gate-fail`` / ``gate-pass`` answer 500 / 200 once the marker file exists; others at once."""

    server: _GateServer

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        model = str(body.get("model"))
        self.server.log.append(("received", model))
        status = 200
        if model.startswith("gate-"):
            deadline = time.monotonic() + GATE_BOUND_S
            while not self.server.marker.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            status = 500 if model == "gate-fail" else 200
        answer = json.dumps(
            {
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
                ],
            }
        ).encode()
        self.server.log.append(("answered", model))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def gate(pytester: pytest.Pytester) -> Iterator[_GateServer]:
    httpd = _GateServer(Path(pytester.path) / "started")
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def run(pytester: pytest.Pytester, gate: _GateServer) -> pytest.RunResult:
    pytester.makeconftest(MARKER_CONFTEST)
    url = f"http://127.0.0.1:{gate.server_address[1]}"
    return run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-rs",
        "-v",
        "-n",
        "2",
        "--dist",
        "load",
        f"--semantictest-compliance-base-url={url}",
    )


def outcomes(result: pytest.RunResult) -> dict[str, tuple[str, str]]:
    """Case -> (worker, outcome), from ``-v`` lines such as ``[gw0] [ 25%] FAILED c_base.md::1. Broken``."""
    found = {}
    for line in result.stdout.lines:
        match = re.match(r"\[(gw\d+)\] \[ *\d+%\] (PASSED|FAILED|SKIPPED|ERROR) (\S+\.md::.+?)\s*$", line)
        if match:
            found[match.group(3)] = (match.group(1), match.group(2))
    return found


def test_a_failed_dependency_on_another_worker_skips_its_dependants(
    pytester: pytest.Pytester, gate: _GateServer
) -> None:
    # collection order after depends_on: base, second, third, other; --dist load sends [base, second] to
    # one worker and [third, other] to the other, so 'third' learns about 'second' only through the records
    pytester.makefile(
        ".md",
        a_third=doc(chat_case("1. Waits for second", model="echo"), name="third", depends_on="[second]"),
    )
    pytester.makefile(
        ".md", b_second=doc(chat_case("1. Needs base", model="echo"), name="second", depends_on="[base]")
    )
    pytester.makefile(".md", c_base=doc(chat_case("1. Broken", model="gate-fail"), name="base"))
    pytester.makefile(
        ".md",
        d_other=doc(chat_case("1. Independent", model="echo"), name="other", depends_on="[not-collected]"),
    )
    result = run(pytester, gate)
    result.assert_outcomes(failed=1, skipped=2, passed=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED ?1? b_second.md:*: depends on 'base', which failed",
            "SKIPPED ?1? a_third.md:*: depends on 'second', which was skipped (depends on 'base', which failed)",
        ],
        consecutive=False,
    )
    seen = outcomes(result)
    assert {case: outcome for case, (_, outcome) in seen.items()} == {
        "c_base.md::1. Broken": "FAILED",
        "b_second.md::1. Needs base": "SKIPPED",
        "a_third.md::1. Waits for second": "SKIPPED",
        "d_other.md::1. Independent": "PASSED",
    }
    # other workers
    assert seen["a_third.md::1. Waits for second"][0] != seen["b_second.md::1. Needs base"][0]
    assert ("received", "echo") in gate.log
    assert gate.log.count(("received", "echo")) == 1  # only 'other' was sent
    assert (Path(pytester.path) / "started").read_text().endswith("a_third.md::1. Waits for second")


def test_a_dependant_on_another_worker_runs_after_its_dependency_passed(
    pytester: pytest.Pytester, gate: _GateServer
) -> None:
    # two cases, two workers: round robin puts base on one and the dependant on the other
    pytester.makefile(
        ".md",
        a_dependant=doc(
            chat_case("1. Waits for base", model="echo-dependant"), name="dependant", depends_on="[base]"
        ),
    )
    pytester.makefile(".md", b_base=doc(chat_case("1. Fine", model="gate-pass"), name="base"))
    result = run(pytester, gate)
    result.assert_outcomes(passed=2)
    log = gate.log
    assert log.index(("answered", "gate-pass")) < log.index(("received", "echo-dependant"))
    seen = outcomes(result)
    assert seen["b_base.md::1. Fine"][1] == seen["a_dependant.md::1. Waits for base"][1] == "PASSED"
    assert seen["b_base.md::1. Fine"][0] != seen["a_dependant.md::1. Waits for base"][0]


CRASH_CONFTEST = """
import os

def pytest_runtest_setup(item):
    if "Crashes" in item.nodeid:
        os._exit(3)  # the worker dies: the controller writes the case's record
"""


def test_a_dependency_whose_worker_crashed_counts_as_failed(
    pytester: pytest.Pytester, gate: _GateServer
) -> None:
    pytester.makeconftest(CRASH_CONFTEST)
    pytester.makefile(
        ".md", a_dependant=doc(chat_case("1. Skipped", model="echo"), name="dependant", depends_on="[base]")
    )
    pytester.makefile(".md", b_base=doc(chat_case("1. Crashes", model="echo"), name="base"))
    url = f"http://127.0.0.1:{gate.server_address[1]}"
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-rs",
        "-v",
        "-n",
        "2",
        f"--semantictest-compliance-base-url={url}",
    )
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*worker 'gw?' crashed while running 'b_base.md::1. Crashes'*"])
    result.stdout.fnmatch_lines(
        ["SKIPPED ?1? a_dependant.md:*: depends on 'base', which failed (its worker crashed)"]
    )
    assert "did not finish within" not in result.stdout.str()


STALL_CONFTEST = """
import time
from pathlib import Path

import pytest_semantictest.formats.compliance.pytest_glue as session

session.STALL_SLACK_S = 0.5  # with the dependency's 3 s case timeout: give up after 3.5 s without progress
RELEASED = Path(__file__).parent / "released"

def pytest_runtest_setup(item):
    if "Held" in item.nodeid:  # held (at most 60 s) until the dependant stopped waiting and runs
        deadline = time.monotonic() + 60
        while not RELEASED.exists() and time.monotonic() < deadline:
            time.sleep(0.02)

def pytest_runtest_call(item):
    if "Gives up" in item.nodeid:
        RELEASED.write_text(item.nodeid)
"""


def test_a_dependency_that_does_not_finish_is_waited_for_a_bounded_time(
    pytester: pytest.Pytester, gate: _GateServer
) -> None:
    pytester.makeconftest(STALL_CONFTEST)
    pytester.makefile(
        ".md", a_dependant=doc(chat_case("1. Gives up", model="echo"), name="dependant", depends_on="[base]")
    )
    pytester.makefile(".md", b_base=doc(chat_case("1. Held", model="echo"), name="base", timeout=3))
    url = f"http://127.0.0.1:{gate.server_address[1]}"
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-rs",
        "-v",
        "-n",
        "2",
        f"--semantictest-compliance-base-url={url}",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*semantictest: 1 case(s) of 'base' did not finish within 3.5 s; deciding depends_on "
            "with the cases that did*"
        ]
    )
    seen = outcomes(result)
    assert seen["b_base.md::1. Held"][0] != seen["a_dependant.md::1. Gives up"][0]
