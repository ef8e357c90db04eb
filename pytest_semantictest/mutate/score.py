"""Mutation outcomes and scores: a mutant is killed when the test fails or errors against it,
survived when it still passes, left out when its run could not decide (a request the normal run
never sent, a judged check whose judge cannot answer offline, a skip)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NotRequired, TypedDict

from ..model import Outcome, Verdict

KILLED, SURVIVED, LEFT_OUT = "killed", "survived", "left out"
JUDGE_OFFLINE = "judged check not answerable offline (replay cache miss for the mutated reply)"


class Mutant(TypedDict):
    """One mutant of a test: the mutation (``kind``, the ``change`` in words), the reply it was made of
    (``where``), its ``outcome`` and, when left out, ``why``."""

    kind: str
    change: str
    where: str
    outcome: str
    why: str


class MutationRecord(TypedDict):
    """One test's mutation record (plain JSON: xdist carries it to the controller in the setup report)."""

    killed: int
    total: int
    score: float | None
    survived: list[Mutant]
    left_out: list[Mutant]
    not_mutated: NotRequired[str]
    """Why the test was not mutated at all."""
    coverage: NotRequired[dict[str, list[str]]]
    """Per check (as its failures name it), the kinds of mutation it failed on: what it would catch."""
    teardown_mutants: NotRequired[int]
    """How many of ``total`` mutated the file's teardown replies (its last test's record)."""
    normal_s: NotRequired[float]
    mutation_s: NotRequired[float]


def outcome(verdict: Verdict, unrecorded: list[str], judge_misses: int = 0) -> tuple[str, str]:
    """The mutant's outcome and, when left out, why. ``judge_misses``: the LLM calls of its run that the
    replay cache had no answer for (counted where the miss is raised, whatever any message says). Such a
    run is killed only by a check that failed on its own (a failure without a step error behind it: an
    LLM error is never a failure), whatever the judge would have said; else it is left out."""
    if unrecorded:
        return LEFT_OUT, f"the run sent a request the normal run never did ({unrecorded[0]})"
    if judge_misses and not any(failure.cause is None for failure in verdict.failures):
        return LEFT_OUT, JUDGE_OFFLINE
    if verdict.outcome is Outcome.PASSED:
        return SURVIVED, ""
    if verdict.outcome is Outcome.SKIPPED:
        return LEFT_OUT, f"skipped: {verdict.skip_reason or ''}"
    return KILLED, ""


def summary(mutants: list[Mutant], coverage: Mapping[str, Iterable[str]] | None = None) -> MutationRecord:
    """One test's record: killed/total, the score, survivors and left-out mutants, and per check the
    kinds of mutation it caught."""
    decided = [m for m in mutants if m["outcome"] != LEFT_OUT]
    killed = sum(m["outcome"] == KILLED for m in decided)
    return {
        "coverage": _caught(coverage or {}),
        "killed": killed,
        "total": len(decided),
        "score": round(killed / len(decided), 3) if decided else None,
        "survived": [m for m in decided if m["outcome"] == SURVIVED],
        "left_out": [m for m in mutants if m["outcome"] == LEFT_OUT],
    }


def _caught(coverage: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """Per check (in name order), the kinds of mutation it caught, each once, sorted."""
    return {check: sorted(set(kinds)) for check, kinds in sorted(coverage.items())}


def totals(records: Iterable[MutationRecord]) -> tuple[int, int]:
    found = list(records)
    return sum(r["killed"] for r in found), sum(r["total"] for r in found)


def score_text(killed: int, total: int) -> str:
    return f"{killed}/{total} = {killed / total:.2f}" if total else "no mutants"


def render(
    tests: Mapping[str, MutationRecord],
    files: Mapping[str, list[str]],
    timing: Mapping[str, float],
    notes: list[str],
) -> list[str]:
    """The terminal section: per test, survivors, per file, the run, and the two phases' times. Files
    in name order (xdist workers report in no fixed order), a file's tests in the order they came."""
    lines: list[str] = []
    for nodeid in (n for path in sorted(files) for n in files[path]):
        lines += _test_lines(nodeid, tests[nodeid])
    lines.append("")
    for path, nodeids in sorted(files.items()):
        lines.append(f"score {path}: {score_text(*totals(tests[n] for n in nodeids))}")
    lines.append(f"score of the run: {score_text(*totals(tests.values()))}")
    lines.append(
        f"normal phase (against the agent, recording): {timing.get('normal', 0.0):.3f}s; "
        f"mutation phase (replayed, {int(timing.get('mutants', 0))} mutants): {timing.get('mutation', 0.0):.3f}s"
    )
    lines += notes
    return lines


def _test_lines(nodeid: str, record: MutationRecord) -> list[str]:
    """One test's mutants: killed of total, each survivor and left-out mutant, why it was not
    mutated, and what each check caught."""
    lines = [f"{nodeid}: killed {record['killed']}/{record['total']}"]
    for mutant in record["survived"]:
        lines.append(f"    SURVIVED {mutant['kind']}: {mutant['change']} ({mutant['where']})")
    for mutant in record["left_out"]:
        lines.append(f"    left out {mutant['kind']}: {mutant['why']}")
    if record.get("not_mutated"):
        lines.append(f"    not mutated: {record['not_mutated']}")
    for check, kinds in (record.get("coverage") or {}).items():
        lines.append(f"    {check} catches: {', '.join(kinds)}")
    return lines
