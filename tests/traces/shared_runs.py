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

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.agents.recorded_run import SharedRun, recorded_pytest
from tests.helpers import once_per_session
from tests.ports import free_port
from tests.traces.otel_agent_conftest import agent_conftest

__all__ = ["SharedRun", "no_receiver_run", "otel_lyon_run", "otel_run"]


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
        write(folder)
        return recorded_pytest(folder, agent_conftest(), ("-p", "no:cacheprovider", *args), switches or {})

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
    the one the plugin starts), and a pytest-html report: ``test_framework_agent``'s wrong-argument
    files and ``test_span_reports``' passing one (its failing ones are the former's)."""

    def write(folder: Path) -> None:
        from tests.traces import test_framework_agent, test_span_reports

        test_framework_agent.write_wrong_argument(folder, free_port())
        test_span_reports.write_passing(folder)

    return shared_run(
        request,
        "otel-lyon-run",
        write,
        "--semantictest-otel",
        "--html=report.html",
        "--self-contained-html",
        switches={"WEATHER_AGENT_CITY": "Lyon"},
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
