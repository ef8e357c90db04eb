"""README.md's main command, ``python -m pytest examples``, run once for the whole session (also under
xdist): the examples' judged tests replay their recorded answers (``tests/reports/test_examples_judged.py``
checks its output) and its verdicts are the at-once half of the examples' one-by-one comparison
(``tests/concurrency/test_corpus_verdicts.py``). The same command with ``--semantictest-mutate``, also
run once for the session (:func:`mutation_run`), gives the mutation tests their scores
(``tests/mutate/test_examples_offline.py``) and the one-by-one half: a mutation run records each test
alone (no test runs ahead of another while one records)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import once_per_session

ROOT = Path(__file__).resolve().parents[1]
DEAD_LLM = "http://127.0.0.1:9/v1"
"""The LLM endpoint the run is given: were anything sent there, it would fail (replay sends nothing)."""


def environment() -> dict[str, str]:
    """This session's environment without its OpenAI, pytest and agent-address variables (a test may have
    set them), the LLM at :data:`DEAD_LLM`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "PYTEST_", "BASE_URL", "HIGHBAR_TRACES_URL", "COMPLIANCE_"))
    }
    env["OPENAI_BASE_URL"] = DEAD_LLM
    return env


def run_examples(
    out: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The main command with ``args`` and a JUnit report at ``out/junit.xml``, in the repository (``env``:
    variables for it besides :func:`environment`'s)."""
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "examples",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={out / 'junit.xml'}",
            *args,
        ],
        cwd=ROOT,
        env={**environment(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


REQUEST_LOG = "EXAMPLE_AGENT_REQUEST_LOG"
"""Where the example agents log each request they get (``examples/agents/request_log.py``)."""


def _run(folder: Path) -> dict[str, Any]:
    done = run_examples(
        folder,
        f"--semantictest-report={folder / 'report.html'}",
        f"--semantictest-results={folder / 'results.jsonl'}",
        env={REQUEST_LOG: str(folder / "requests.log")},
    )
    return {
        "code": done.returncode,
        "stdout": done.stdout,
        "stderr": done.stderr[-4000:],
        "junit": str(folder / "junit.xml"),
        "report": str(folder / "report.html"),
        "results": str(folder / "results.jsonl"),
        "requests": str(folder / "requests.log"),
    }


def main_command_run(request: pytest.FixtureRequest) -> dict[str, Any]:
    """``code``, ``stdout``, ``stderr`` (its tail), the paths of the one run's ``junit`` report, results
    viewer (``report``), ``results`` file and the example agents' log of the ``requests`` they got."""
    return once_per_session(request, "main-command", _run, lambda found: found, lambda found: found)


MUTATION_PHASES = "tests.mutate.phase_marks"
"""A plugin marking in the request log when each test's phases begin (``tests/mutate/phase_marks.py``)."""


def mutate_run(out: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The examples with ``--semantictest-mutate`` and ``args``: results in ``out/name.jsonl``, each agent
    request (and each phase's start) logged to ``out/name.log``, JUnit in ``out/name/junit.xml``."""
    return run_examples(
        out / name,
        "--semantictest-mutate",
        "-p",
        MUTATION_PHASES,
        f"--semantictest-results={out / name}.jsonl",
        *args,
        env={REQUEST_LOG: str(out / f"{name}.log")},
    )


def _mutated(out: Path) -> dict[str, Any]:
    done = mutate_run(out, "mutate")
    return {
        "code": done.returncode,
        "stdout": done.stdout,
        "stderr": done.stderr[-4000:],
        "out": str(out),
        "junit": str(out / "mutate" / "junit.xml"),
    }


def mutation_run(request: pytest.FixtureRequest) -> dict[str, Any]:
    """``code``, ``stdout``, ``stderr`` (its tail), ``out`` (the folder of its ``mutate.jsonl`` results and
    ``mutate.log`` requests) and ``junit`` of the one run with ``--semantictest-mutate``."""
    return once_per_session(request, "examples-mutated", _mutated, lambda found: found, lambda found: found)
