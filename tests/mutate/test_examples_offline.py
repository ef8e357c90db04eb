"""What the examples must do under mutation: ``python -m pytest examples --semantictest-mutate`` runs
offline with the replay cache, the example agents receive no request while it mutates (they log each
request they get: ``examples/agents/request_log.py``; ``phase_marks`` marks the phases in the same
log), every example file gets a score, and two xdist workers give the same scores as one process."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.mutate.pytest_glue import READS_SPANS
from pytest_semantictest.mutate.score import JUDGE_OFFLINE
from tests.main_command import main_command_run, mutate_run, mutation_run

PHASES = {
    "record-start": "record",
    "record-end": "mutation",
    "setup-done": "call",
    "call-done": "after",
    "teardown-start": "teardown",
    "teardown-end": "after",
    "teardown-done": "after",
}
"""The phase each mark of ``tests/mutate/phase_marks.py`` begins."""
TASK_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""The A2A tasks' ids, in a survivor's ``where`` (a new one each run)."""
SCORE = re.compile(r"^score (\S+): (\d+/\d+ = [0-9.]+|no mutants)$", re.M)


def phases(log: Path) -> dict[str, list[str]]:
    """The requests of the log by the phase of the test (of the process that served them) they came
    in; ``elsewhere``: served by a process that ran no test (an xdist controller's; each worker starts
    its own example agents)."""
    lines = [line.split(" ", 2) for line in log.read_text(encoding="utf-8").splitlines()]
    testing = {pid for pid, who, _ in lines if who == "MARK"}
    where: dict[str, str] = {}
    found: dict[str, list[str]] = {}
    for pid, who, rest in lines:
        if who == "MARK":
            where[pid] = PHASES[rest.split(" ", 1)[0]]
        else:
            phase = where.get(pid, "session") if pid in testing else "elsewhere"
            found.setdefault(phase, []).append(f"{who} {rest}")
    return found


