"""This run against a baseline: which tests regressed, improved, changed, could not be told apart,
are new or are gone (docs/baseline.md has every rule and figure).

The gate decides on pass rates only: per test, Fisher's exact test of the two sides' runs, one-sided
each way, corrected across the run by Holm's procedure over the tests that could reach significance
(Tarone). A baseline may be several runs (several results files, or the history ``semantictest merge
--history`` builds): a test's runs are pooled, so a single run's flip against a long stable history is
significant, and one against a single run is "changed, not enough runs to tell". Latency and judge
scores are compared in their own section (the rank-sum test, Holm-corrected in their own family);
they gate only when asked, with the least change that counts (``--semantictest-fail-on-slower``,
``--semantictest-fail-on-score-drop``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..json_types import JSONValue
from ..stats import fisher_lower, fisher_lower_min, holm, interval_text, rank_sum_lower, tarone_holm
from . import results_file

KINDS = ("regressed", "improved", "changed", "inconclusive", "unchanged", "new", "gone")
KNOWN_VERSIONS = results_file.KNOWN_VERSIONS
ALPHA = 0.05
COUNTED = ("passed", "failed", "error", "xfailed", "xpassed")
"""Run outcomes a pass rate counts (a skipped run is no evidence either way)."""


class BaselineError(Exception):
    """The baseline cannot be used: missing, unreadable, or of a results format this version does not read."""


@dataclass(frozen=True, slots=True)
class Side:
    """One test's figures in one run (or in a baseline's pooled runs)."""

    outcome: str
    runs: tuple[str, ...]
    durations: tuple[float, ...]
    scores: tuple[float, ...]
    tokens: int | None = None

    @classmethod
    def of(cls, record: Mapping[str, JSONValue]) -> Side:
        runs = tuple(str(r) for r in record.get("runs") or [])
        durations = _run_values(record, "run_durations_ms", "latency_ms")  # or a spec test's pipeline
        scores = _run_values(record, "run_scores", "score")
        usage = record.get("llm_usage")
        tokens = usage.get("tokens") if isinstance(usage, Mapping) else None
        return cls(str(record.get("outcome") or "unknown"), runs, durations, scores, tokens)

    @property
    def tally(self) -> tuple[int, int]:
        """(passed, runs) over the runs a pass rate counts; a single run counts as one."""
        counted = [r for r in (self.runs or (self.outcome,)) if r in COUNTED]
        return sum(1 for r in counted if r == "passed"), len(counted)

    def rate(self) -> str:
        passed, total = self.tally
        return f"{passed}/{total}"

    def text(self) -> str:
        passed, total = self.tally
        parts = [self.outcome if total <= 1 else f"{passed}/{total} ({interval_text(passed, total)})"]
        if self.scores:
            parts.append(f"score {statistics.fmean(self.scores):.2f}")
        if self.durations:
            parts.append(f"{statistics.median(self.durations):.0f} ms")
        if self.tokens:
            parts.append(f"{self.tokens} tokens")
        return ", ".join(parts)


def _run_values(record: Mapping[str, JSONValue], key: str, single: str) -> tuple[float, ...]:
    """A figure's value per run (``key``), else the record's one value (``single``), else none."""
    values = tuple(float(v) for v in record.get(key) or [])
    if not values and isinstance(record.get(single), (int, float)):
        values = (float(record[single]),)
    return values


def fold(earlier: Mapping[str, JSONValue], later: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
    """One test's records of two runs as one record of all their runs (a baseline's history): runs,
    durations and scores pooled, the later run's other fields."""

    def each(record: Mapping[str, JSONValue], key: str, single: str) -> list[JSONValue]:
        values = record.get(key)
        if isinstance(values, list):
            return list(values)
        one = record.get(single)
        return [one] if one is not None else []

    pooled: dict[str, JSONValue] = dict(later)
    pooled["runs"] = each(earlier, "runs", "outcome") + each(later, "runs", "outcome")
    for key, single in (("run_durations_ms", "latency_ms"), ("run_scores", "score")):
        values = each(earlier, key, single) + each(later, key, single)
        if values:
            pooled[key] = values
    pooled["history"] = int(earlier.get("history") or 1) + int(later.get("history") or 1)
    return pooled


@dataclass
class Figure:
    """A latency or judge-score comparison of one test (its own report section)."""

    name: str
    before: str
    after: str
    direction: str
    """``slower``/``faster`` (latency), ``lower``/``higher`` (score), ``same``."""
    effect: float
    """Latency: the ratio of medians (new / old); score: the change of the means (new - old)."""
    p_worse: float | None = None
    p_better: float | None = None
    """One-sided rank-sum p-values; None with fewer than two values a side (not tested)."""
    significant: bool = False
    gates: bool = False

    def text(self) -> str:
        tested = (
            f"rank-sum p={min(self.p_worse, self.p_better or 1.0):.3g}"
            + ("" if self.significant else ", not significant after correction")
            if self.p_worse is not None
            else "one value a side: not tested"
        )
        return f"{self.name} {self.before} -> {self.after} ({self.direction}, {tested})"


