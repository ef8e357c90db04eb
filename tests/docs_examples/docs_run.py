"""One pytest run (a subprocess, as users run it) of the docs' suites, staged in a folder and sent to
the docs' APIs on loopback (docs_server.py): the seed test checks each test's verdict in it, the
concurrency test compares it with a one-by-one run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples" / "agents"))
sys.path.insert(0, str(HERE))

import docs_server  # noqa: E402
import seed_copies  # noqa: E402

from tests.helpers import once_per_session, without_unused_plugins  # noqa: E402


def run_docs_suites(folder: Path, *args: str) -> dict[str, Any]:
    """Stage the suites in ``folder`` and run them there with ``args``: the exit code, the output's
    tail and the JUnit report's path (``report.xml``)."""
    folder.mkdir(parents=True, exist_ok=True)
    seed_copies.stage(folder)
    server, base = docs_server.start()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "OPENAI_BASE_URL"))
        and k != seed_copies.NO_JUDGE_KEY
    }
    env.update(docs_server.environment(base))
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *without_unused_plugins(()),
                "-p",
                "no:cacheprovider",
                "-q",
                "--junitxml=report.xml",
                "-rs",
                *args,
            ],
            cwd=folder,
            env=env,
            text=True,
            timeout=300,
            capture_output=True,
        )
    finally:
        server.shutdown()
    return {
        "code": done.returncode,
        "stdout": done.stdout[-5000:],
        "stderr": done.stderr[-2000:],
        "junit": str(folder / "report.xml"),
    }


def shared_docs_run(request: pytest.FixtureRequest) -> dict[str, Any]:
    """:func:`run_docs_suites` with no extra arguments, once for the whole session (also under xdist)."""
    return once_per_session(request, "docs-suites", run_docs_suites, lambda found: found, lambda found: found)
