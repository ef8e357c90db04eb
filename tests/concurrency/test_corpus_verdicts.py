"""The same verdicts at once and one by one, on the whole corpus: the examples (``examples/``) and every
spec file the tests use as data (the docs' page suites ``tests/docs_examples/pages`` and suites, read from the documentation, the
reference runner's suites where a checkout of it is named (``SEMANTICTEST_REFERENCE_CHECKOUT``), the highbar fidelity specs
``tests/highbar/fidelity``), each corpus run in one subprocess per mode, against the loopback servers and
agents their own tests use (the examples at once: README.md's main command; one by one: the same command's
mutation run, which records each test alone; ``tests/main_command.py`` shares both). Per item: the outcome and the first line of its message."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from xml.etree import ElementTree

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "agents"))
sys.path.insert(0, str(REPO / "tests" / "docs_examples"))

import docs_server  # noqa: E402
import docs_text  # noqa: E402
import seed_copies  # noqa: E402

from tests.helpers import without_unused_plugins  # noqa: E402
from tests.main_command import main_command_run, mutation_run  # noqa: E402
from tests.ports import free_port  # noqa: E402
from tests.shared import REFERENCE_CHECKOUT_ENV, needs_docs  # noqa: E402

FIDELITY = REPO / "tests" / "highbar" / "fidelity"
FIDELITY_AGENT = REPO / "tests" / "highbar" / "fidelity_agent.py"
Verdicts = dict[str, tuple[str, str]]
_VOLATILE = re.compile(
    r"\b[0-9a-f]{32}\b|/tmp/semantictest-traces-\w+\.jsonl|(?<=127\.0\.0\.1:)\d+|(?<=_id=)\d+|(?<=trace record in )\S+"
)
"""What differs between any two runs: execution ids, the temp trace file a started agent writes (and the
attached agent's, in each run's folder), ports, the ids a session hook derives from the execution id
(``account_id=3221855``)."""


def _verdicts(junit: Path) -> Verdicts:
    """nodeid -> (outcome, first line of its message) from a JUnit XML report."""
    found: Verdicts = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome, message = (
                    child.tag,
                    _VOLATILE.sub("*", (child.get("message", "").splitlines() or [""])[0]),
                )
        found[f"{case.get('classname')}::{case.get('name')}"] = (outcome, message)
    return found


def _env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            (
                "PYTEST_ADDOPTS",
                "PYTEST_PLUGINS",
                "OPENAI_BASE_URL",
                "BASE_URL",
                "HIGHBAR_TRACES_URL",
                seed_copies.NO_JUDGE_KEY,
            )
        )
    }


@contextmanager
def _attach_agent(traces: Path) -> Iterator[int]:
    """The fidelity agent the attach-mode specs talk to (they do not start it), writing to ``traces``."""
    port = free_port()
    traces.write_text("")
    agent = subprocess.Popen(
        [sys.executable, str(FIDELITY_AGENT), "--port", str(port), "--traces", str(traces)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and agent.poll() is None, "the fidelity agent did not listen"
            time.sleep(0.05)
        yield port
    finally:
        agent.terminate()
        agent.wait(10)


CORPORA = {
    "docs": (docs_text.PAGES, "*.json"),
    "upstream": (Path(os.environ.get(REFERENCE_CHECKOUT_ENV) or "/nonexistent") / "test-examples", "*.json"),
    "fidelity": (FIDELITY, "*.highbar.yaml"),
}
"""Folder in the staged copy -> (where the tests keep those spec files, which)."""


def _stage(root: Path, corpora: tuple[str, ...]) -> None:
    """The spec files of ``corpora`` under ``root`` (one folder each; "seed": the docs' seed copies at the
    top), with the docs' ini (no judge key: judged tests skip)."""
    if "seed" in corpora:
        seed_copies.stage(root)
    else:
        seed_copies.write_ini(root)
    for name in corpora:
        if name == "seed":
            continue
        source, pattern = CORPORA[name]
        folder = root / name
        folder.mkdir()
        for spec in source.glob(pattern):
            text = (
                spec.read_text(encoding="utf-8")
                if name != "docs"
                else json.dumps(docs_text.page_suite(spec.name))
            )
            if (
                name == "upstream"
            ):  # as its own test runs them: the public API they call, on a loopback server
                text = text.replace("https://jsonplaceholder.typicode.com", "${env.BASE_URL}")
            if spec.name.startswith("attach_"):  # the agent this test runs, not the one a spec starts
                text = text.replace("${FIDELITY_PORT}", "${FIDELITY_ATTACH_PORT}")
            (folder / spec.name).write_text(text, encoding="utf-8")