@dataclass
class Change:
    """One test's comparison."""

    nodeid: str
    kind: str = "unchanged"
    reasons: list[str] = field(default_factory=list)
    p_worse: float | None = None
    """Fisher's one-sided p-value for "the pass rate fell"; None: not compared."""
    p_better: float | None = None
    least_worse: float = 1.0
    least_better: float = 1.0
    """The smallest p-values the margins allow (a test whose smallest is above the level is left out
    of the correction: it cannot be significant)."""
    old: Side | None = None
    new: Side | None = None
    figures: list[Figure] = field(default_factory=list)

    def as_dict(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue] = {"change": self.kind, "reasons": self.reasons}
        if self.p_worse is not None:
            data["p_worse"] = round(self.p_worse, 6)
        if self.old is not None:
            data["old"] = self.old.text()
        if self.figures:
            data["performance"] = [f.text() for f in self.figures]
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

    def figures(self) -> list[tuple[Change, Figure]]:
        """Every latency and score comparison that was significant, or that gates."""
        return [(c, f) for c in self.changes.values() for f in c.figures if f.significant or f.gates]

    @property
    def failing(self) -> list[str]:
        """What fails the gate: the regressions, and the latency or score changes asked to gate."""
        return [c.nodeid for c in self.regressed] + [
            f"{c.nodeid} ({f.name})" for c, f in self.figures() if f.gates
        ]


def load(path: Path) -> tuple[dict[str, dict[str, JSONValue]], list[str]]:
    """The records of a results file, or of every ``*.jsonl`` in a folder (per-job files, or several
    runs), by node id; a test in several files is one record of all their runs (:func:`fold`). And
    notes about what was left out. Raises BaselineError naming the problem. How a file is read and
    validated is ``results_file.py``'s (the rule for every file we read)."""
    if not path.exists():
        raise BaselineError(
            f"baseline {path} does not exist: write one with --semantictest-results={path} "
            "(on the main branch, see docs/ci.md)"
        )
    try:
        records, notes = results_file.load(path, "baseline", combine=fold)
    except results_file.ResultsFileError as exc:
        raise BaselineError(str(exc)) from None
    for nodeid, record in records.items():
        try:
            Side.of(record)
        except (TypeError, ValueError, AttributeError):
            raise BaselineError(
                f"baseline {path}: {nodeid} has a malformed figure (runs, run_durations_ms, run_scores, "
                "score or latency_ms): was it edited? Record the baseline again"
            ) from None
    return records, notes


def compare(
    old: Mapping[str, Mapping[str, JSONValue]],
    new: Mapping[str, Mapping[str, JSONValue]],
    baseline: str,
    ran_files: Iterable[str],
    alpha: float = ALPHA,
    slower: float | None = None,
    score_drop: float | None = None,
) -> Comparison:
    """Classify every test of either run (see the module doc); ``slower`` (a factor of the median
    latency) and ``score_drop`` (of the mean score) make such significant changes gate."""
    changes = {nodeid: _change_of(nodeid, record, old) for nodeid, record in new.items()}
    notes: list[str] = []
    not_run = _add_gone(changes, old, new, set(ran_files))
    if not_run:
        notes.append(f"{not_run} baseline test(s) of files this run did not select were not compared")
    _classify_pass_rates(
        [c for c in changes.values() if c.p_worse is not None and c.p_better is not None], alpha
    )
    _correct_figures(changes.values(), alpha, slower, score_drop)
    return Comparison(changes, baseline, notes)


def _change_of(
    nodeid: str, record: Mapping[str, JSONValue], old: Mapping[str, Mapping[str, JSONValue]]
) -> Change:
    """A test of this run: new, or compared with its baseline record (pass rate and figures)."""
    now = Side.of(record)
    if nodeid not in old:
        return Change(nodeid, "new", ["not in the baseline"], new=now)
    before = Side.of(old[nodeid])
    change = Change(nodeid, old=before, new=now)
    _pass_rate(change)
    change.figures = _figures(before, now)
    return change


def _add_gone(
    changes: dict[str, Change],
    old: Mapping[str, Mapping[str, JSONValue]],
    new: Mapping[str, Mapping[str, JSONValue]],
    ran: set[str],
) -> int:
    """Add the baseline's tests this run did not collect from a file it ran (gone); the number of
    baseline tests of files it did not run (not compared)."""
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
    return not_run


def _classify_pass_rates(compared: list[Change], alpha: float) -> None:
    """Each compared test's kind from its pass rate: Holm over the testable tests (Tarone), each way."""
    worse = tarone_holm({c.nodeid: (c.p_worse, c.least_worse) for c in compared}, alpha)  # type: ignore[misc]
    better = tarone_holm({c.nodeid: (c.p_better, c.least_better) for c in compared}, alpha)  # type: ignore[misc]
    testable = sum(1 for c in compared if c.least_worse <= alpha)
    for change in compared:
        if change.nodeid in worse:
            change.kind = "regressed"
        elif change.nodeid in better:
            change.kind = "improved"
        else:
            _not_significant(change, alpha, testable)


