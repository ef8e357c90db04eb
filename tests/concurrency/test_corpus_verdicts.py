"""The same verdicts at once and one by one: the example corpus (``examples/``) and the docs' suites
(``tests/docs_examples``, against their loopback APIs), each run twice in a subprocess (the docs' suites'
first run is the session's shared one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "agents"))
sys.path.insert(0, str(REPO / "tests" / "docs_examples"))

from docs_run import run_docs_suites, shared_docs_run  # noqa: E402


def _verdicts(junit: Path) -> dict[str, tuple[str, str]]:
    """nodeid -> (outcome, message) from a JUnit XML report."""
    found: dict[str, tuple[str, str]] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome, message = child.tag, child.get("message", "")
        found[f"{case.get('classname')}::{case.get('name')}"] = (outcome, message)
    return found


def _twice(cwd: Path, out: Path, args: list[str], env: dict[str, str]) -> tuple[dict[str, tuple[str, str]], ...]:
    runs = []
    for extra in ([], ["--semantictest-item-concurrency=1"]):
        junit = out / f"junit-{len(runs)}.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={junit}",
                        *args, *extra], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
        runs.append(_verdicts(junit))
    return tuple(runs)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "OPENAI_BASE_URL", "BASE_URL"))}


def test_examples_get_the_same_verdicts(tmp_path: Path) -> None:
    fast, slow = _twice(REPO, tmp_path, ["examples", "-o", f"cache_dir={tmp_path}"], _env())
    assert len(fast) > 20
    assert fast == slow


def test_the_docs_suites_get_the_same_verdicts(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The session's run of the docs' suites (shared with tests/docs_examples/test_seed_examples.py)
    against a one-by-one run of a fresh copy."""
    fast = _verdicts(Path(shared_docs_run(request)["junit"]))
    slow = _verdicts(Path(run_docs_suites(tmp_path / "one-by-one", "--semantictest-item-concurrency=1")["junit"]))
    assert len(fast) > 50
    assert {outcome for outcome, _ in fast.values()} >= {"passed", "skipped"}
    assert fast == slow, sorted(set(fast.items()) ^ set(slow.items()))
