"""This run against a baseline results file: which tests regressed, improved, stayed the same, could
not be told apart, are new or are gone (docs/baseline.md has every rule and figure).

Per test, each figure both sides have is compared: the pass rate (Fisher's exact test, when either
side repeated the test), the deciding judge's scores and the latency (the rank-sum test, with two
or more values a side). A single run on both sides is compared by its outcome (passed -> failed is a
regression), a single score or latency by a fixed rule. The suite-wide decision corrects the
p-values for the number of tests compared (Holm), so a large suite does not cry wolf by chance.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..json_types import JSONValue
from ..stats import fisher_lower, holm, interval_text, rank_sum_lower
from . import results_file

KINDS = ("regressed", "improved", "inconclusive", "unchanged", "new", "gone")
KNOWN_VERSIONS = results_file.KNOWN_VERSIONS
ALPHA = 0.05
SCORE_RULE = 0.2
"""A single judge score on each side: a change of at least this much counts."""
LATENCY_RULE = (2.0, 250.0)
"""A single latency on each side: at least this many times slower *and* this many ms slower counts."""


class BaselineError(Exception):
    """The baseline cannot be used: missing, unreadable, or of a results format this version does not read."""


@dataclass(frozen=True, slots=True)
class Side:
    """One test's figures in one run."""

    outcome: str
    runs: tuple[str, ...]
    durations: tuple[float, ...]
    scores: tuple[float, ...]
    tokens: int | None = None

    @classmethod
    def of(cls, record: Mapping[str, JSONValue]) -> Side:
        runs = tuple(str(r) for r in record.get("runs") or [])
        durations = tuple(float(d) for d in record.get("run_durations_ms") or [])
        if not durations and isinstance(
            record.get("latency_ms"), (int, float)
        ):  # a spec test's pipeline time
            durations = (float(record["latency_ms"]),)
        scores = tuple(float(s) for s in record.get("run_scores") or [])
        if not scores and isinstance(record.get("score"), (int, float)):
            scores = (float(record["score"]),)
        usage = record.get("llm_usage")
        tokens = usage.get("tokens") if isinstance(usage, Mapping) else None
        return cls(str(record.get("outcome") or "unknown"), runs, durations, scores, tokens)

    @property
    def tally(self) -> tuple[int, int]:
        """(passed, runs): a single run counts as one."""
        if self.runs:
            return sum(1 for r in self.runs if r == "passed"), len(self.runs)
        return int(self.outcome == "passed"), 1

    def text(self) -> str:
        passed, total = self.tally
        parts = [self.outcome if total == 1 else f"{passed}/{total} ({interval_text(passed, total)})"]
        if self.scores:
            parts.append(f"score {statistics.fmean(self.scores):.2f}")
        if self.durations:
            parts.append(f"{statistics.median(self.durations):.0f} ms")
        if self.tokens:
            parts.append(f"{self.tokens} tokens")
        return ", ".join(parts)


@dataclass
class Change:
    """One test's comparison."""

    nodeid: str
    kind: str = "unchanged"
    reasons: list[str] = field(default_factory=list)
    p_worse: float | None = None
    """The test's smallest one-sided p-value for "worse" (Bonferroni over its figures); None: none tested."""
    p_better: float | None = None
    old: Side | None = None
    new: Side | None = None
    by_rule: str | None = None
    """``worse``/``better`` when a single-sample rule or an outcome decided (no p-value)."""

    def as_dict(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue] = {"change": self.kind, "reasons": self.reasons}
        if self.p_worse is not None:
            data["p_worse"] = round(self.p_worse, 6)
        if self.old is not None:
            data["old"] = self.old.text()
        return data


@dataclass
class Comparison:
    """Every test's change, what was compared and what was left out."""

    changes: dict[str, Change]
    baseline: str
    notes: list[str] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Change]:
        return [c for c in self.changes.values() if c.kind == kind]

    @property
    def regressed(self) -> list[Change]:
        return self.of_kind("regressed")


def load(path: Path) -> tuple[dict[str, dict[str, JSONValue]], list[str]]:
    """The records of a results file, or of every ``*.jsonl`` in a folder (per-job or per-worker
    files), by node id; and notes about what was left out. Raises BaselineError naming the problem.
    How the file is read and validated is ``results_file.py``'s (the rule for every file we read)."""
    if not path.exists():
        raise BaselineError(
            f"baseline {path} does not exist: write one with --semantictest-results={path} "
            "(on the main branch, see docs/ci.md)"
        )
    try:
        return results_file.load(path, "baseline")
    except results_file.ResultsFileError as exc:
        raise BaselineError(str(exc)) from None


