"""Run the fidelity specs (``fidelity/*.highbar.yaml``) with highbar or with pytest; per-test verdicts.

Shared by ``test_highbar_fidelity.py`` (ours against the recorded verdicts in ``fidelity/verdicts.json``)
and ``bench/highbar_side_by_side.py`` (both tools side by side, and ``--record``). Each spec reads
``${FIDELITY_PORT}``, ``${FIDELITY_PYTHON}``, ``${FIDELITY_AGENT}`` (and for attach mode, files whose
name starts with ``attach_``, ``${FIDELITY_TRACES}`` and ``${FIDELITY_HOOK}``; the agent is started here).
A verdict is ``passed``, ``failed`` or ``error`` per test name, after highbar's late re-judging (ours:
JUnit's entry ``<test> (late call)`` for a test a late call turned, which the terminal summary's
"FAILED/ERROR by a late call" lines must agree with).

A spec may have sidecar files next to it: ``<stem>.variations.json`` (``[{trigger, count, variations}]``)
becomes the run folder's committed ``.highbar/variations.json``; ``<stem>.llm.json`` (a list of answers)
starts an OpenAI-compatible server on 127.0.0.1 that gives them, named by highbar's own variables
(``HIGHBAR_LLM_API_KEY``, ``HIGHBAR_LLM_BASE_URL``, ``HIGHBAR_LLM_MODEL``). For the specs in ``MESSAGES``
each test's first error or failure message is compared too (``normalize``d: trace paths, numbers).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import without_unused_plugins
from tests.ports import free_port

HERE = Path(__file__).resolve().parent
SPECS = HERE / "fidelity"
AGENT = HERE / "fidelity_agent.py"
HOOK = SPECS / "session_hook.py"
VERDICTS = SPECS / "verdicts.json"
# Command-line runs per spec: highbar's --runs N is --semantictest-highbar-runs N.
RUNS = {"p11_min_pass_cli_runs.highbar.yaml": 5}
# Specs pytest runs with -n 2 (highbar has no workers).
XDIST = {"p17_late_call_later_test_xdist.highbar.yaml"}
_MARKS = {"✓": "passed", "✗": "failed", "!": "error"}
_RESULT = re.compile(r"^    ([✓✗!]) (.+?)(?: \d+/\d+(?: \(min \d+\))?)?  \S+ms$")
_LATE = re.compile(r"^  ! (.+?): (now fails|is now unverified)")
_OUR_LATE = re.compile(r"^(FAILED|ERROR) by a late call: \S+?::(?:[^:]+::)?(.+?) - ")
LATE_ENTRY = " (late call)"
"""JUnit's entry for a test a late call turned: the test's name and this."""
_ERROR = re.compile(r"^      → (.+)$")
_VARIATIONS = re.compile(r" \(((?:\d+ of )?\d+ variations)\)$")
# Specs whose messages are compared as well as their verdicts.
MESSAGES = {"attach_p13_correlate_keys.highbar.yaml"}
LLM_KEY = "hb-fidelity-key-" + "5e2b" * 6
LLM_MODEL = "hb-fidelity-paraphraser"


def spec_files() -> list[Path]:
    return sorted(SPECS.glob("*.highbar.yaml"))


@contextmanager
def environment(spec: Path, work: Path) -> Iterator[dict[str, str]]:
    """The spec's ``${FIDELITY_*}`` values; an attach-mode spec's agent runs meanwhile."""
    port = free_port()
    env = {
        **os.environ,
        "FIDELITY_PORT": str(port),
        "FIDELITY_PYTHON": sys.executable,
        "FIDELITY_AGENT": str(AGENT),
        "FIDELITY_HOOK": str(HOOK),
        "COLUMNS": "400",
        "NO_COLOR": "1",
    }
    for name in ("PYTEST_ADDOPTS", "HIGHBAR_TRACES_URL"):
        env.pop(name, None)
    stem = spec.name.removesuffix(".highbar.yaml")
    variations = spec.with_name(f"{stem}.variations.json")
    if variations.exists():
        commit_variations(variations, work)
    answers = spec.with_name(f"{stem}.llm.json")
    llm = None
    if answers.exists():
        from tests.llm.fake_openai import FakeOpenAI, Reply

        llm = FakeOpenAI().start()
        for answer in json.loads(answers.read_text(encoding="utf-8")):
            llm.queue(Reply(content=answer))
        env.update(
            {"HIGHBAR_LLM_API_KEY": LLM_KEY, "HIGHBAR_LLM_BASE_URL": llm.url, "HIGHBAR_LLM_MODEL": LLM_MODEL}
        )
    agent = None
    if spec.name.startswith("attach_"):
        traces = work / "traces.jsonl"
        traces.write_text("")
        env["FIDELITY_TRACES"] = str(traces)
        agent = subprocess.Popen(
            [sys.executable, str(AGENT), "--port", str(port), "--traces", str(traces)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_port(port)
    try:
        yield env
    finally:
        if agent is not None:
            agent.terminate()
            agent.wait(10)
        if llm is not None:
            llm.stop()


def commit_variations(sidecar: Path, work: Path) -> None:
    """``[{trigger, count, variations}]`` as highbar's committed cache (its key: the sha256 of the pair)."""
    entries = {}
    for entry in json.loads(sidecar.read_text(encoding="utf-8")):
        payload = json.dumps({"trigger": entry["trigger"], "count": entry["count"]}, sort_keys=True)
        entries[hashlib.sha256(payload.encode()).hexdigest()[:16]] = entry
    (work / ".highbar").mkdir(exist_ok=True)
    (work / ".highbar" / "variations.json").write_text(json.dumps(entries, indent=2), encoding="utf-8")


