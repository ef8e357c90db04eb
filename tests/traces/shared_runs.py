"""pytest runs that several tests of ``tests/traces`` share, each test checking its own files in them.

Each of those tests wrote a folder of its own and ran pytest on it in a process of its own, which
started the instrumented pydantic-ai agent (~1.3 s of CPU a start) from the folder's conftest, the
plugin, or both, and each pytest process cost another ~0.5 s. Tests whose files need the same agent
switches and the same run options now put their files side by side into one folder, run once per
session (also under xdist: ``tests.helpers.once_per_session``), and each checks its own files'
outcomes and messages. Those are read per file from the run's own report records (a recorder added to
the folder's conftest), never from the whole output, so one test's message cannot satisfy another
test's assertion; a ``Traceback`` anywhere in the run fails every test that forbade one.

No test depends on state another leaves: the agent keeps none between requests (each request is an
agent run of its own, whose spans carry that request's trace id), and each file's tests find their
calls by their own trace context, as they did when their file was alone in its run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.agents.agent_helpers import free_port
from tests.helpers import once_per_session, without_unused_plugins
from tests.traces.otel_agent_conftest import agent_conftest

REPORTS = "reports.json"

RECORDER = f"""

class _Recorder:
    \"\"\"Each report as the terminal counts it (its category), with its text: the tests that share
    this run check their own files' outcomes and messages (tests/traces/shared_runs.py).\"\"\"

    def __init__(self, config):
        self.config, self.records = config, []

    def _add(self, report, category):
        if category and getattr(report, "count_towards_summary", True):
            self.records.append({{"nodeid": report.nodeid, "category": category, "text": report.longreprtext}})

    def pytest_runtest_logreport(self, report):
        self._add(report, self.config.hook.pytest_report_teststatus(report=report, config=self.config)[0])

    def pytest_collectreport(self, report):
        self._add(report, "error" if report.failed else "skipped" if report.skipped else "")

    def pytest_unconfigure(self, config):
        import json
        with open({REPORTS!r}, "w", encoding="utf-8") as out:
            json.dump(self.records, out)


def pytest_configure(config):
    config.pluginmanager.register(_Recorder(config), "shared-run-recorder")
"""


@dataclass
class SharedRun:
    """A shared run's exit status, terminal output and, per report the terminal counted, its node id,
    category (``passed``, ``failed``, ``error``, ...) and text."""

    ret: int
    stdout: str
    stderr: str
    records: list[dict[str, str]] = field(default_factory=list)

    def _of(self, name: str) -> list[dict[str, str]]:
        return [r for r in self.records if r["nodeid"].split("::")[0] == name]

    def outcomes(self, *files: str) -> dict[str, int]:
        """The outcomes of ``files``' tests, counted as ``RunResult.assert_outcomes`` counts them."""
        counts = Counter(r["category"] for name in files for r in self._of(name))
        return {("errors" if k == "error" else k): v for k, v in counts.items() if v}

    def text(self, *files: str) -> str:
        """What the run reported of ``files``' tests: their failures' and errors' texts."""
        return "\n".join(r["text"] for name in files for r in self._of(name))

    def category(self, nodeid: str) -> list[str]:
        return [r["category"] for r in self.records if r["nodeid"] == nodeid]


def _pytest(folder: Path, args: tuple[str, ...], env: dict[str, str]) -> SharedRun:
    """``python -m pytest`` in ``folder`` in a process of its own, without this session's pytest or
    xdist variables (as ``tests.helpers.pytest_process``, with the agent's switches in ``env``)."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_XDIST", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST"))
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *without_unused_plugins(args), *args],
        cwd=folder,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    records = json.loads((folder / REPORTS).read_text(encoding="utf-8"))
    return SharedRun(done.returncode, done.stdout, done.stderr, records)


def shared_run(
    request: pytest.FixtureRequest,
    name: str,
    write: Callable[[Path], None],
    *args: str,
    switches: dict[str, str] | None = None,
) -> SharedRun:
    """The session's run ``name``: ``write(folder)`` puts the files in, then pytest ``args`` runs on
    them with the agent's ``switches`` in its environment (the conftest's agent and any the plugin
    starts get them)."""

    def produce(folder: Path) -> SharedRun:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "conftest.py").write_text(agent_conftest() + RECORDER, encoding="utf-8")
        write(folder)
        return _pytest(folder, ("-p", "no:cacheprovider", *args), switches or {})

    def load(data: Any) -> SharedRun:
        return SharedRun(**data)

    return once_per_session(request, name, produce, asdict, load)


def otel_run(request: pytest.FixtureRequest) -> SharedRun:
    """With the receiver, the agent as it is: the files of ``test_framework_agent`` (20 SemanticTest
    tests at once, highbar in one process), ``test_highbar_spans``, ``test_yao_spans``,
    ``test_compliance_spans`` and ``test_spans_expect``. The two highbar files name the same agent
    (command and port): the plugin starts it once for both. The 20 tests at once come first (their
    file's name), so that they are the run's first 20 items at once, as in a run of their own."""

    def write(folder: Path) -> None:
        from tests.traces import (
            test_compliance_spans,
            test_framework_agent,
            test_highbar_spans,
            test_spans_expect,
            test_yao_spans,
        )

        port = free_port()
        test_framework_agent.write_twenty(folder)
        test_framework_agent.write_highbar(folder, port)
        test_highbar_spans.write_spans_spec(folder, port)
        test_yao_spans.write(folder, test_yao_spans.WITH_RECEIVER)
        test_compliance_spans.write_span_checks(folder)
        test_spans_expect.write_expectations(folder)

    return shared_run(request, "otel-run", write, "--semantictest-otel", "--semantictest-items-at-once=20")


def otel_lyon_run(request: pytest.FixtureRequest) -> SharedRun:
    """With the receiver, the agent asking the tool for Lyon whatever it was asked (the conftest's and
    the one the plugin starts): ``test_framework_agent``'s wrong-argument files."""

    def write(folder: Path) -> None:
        from tests.traces import test_framework_agent

        test_framework_agent.write_wrong_argument(folder, free_port())

    return shared_run(
        request, "otel-lyon-run", write, "--semantictest-otel", switches={"WEATHER_AGENT_CITY": "Lyon"}
    )


def no_receiver_run(request: pytest.FixtureRequest) -> SharedRun:
    """Without the receiver: the files of ``test_framework_agent``, ``test_yao_spans`` and
    ``test_compliance_spans`` that each say how to turn it on."""

    def write(folder: Path) -> None:
        from tests.traces import test_compliance_spans, test_framework_agent, test_yao_spans

        test_framework_agent.write_without_receiver(folder, free_port())
        test_yao_spans.write(folder, test_yao_spans.CALLS_FROM_OTEL)
        test_compliance_spans.write_needs_spans(folder)

    return shared_run(request, "no-receiver-run", write)