def test_examples_get_the_same_verdicts(request: pytest.FixtureRequest) -> None:
    """The main command's own run (shared with the test of its output) against one by one: the same
    command's mutation run (shared with the mutation tests), which records each test alone."""
    shared, alone = main_command_run(request), mutation_run(request)
    for run in (shared, alone):
        assert Path(run["junit"]).exists(), run["stdout"][-3000:] + run["stderr"]
    fast, slow = _verdicts(Path(shared["junit"])), _verdicts(Path(alone["junit"]))
    assert len(fast) > 20
    assert fast == slow, sorted(set(fast.items()) ^ set(slow.items()))


@contextmanager
def _services(work: Path) -> Iterator[dict[str, str]]:
    """The environment the staged corpus needs, with its servers and agents running meanwhile: the docs'
    APIs (the docs' suites, the reference runner's suites) and the fidelity agent the attach-mode specs use
    (the other fidelity specs start their own, on ``FIDELITY_PORT``)."""
    server, base = docs_server.start()
    traces = work / "attach-traces.jsonl"
    env = {
        **_env(),
        **docs_server.environment(base),
        "FIDELITY_PORT": str(free_port()),
        "FIDELITY_PYTHON": sys.executable,
        "FIDELITY_AGENT": str(FIDELITY_AGENT),
        "FIDELITY_HOOK": str(FIDELITY / "session_hook.py"),
        "FIDELITY_TRACES": str(traces),
    }
    try:
        with _attach_agent(traces) as port:
            yield {**env, "FIDELITY_ATTACH_PORT": str(port)}
    finally:
        server.shutdown()


def _both_modes(tmp_path: Path, corpora: tuple[str, ...]) -> tuple[Verdicts, Verdicts]:
    """(default, one by one) verdicts of the staged ``corpora``, both runs at the same time (each with its
    own copy, servers and agents: the ports in messages are masked), so it takes as long as the slower."""
    runs: list[tuple[subprocess.Popen[str], Path]] = []
    with ExitStack() as stack:
        for mode, extra in (("fast", []), ("slow", ["--semantictest-items-at-once=1"])):
            work = tmp_path / mode
            work.mkdir()
            _stage(work, corpora)
            env = stack.enter_context(_services(work))
            junit = tmp_path / f"junit-{mode}.xml"
            # p11 wants --semantictest-highbar-runs 5 (its own test gives it): here it is a collection error, in both
            command = [
                sys.executable,
                "-m",
                "pytest",
                *without_unused_plugins(()),
                "-p",
                "no:cacheprovider",
                "-q",
                f"--junitxml={junit}",
                "--continue-on-collection-errors",
                *extra,
            ]
            runs.append(
                (
                    subprocess.Popen(
                        command,
                        cwd=work,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                    ),
                    junit,
                )
            )
        outputs = [process.communicate(timeout=300)[0] for process, _ in runs]
    for (_, junit), output in zip(runs, outputs):
        assert junit.exists(), output[-3000:]
    fast, slow = (_verdicts(junit) for _, junit in runs)
    return fast, slow


@needs_docs
def test_the_docs_and_reference_suites_get_the_same_verdicts(tmp_path: Path) -> None:
    fast, slow = _both_modes(tmp_path, ("seed", "docs", "upstream"))
    files = {nodeid.split("::")[0] for nodeid in fast}
    assert any(name.startswith("docs.") for name in files)
    assert any(name.startswith("upstream.") for name in files) == CORPORA["upstream"][0].is_dir()
    assert len(fast) > 250
    assert {outcome for outcome, _ in fast.values()} >= {"passed", "failure", "skipped"}
    assert fast == slow, sorted(set(fast.items()) ^ set(slow.items()))


def test_the_highbar_fidelity_specs_get_the_same_verdicts(tmp_path: Path) -> None:
    """Agents that tag their records, that tag some of them (a thread losing the tag), that tag them
    with the previous test's id or not at all; late calls; attach mode."""
    fast, slow = _both_modes(tmp_path, ("fidelity",))
    for spec in FIDELITY.glob("*.highbar.yaml"):  # every spec ran (p11 as a collection error)
        assert any(spec.name.split(".")[0] in nodeid for nodeid in fast), spec.name
    assert {outcome for outcome, _ in fast.values()} >= {"passed", "failure", "error"}
    assert fast == slow, sorted(set(fast.items()) ^ set(slow.items()))