def wait_port(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"the fidelity agent did not listen on port {port}")


def highbar_command(highbar: str, spec: Path) -> list[str]:
    runs = RUNS.get(spec.name)
    return [highbar, "run", str(spec), *(["--runs", str(runs)] if runs else [])]


def pytest_args(spec: Path, junit: Path) -> list[str]:
    """pytest's arguments for one spec (the test suite runs them in-process, ``run_ours`` in a subprocess)."""
    runs = RUNS.get(spec.name)
    return [
        str(spec),
        "-p",
        "no:cacheprovider",
        "-q",
        f"--junitxml={junit}",
        *(["--semantictest-highbar-runs", str(runs)] if runs else []),
        *(["-n", "2"] if spec.name in XDIST else []),
    ]


def pytest_command(spec: Path, junit: Path) -> list[str]:
    return [sys.executable, "-m", "pytest", *without_unused_plugins(()), *pytest_args(spec, junit)]


def run_highbar(highbar: str, spec: Path) -> tuple[int, dict[str, str], str]:
    """highbar's exit code, verdict per test name (late re-judging applied) and its output."""
    with tempfile.TemporaryDirectory() as tmp, environment(spec, Path(tmp)) as env:
        done = subprocess.run(
            highbar_command(highbar, spec), cwd=tmp, env=env, capture_output=True, text=True, timeout=300
        )
    return done.returncode, parse_highbar(done.stdout), done.stdout + done.stderr


def _name_and_variations(title: str) -> tuple[str, str | None]:
    """highbar's title without its ``(4 of 3 variations)``, and that count in words."""
    found = _VARIATIONS.search(title)
    return (title[: found.start()], found.group(1)) if found else (title, None)


def highbar_variations(out: str) -> dict[str, str]:
    """What highbar's titles say was tested, per test: ``3 variations``, ``4 of 3 variations``."""
    shown = (_name_and_variations(m.group(2)) for line in out.splitlines() if (m := _RESULT.match(line)))
    return {name: tested for name, tested in shown if tested}


def parse_highbar(out: str) -> dict[str, str]:
    verdicts: dict[str, str] = {}
    for line in out.splitlines():
        if found := _RESULT.match(line):
            verdicts[_name_and_variations(found.group(2))[0]] = _MARKS[found.group(1)]
        elif (late := _LATE.match(line)) and late.group(1) in verdicts:
            verdicts[late.group(1)] = "failed" if late.group(2) == "now fails" else "error"
    return verdicts


def highbar_messages(out: str) -> dict[str, str]:
    """Each test's first error line (``→ ...``), normalized."""
    messages: dict[str, str] = {}
    current = None
    for line in out.splitlines():
        if found := _RESULT.match(line):
            current = _name_and_variations(found.group(2))[0]
        elif current is not None and (error := _ERROR.match(line)) and current not in messages:
            messages[current] = normalize(error.group(1))
    return messages


def normalize(text: str) -> str:
    """A message without what differs between two runs: trace file paths, ids and numbers."""
    text = re.sub(r"(record in|written to) \S+", r"\1 <traces>", text)
    text = re.sub(r"=(?:[0-9a-f]{32}|\d+)", "=<n>", text)
    return " ".join(text.split())


def with_late_failures(verdicts: dict[str, str], out: str) -> dict[str, str]:
    """Our verdicts (JUnit's, a late call's entry folded into its test: :func:`parse_junit`), checked
    against the tests the terminal summary lists as failed or errored by a late call: they must agree."""
    late = {m.group(2): m.group(1).lower() for line in out.splitlines() if (m := _OUR_LATE.match(line))}
    disagree = {name: (verdicts.get(name), word) for name, word in late.items() if verdicts.get(name) != word}
    assert not disagree, f"JUnit and the terminal disagree on late calls (JUnit, terminal): {disagree}"
    return verdicts


def run_ours(spec: Path) -> tuple[int, dict[str, str], str]:
    """pytest's exit code, verdict per test name and its output."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        copy = work / spec.name
        shutil.copy(spec, copy)
        (work / "pytest.ini").write_text("[pytest]\n")
        junit = work / "junit.xml"
        with environment(spec, work) as env:
            done = subprocess.run(
                pytest_command(copy, junit), cwd=work, env=env, text=True, timeout=300, capture_output=True
            )
        verdicts = parse_junit(junit) if junit.exists() else {}
    return done.returncode, with_late_failures(verdicts, done.stdout), done.stdout + done.stderr


def junit_messages(path: Path) -> dict[str, str]:
    """Each test's error or failure text, normalized."""
    return {
        case.get("name", ""): normalize(
            " ".join(
                (child.text or "") + " " + child.get("message", "")
                for child in case
                if child.tag in ("error", "failure")
            )
        )
        for case in ET.parse(path).iter("testcase")
    }


def junit_variations(path: Path) -> dict[str, str]:
    """Our ``variations: tested`` property per test (highbar's title count)."""
    return {
        case.get("name", ""): prop.get("value", "")
        for case in ET.parse(path).iter("testcase")
        for prop in case.iter("property")
        if prop.get("name") == "variations: tested"
    }


def parse_junit(path: Path) -> dict[str, str]:
    verdicts: dict[str, str] = {}
    for case in ET.parse(path).iter("testcase"):
        kinds = {child.tag for child in case}
        status = next(
            (
                word
                for tag, word in (("error", "error"), ("failure", "failed"), ("skipped", "skipped"))
                if tag in kinds
            ),
            "passed",
        )
        name = case.get("name", "")
        if name.endswith(LATE_ENTRY) and status != "passed":  # a late call turned the test it names
            name = name.removesuffix(LATE_ENTRY)
        verdicts[name] = status
    return verdicts
