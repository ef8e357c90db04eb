"""The issue's "Done when" for the examples: ``python -m pytest examples --semantictest-mutate`` runs
offline with the replay cache, the example agents receive no request while it mutates (they log each
request they get: ``examples/agents/request_log.py``; ``phase_marks`` marks the phases in the same
log), and every example file gets a score."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.mutate.score import JUDGE_OFFLINE
from tests.main_command import run_examples

VARIABLE = "EXAMPLE_AGENT_REQUEST_LOG"
PHASES = {"record-start": "record", "record-end": "mutation", "setup-done": "call", "call-done": "after",
          "teardown-start": "teardown", "teardown-end": "after", "teardown-done": "after"}
"""The phase each mark of ``tests/mutate/phase_marks.py`` begins."""
SCORE = re.compile(r"^score (\S+): (\d+/\d+ = [0-9.]+|no mutants)$", re.M)


def phases(log: Path) -> dict[str, list[str]]:
    """The requests of the log by the phase of the test (of its process) they came in."""
    where: dict[str, str] = {}
    found: dict[str, list[str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        pid, who, rest = line.split(" ", 2)
        if who == "MARK":
            where[pid] = PHASES[rest.split(" ", 1)[0]]
        else:
            found.setdefault(where.get(pid, "session"), []).append(f"{who} {rest}")
    return found


def requests(log: Path) -> Counter[str]:
    """Each agent's requests by method (paths hold task ids, new each run)."""
    return Counter(" ".join(line.split(" ")[1:3]) for line in log.read_text(encoding="utf-8").splitlines()
                   if " MARK " not in line)


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The examples once as they are and once with ``--semantictest-mutate``, each agent request logged."""
    out = tmp_path_factory.mktemp("examples")
    with pytest.MonkeyPatch.context() as env:
        env.setenv(VARIABLE, str(out / "plain.log"))
        plain = run_examples(out / "plain", f"--semantictest-results={out / 'plain.jsonl'}")
        env.setenv(VARIABLE, str(out / "mutate.log"))
        mutated = run_examples(out / "mutate", "--semantictest-mutate", "-p", "tests.mutate.phase_marks",
                               f"--semantictest-results={out / 'mutate.jsonl'}")
    assert plain.returncode == 0, plain.stdout[-3000:] + plain.stderr[-3000:]
    assert mutated.returncode == 0, mutated.stdout[-3000:] + mutated.stderr[-3000:]
    return {"out": out, "stdout": mutated.stdout, "plain": results(out / "plain.jsonl"),
            "mutated": results(out / "mutate.jsonl")}


def test_the_mutation_phase_sends_no_request_to_any_example_agent(runs: dict[str, Any]) -> None:
    out: Path = runs["out"]
    found = phases(out / "mutate.log")
    assert found.get("mutation", []) == []
    assert len(found["record"]) > 40  # the counter counts: each test's own run reached its agent
    assert {line.split(" ")[0] for line in found["record"]} >= {"chat", "compliance", "a2a-sdk", "a2a-webagents",
                                                                 "realtime"}
    # besides the tests' runs only the compliance conftest undoing a case's setup (its teardown)
    assert set(found) <= {"record", "teardown"}, {k: v[:3] for k, v in found.items()}
    assert all(re.fullmatch(r"compliance (PUT|DELETE) /agents/[\w-]+", line) for line in found.get("teardown", []))
    # wherever a mutation run replays, it sends what a run without it sends, nothing more
    assert requests(out / "mutate.log") == requests(out / "plain.log")
    mutants = sum(r["mutation"]["total"] + len(r["mutation"]["left_out"]) for r in runs["mutated"])
    assert mutants > 200


def test_every_example_file_gets_a_score(runs: dict[str, Any]) -> None:
    files = {record["file"] for record in runs["plain"]}
    assert len(files) >= 10
    scored = dict(SCORE.findall(runs["stdout"]))
    assert set(scored) == files, runs["stdout"][-3000:]
    assert re.search(r"^score of the run: \d+/\d+ = 0\.\d\d$", runs["stdout"], re.M)
    assert {r["id"] for r in runs["mutated"]} == {r["id"] for r in runs["plain"]}
    assert all(r["outcome"] == "passed" for r in runs["mutated"])


def test_a_judged_check_of_an_example_leaves_its_unrecorded_mutants_out(runs: dict[str, Any]) -> None:
    """The judged example's text mutants have no cached judge answer: left out (counted where the miss
    is raised), not killed, and no LLM was asked (the run's LLM endpoint is a dead port)."""
    judged = next(r for r in runs["mutated"] if r["id"].endswith("chat-basics.md::5. Judged reply"))
    left_out = judged["mutation"]["left_out"]
    assert {m["kind"] for m in left_out} == {"reply_empty", "reply_sure", "reply_refusal"}
    assert {m["why"] for m in left_out} == {JUDGE_OFFLINE}
    assert "semantictest: 0 LLM calls" in runs["stdout"]
    assert "judged checks: asked of the replay cache only" in runs["stdout"]