def requests(log: Path) -> Counter[str]:
    """Each agent's requests by method (paths hold task ids, new each run)."""
    return Counter(
        " ".join(line.split(" ")[1:3])
        for line in log.read_text(encoding="utf-8").splitlines()
        if " MARK " not in line
    )


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def mutation_records(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Each test's mutation record without its times and task ids."""
    return {
        r["id"]: json.loads(
            TASK_ID.sub(
                "<task>", json.dumps({k: v for k, v in r["mutation"].items() if not k.endswith("_s")})
            )
        )
        for r in found
    }


def mutated(out: Path, name: str, *args: str) -> tuple[str, list[dict[str, Any]]]:
    """The examples with ``--semantictest-mutate`` and ``args``: their output and results."""
    done = mutate_run(out, name, *args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout, results(out / f"{name}.jsonl")


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The examples as they are (README's main command, run once for the session: its requests logged)
    and once with ``--semantictest-mutate`` (also once for the session, whichever worker asks first)."""
    found = mutation_run(request)  # (first: README's main command starts at the same time elsewhere)
    assert found["code"] == 0, found["stdout"][-3000:] + found["stderr"]
    plain = main_command_run(request)
    assert plain["code"] == 0, plain["stdout"][-3000:] + plain["stderr"]
    out = Path(found["out"])
    return {
        "out": out,
        "stdout": found["stdout"],
        "mutated": results(out / "mutate.jsonl"),
        "plain": results(Path(plain["results"])),
        "plain_log": Path(plain["requests"]),
    }


def assert_no_request_while_mutating(out: Path, name: str) -> None:
    """No agent request in any test's mutation phase: each came while a test ran against its agent."""
    found = phases(out / f"{name}.log")
    assert found.get("mutation", []) == []
    assert len(found["record"]) > 30  # the counter counts: each test's own run reached its agent
    assert {line.split(" ")[0] for line in found["record"]} == {
        "chat",
        "compliance",
        "a2a-sdk",
        "a2a-webagents",
        "realtime",
    }
    # besides the tests' runs only the compliance conftest undoing a case's setup (its teardown)
    assert set(found) <= {"record", "teardown"}, {k: v[:3] for k, v in found.items()}
    assert all(
        re.fullmatch(r"compliance (PUT|DELETE) /agents/[\w-]+", line) for line in found.get("teardown", [])
    )


def test_the_mutation_phase_sends_no_request_to_any_example_agent(runs: dict[str, Any]) -> None:
    assert_no_request_while_mutating(runs["out"], "mutate")
    # wherever a mutation run replays, it sends what a run without it sends, nothing more
    assert requests(runs["out"] / "mutate.log") == requests(runs["plain_log"])
    mutants = sum(r["mutation"]["total"] + len(r["mutation"]["left_out"]) for r in runs["mutated"])
    assert mutants > 200


def test_the_mutation_phase_takes_less_time_than_the_run_against_the_agents(runs: dict[str, Any]) -> None:
    """(``bench/bench_mutate.py`` prints the figures: about 0.4 of it.)"""
    normal = sum(r["mutation"]["normal_s"] for r in runs["mutated"])
    mutating = sum(r["mutation"]["mutation_s"] for r in runs["mutated"])
    assert 0 < mutating < normal
    phase = re.search(
        r"normal phase \(against the agent, recording\): ([0-9.]+)s; mutation phase \(replayed, "
        r"\d+ mutants\): ([0-9.]+)s",
        runs["stdout"],
    )
    assert phase and float(phase[2]) < float(phase[1])


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


XDIST_LEFT_OUT = tuple(f"--ignore=examples/{where}" for where in ("traces", "highbar", "yao", "mcp/tools.md"))
"""The examples the xdist mutation run leaves out, each run under xdist by its own tests
(``tests/traces``, ``tests/highbar``, ``tests/yao``), or not affected by it (tools.md starts its stdio
server for each case, in whichever worker runs it). The MCP examples over HTTP stay: this is the one run of
them under xdist (each worker starts its own example MCP server). Each worker still starts every example
agent: the folders that start them are collected by the workers, not named to the controller, which would
start them itself."""


def test_two_xdist_workers_give_the_scores_of_one_process(runs: dict[str, Any]) -> None:
    stdout, found = mutated(runs["out"], "xdist", "-n", "2", *XDIST_LEFT_OUT)
    workers = {
        line.split(" ")[0]
        for line in (runs["out"] / "xdist.log").read_text().splitlines()
        if " MARK " in line
    }
    assert len(workers) == 2  # both workers ran tests (and started their own example agents)
    assert_no_request_while_mutating(runs["out"], "xdist")
    files = {r["file"] for r in found}
    assert len(files) >= 5 and len([f for f in files if f.startswith("examples/mcp/")]) == 3, files
    alone = [r for r in runs["mutated"] if r["file"] in files]
    assert mutation_records(found) == mutation_records(alone)
    assert SCORE.findall(stdout) == [s for s in SCORE.findall(runs["stdout"]) if s[0] in files]


def test_a_setup_reply_is_mutated_with_the_effect_it_has_on_every_test_of_the_file(
    runs: dict[str, Any],
) -> None:
    """rest_api.json's setup logs in once for the file: a login that times out fails the setup, which
    errors every test (killed in each); a login answered with HTTP 500 is caught by the test that reads
    the session it gives and survives in those that do not read it."""
    records = {r["id"].split("::")[-1]: r["mutation"] for r in runs["mutated"] if "rest_api.json" in r["id"]}
    for name in ("get-user", "create-post", "authenticated-request"):
        coverage = records[name]["coverage"]
        assert coverage["file setup (every test of the file errors)"] == ["slow_reply"], (name, coverage)
        assert not [m for m in records[name]["survived"] if m["kind"] == "slow_reply"]
    assert not records["authenticated-request"]["survived"]
    (survivor,) = records["get-user"]["survived"]
    assert survivor["kind"] == "error_status" and "the file's setup, shared by its tests" in survivor["where"]


def test_a_test_that_reads_its_agents_spans_is_not_replayed(runs: dict[str, Any]) -> None:
    """The traces examples read the spans their agent exports: no replay can have them, so none is tried
    (it would wait for spans that never come) and each says why it was not mutated."""
    traced = [r for r in runs["mutated"] if "/traces/" in r["id"]]
    assert len(traced) >= 3
    assert {r["mutation"]["not_mutated"] for r in traced} == {READS_SPANS}, traced