def compare(
    old: Mapping[str, Mapping[str, JSONValue]],
    new: Mapping[str, Mapping[str, JSONValue]],
    baseline: str,
    ran_files: Iterable[str],
    alpha: float = ALPHA,
) -> Comparison:
    """Classify every test of either run (see the module doc)."""
    ran = set(ran_files)
    changes: dict[str, Change] = {}
    notes: list[str] = []
    for nodeid, record in new.items():
        change = Change(nodeid, new=Side.of(record))
        if nodeid not in old:
            change.kind, change.reasons = "new", ["not in the baseline"]
        else:
            change.old = Side.of(old[nodeid])
            _figures(change)
        changes[nodeid] = change
    not_run = 0
    for nodeid, record in old.items():
        if nodeid in new:
            continue
        if str(record.get("file") or nodeid.split("::")[0]) in ran:
            changes[nodeid] = Change(
                nodeid, "gone", ["in the baseline, not collected in this run"], old=Side.of(record)
            )
        else:
            not_run += 1
    if not_run:
        notes.append(f"{not_run} baseline test(s) of files this run did not select were not compared")
    worse = holm({c.nodeid: c.p_worse for c in changes.values() if c.p_worse is not None}, alpha)
    better = holm({c.nodeid: c.p_better for c in changes.values() if c.p_better is not None}, alpha)
    for change in changes.values():
        if change.kind in ("new", "gone", "inconclusive"):
            continue
        if change.by_rule == "worse" or change.nodeid in worse:
            change.kind = "regressed"
        elif change.by_rule == "better" or change.nodeid in better:
            change.kind = "improved"
        elif change.p_worse is not None and change.p_worse < alpha:
            change.kind = "inconclusive"
            change.reasons.append(f"not significant after correcting for {len(changes)} tests (Holm)")
    return Comparison(changes, baseline, notes)


def _figures(change: Change) -> None:
    """Compare the figures both sides of ``change`` have; sets its p-values, rule and reasons."""
    old, new = change.old, change.new
    assert old is not None and new is not None
    if "skipped" in (old.outcome, new.outcome):
        change.kind = "inconclusive"
        change.reasons.append(
            f"not compared: skipped {'in the baseline' if old.outcome == 'skipped' else 'now'}"
        )
        return
    worse: list[float] = []
    better: list[float] = []
    (kept, total_old), (passed, total_new) = old.tally, new.tally
    if total_old > 1 or total_new > 1:
        p_lower, p_higher = (
            fisher_lower(passed, total_new, kept, total_old),
            fisher_lower(kept, total_old, passed, total_new),
        )
        worse.append(p_lower)
        better.append(p_higher)
        if passed * total_old != kept * total_new:
            change.reasons.append(
                f"pass rate {kept}/{total_old} -> {passed}/{total_new} "
                f"(Fisher p={min(p_lower, p_higher):.3g})"
            )
    elif (old.outcome == "passed") != (new.outcome == "passed"):
        change.by_rule = "worse" if old.outcome == "passed" else "better"
        change.reasons.append(f"outcome {old.outcome} -> {new.outcome}")
    for name, before, after, lower_is_worse in (
        ("score", old.scores, new.scores, True),
        ("latency", old.durations, new.durations, False),
    ):
        if not before or not after:
            continue
        if len(before) >= 2 and len(after) >= 2:
            p_down, p_up = (
                rank_sum_lower(list(after), list(before)),
                rank_sum_lower(list(before), list(after)),
            )
            worse.append(p_down if lower_is_worse else p_up)
            better.append(p_up if lower_is_worse else p_down)
            change.reasons.append(
                f"{name} {_mid(before, name)} -> {_mid(after, name)} (rank-sum p={min(p_down, p_up):.3g})"
            )
            continue
        rule = _single_rule(name, statistics.fmean(before), statistics.fmean(after))
        if rule is not None and change.by_rule is None:
            change.by_rule = rule
            change.reasons.append(
                f"{name} {_mid(before, name)} -> {_mid(after, name)} (one value a side: "
                f"{'a change of at least 0.2' if name == 'score' else 'at least 2x and 250 ms slower'})"
            )
    if worse:
        change.p_worse = min(1.0, min(worse) * len(worse))
        change.p_better = min(1.0, min(better) * len(better))


def _single_rule(name: str, before: float, after: float) -> str | None:
    if name == "score":
        return "worse" if before - after >= SCORE_RULE else "better" if after - before >= SCORE_RULE else None
    factor, gap = LATENCY_RULE
    if after >= before * factor and after - before >= gap:
        return "worse"
    if before >= after * factor and before - after >= gap:
        return "better"
    return None


def _mid(values: tuple[float, ...], name: str) -> str:
    return f"{statistics.fmean(values):.2f}" if name == "score" else f"{statistics.median(values):.0f} ms"
