"""A pytest run in a process of its own that several tests share, each checking its own files in it.

The run's conftest gets a recorder: for each report the terminal counts, its node id, category
(``passed``, ``failed``, ``error``, ...), text and sections. A test then reads its own files'
outcomes and messages, never the whole output, so a message of another test's file cannot satisfy
its assertion.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers import without_unused_plugins

REPORTS = "reports.json"

RECORDER = f"""

class _Recorder:
    \"\"\"Each report as the terminal counts it (its category), with its text: the tests that share
    this run check their own files' outcomes and messages (tests/agents/recorded_run.py).\"\"\"

    def __init__(self, config):
        self.config, self.records = config, []

    def _add(self, report, category):
        if category and getattr(report, "count_towards_summary", True):
            self.records.append({{
                "nodeid": report.nodeid,
                "category": category,
                "text": report.longreprtext,
                "sections": list(report.sections) if report.when == "call" else [],
            }})

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
    records: list[dict[str, Any]] = field(default_factory=list)
    folder: str = ""
    """Where it ran (its reports: ``--html``, ``--junitxml``)."""

    def _of(self, name: str) -> list[dict[str, Any]]:
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

    def sections(self, nodeid: str) -> list[tuple[str, str]]:
        """The report sections of ``nodeid``'s call: (title, content) (captured output, spans, ...)."""
        return [(t, c) for r in self.records if r["nodeid"] == nodeid for t, c in r["sections"]]


def recorded_pytest(folder: Path, conftest: str, args: tuple[str, ...], env: dict[str, str]) -> SharedRun:
    """``python -m pytest args`` in ``folder`` in a process of its own, with ``conftest`` and the
    recorder as its conftest, without this session's pytest or xdist variables (as
    ``tests.helpers.pytest_process``), and ``env`` added to its environment."""
    (folder / "conftest.py").write_text(conftest + RECORDER, encoding="utf-8")
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
    reports = folder / REPORTS
    assert reports.exists(), (
        f"the shared pytest run in {folder} ended ({done.returncode}) without its report records:\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    records = json.loads(reports.read_text(encoding="utf-8"))
    return SharedRun(done.returncode, done.stdout, done.stderr, records, str(folder))