def _not_significant(change: Change, alpha: float, testable: int) -> None:
    """A pass rate that moved without a significant result: too few runs to ever tell (changed), or
    significant alone but not after the correction (inconclusive)."""
    fell, rose = _moved(change)
    if (fell and change.least_worse > alpha) or (rose and change.least_better > alpha):
        change.kind = "changed"
        change.reasons.append("changed, not enough runs to tell (docs/baseline.md: what a single run shows)")
    elif fell and change.p_worse is not None and change.p_worse < alpha:
        change.kind = "inconclusive"
        change.reasons.append(f"not significant after correcting for {testable} testable tests (Holm)")


def _moved(change: Change) -> tuple[bool, bool]:
    """Whether the pass rate fell, rose."""
    assert change.old is not None and change.new is not None
    (kept, total_old), (passed, total_new) = change.old.tally, change.new.tally
    return passed * total_old < kept * total_new, passed * total_old > kept * total_new


def _pass_rate(change: Change) -> None:
    """Fisher's exact test of the two sides' runs, both ways, and the reason line with both figures."""
    old, new = change.old, change.new
    assert old is not None and new is not None
    (kept, total_old), (passed, total_new) = old.tally, new.tally
    if not total_old or not total_new:
        change.kind = "inconclusive"
        change.reasons.append(
            f"not compared: skipped {'in the baseline' if not total_old else 'now'} (a skip is not a pass)"
        )
        return
    change.p_worse = fisher_lower(passed, total_new, kept, total_old)
    change.p_better = fisher_lower(kept, total_old, passed, total_new)
    change.least_worse = fisher_lower_min(passed, total_new, kept, total_old)
    change.least_better = fisher_lower_min(kept, total_old, passed, total_new)
    fell, rose = _moved(change)
    if fell or rose:
        change.reasons.append(
            f"pass rate {old.rate()} -> {new.rate()} ({'down' if fell else 'up'}, "
            f"Fisher p={change.p_worse if fell else change.p_better:.3g})"
        )


def _figures(old: Side, new: Side) -> list[Figure]:
    """The latency and score comparisons of a test with values on both sides."""
    found = []
    if old.durations and new.durations:
        found.append(_tested(_latency(old.durations, new.durations), old.durations, new.durations))
    if old.scores and new.scores:
        found.append(_tested(_score(old.scores, new.scores), old.scores, new.scores))
    return found


def _latency(before: Sequence[float], after: Sequence[float]) -> Figure:
    """The medians' ratio (new / old; infinite from a zero median, 1 between two zeros)."""
    was, now = statistics.median(before), statistics.median(after)
    if was > 0:
        effect = now / was
    else:
        effect = float("inf") if now > 0 else 1.0
    direction = "slower" if now > was else "faster" if now < was else "same"
    return Figure("latency", f"{was:.0f} ms", f"{now:.0f} ms", direction, effect)


def _score(before: Sequence[float], after: Sequence[float]) -> Figure:
    """The means' change (new - old)."""
    was, now = statistics.fmean(before), statistics.fmean(after)
    direction = "lower" if now < was else "higher" if now > was else "same"
    return Figure("score", f"{was:.2f}", f"{now:.2f}", direction, now - was)


def _tested(figure: Figure, before: Sequence[float], after: Sequence[float]) -> Figure:
    """The figure with its rank-sum p-values each way, with two values a side or more; a larger
    latency is worse, a larger score better."""
    if len(before) >= 2 and len(after) >= 2:
        up, down = rank_sum_lower(list(before), list(after)), rank_sum_lower(list(after), list(before))
        figure.p_worse, figure.p_better = (up, down) if figure.name == "latency" else (down, up)
    return figure


def _correct_figures(
    changes: Iterable[Change], alpha: float, slower: float | None, score_drop: float | None
) -> None:
    """Holm within each figure's own family, each way; a significant change gates when it is at
    least the least change the user asked to gate on."""
    changes = list(changes)
    for name, least in (("latency", slower), ("score", score_drop)):
        _correct_family(_tested_figures(changes, name), alpha, least)


def _tested_figures(changes: list[Change], name: str) -> list[tuple[Change, Figure]]:
    """The figures called ``name`` that were tested (two values a side or more), with their test."""
    return [(c, f) for c in changes for f in c.figures if f.name == name and f.p_worse is not None]


def _correct_family(tested: list[tuple[Change, Figure]], alpha: float, least: float | None) -> None:
    """Holm over one family of figures, each way: which are significant, which gate."""
    worse = holm({c.nodeid: f.p_worse for c, f in tested if f.p_worse is not None}, alpha)
    better = holm({c.nodeid: f.p_better for c, f in tested if f.p_better is not None}, alpha)
    for change, figure in tested:
        figure.significant = change.nodeid in worse or change.nodeid in better
        figure.gates = change.nodeid in worse and _at_least(figure, least)


def _at_least(figure: Figure, least: float | None) -> bool:
    """Whether the change is as large as the least one asked to gate on (None: no gate asked)."""
    if least is None:
        return False
    if figure.name == "latency":
        return figure.effect >= least
    return -figure.effect >= least
