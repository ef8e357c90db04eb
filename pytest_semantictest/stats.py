"""The statistics behind every rate and decision the reports state (docs/statistics.md).

Pure functions, no I/O: a 95% Wilson interval for k of n, a sequential probability ratio test for
"is the pass rate at least p?" with anytime-valid error bounds, and Cohen's kappa with its interval.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import Enum

Z95 = 1.959963984540054
"""The standard normal quantile of 0.975: a two-sided 95% interval."""


def wilson(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``passed / total`` (Wilson 1927): unlike the normal
    approximation it stays inside [0, 1] and is honest at 0/n and n/n (10/10: 0.72-1.0)."""
    if total <= 0:
        return 0.0, 1.0
    p = passed / total
    z2 = z * z
    centre = (p + z2 / (2 * total)) / (1 + z2 / total)
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / (1 + z2 / total)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    if passed == total:
        high = 1.0
    if passed == 0:
        low = 0.0
    return low, high


def percent(value: float) -> str:
    """A rate as a whole percentage, rounded away from a wrong 100% or 0% (0.996 -> 99%)."""
    shown = round(value * 100)
    if shown == 100 and value < 1:
        shown = 99
    if shown == 0 and value > 0:
        shown = 1
    return f"{shown}%"


def interval_text(passed: int, total: int) -> str:
    """``72-100%``: the 95% Wilson interval of ``passed / total``."""
    low, high = wilson(passed, total)
    return f"{percent(low).rstrip('%')}-{percent(high)}"


class Decision(str, Enum):
    """What a sequential test concluded."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    UNDECIDED = "undecided"
    """Not yet: more runs may decide (only while runs remain in the budget)."""


@dataclass(frozen=True, slots=True)
class PassRateTest:
    """Wald's sequential probability ratio test of "the pass rate is at least ``threshold``".

    The two hypotheses are ``p0 = threshold - margin`` (too low) and ``p1 = threshold + margin``
    (good enough); between them is the indifference zone, where either answer is acceptable. After
    each batch of runs, the likelihood ratio ``L = (p1/p0)^k ((1-p1)/(1-p0))^(n-k)`` decides: pass once
    ``L >= 1/alpha``, fail once ``L <= beta``. Under ``p <= p0``, ``L`` is a non-negative
    supermartingale, so by Ville's inequality a wrong pass happens with probability at most ``alpha``
    however often it is looked at (anytime-valid); symmetrically a wrong fail at ``p >= p1`` at most
    ``beta``. With ``max_runs`` spent and neither bound crossed the answer is INCONCLUSIVE (a failure
    in the reports, never a pass), which only lowers both error rates.
    """

    threshold: float
    alpha: float = 0.05
    beta: float = 0.05
    margin: float = 0.05
    max_runs: int = 200

    def __post_init__(self) -> None:
        if not 0 < self.threshold - self.margin < self.threshold + self.margin < 1:
            raise ValueError(
                f"a pass-rate threshold of {self.threshold} with a margin of {self.margin} needs "
                "0 < threshold - margin and threshold + margin < 1"
            )
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("alpha and beta must be between 0 and 1")
        if self.max_runs < 1:
            raise ValueError("max_runs must be at least 1")

    @property
    def p0(self) -> float:
        return self.threshold - self.margin

    @property
    def p1(self) -> float:
        return self.threshold + self.margin

    def log_ratio(self, passed: int, total: int) -> float:
        """``log L`` after ``passed`` of ``total`` runs passed."""
        failed = total - passed
        return passed * math.log(self.p1 / self.p0) + failed * math.log((1 - self.p1) / (1 - self.p0))

    def decide(self, passed: int, total: int) -> Decision:
        """The decision after ``passed`` of ``total`` runs (in the order they were planned)."""
        ratio = self.log_ratio(passed, total)
        if ratio >= math.log(1 / self.alpha):
            return Decision.PASS
        if ratio <= math.log(self.beta):
            return Decision.FAIL
        return Decision.INCONCLUSIVE if total >= self.max_runs else Decision.UNDECIDED

    def describe(self) -> str:
        """The rule in words, for a report."""
        return (
            f"pass rate >= {self.threshold:g} (SPRT: wrong pass <= {self.alpha:g} at p <= {self.p0:g}, "
            f"wrong fail <= {self.beta:g} at p >= {self.p1:g}, at most {self.max_runs} runs)"
        )


def simulate(test: PassRateTest, rate: float, tests: int, batch: int, rng: random.Random) -> dict[str, float]:
    """``tests`` sequential decisions, made in batches as the engine makes them, for an agent that
    passes with probability ``rate``: the share of each decision and the mean runs (benches, tests)."""
    outcomes = dict.fromkeys(("pass", "fail", "inconclusive"), 0)
    runs_made = 0
    for _ in range(tests):
        passed = total = 0
        decision = Decision.UNDECIDED
        while decision is Decision.UNDECIDED:
            size = min(batch, test.max_runs - total)
            passed += sum(rng.random() < rate for _ in range(size))
            total += size
            decision = test.decide(passed, total)
        outcomes[decision.value] += 1
        runs_made += total
    return {**{k: v / tests for k, v in outcomes.items()}, "mean_runs": runs_made / tests}


def fixed_runs(test: PassRateTest) -> int:
    """The runs a fixed-size one-sided test needs for the same errors at ``p0`` and ``p1`` (the
    normal approximation): what the sequential test is compared with."""
    z_a = _normal_quantile(1 - test.alpha)
    z_b = _normal_quantile(1 - test.beta)
    p0, p1 = test.p0, test.p1
    root = z_a * math.sqrt(p0 * (1 - p0)) + z_b * math.sqrt(p1 * (1 - p1))
    return math.ceil((root / (p1 - p0)) ** 2)


def _normal_quantile(q: float) -> float:
    """The standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9)."""
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    if not 0 < q < 1:
        raise ValueError("a quantile needs 0 < q < 1")
    if q < 0.02425:
        t = math.sqrt(-2 * math.log(q))
        return (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) / (
            (((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1
        )
    if q > 1 - 0.02425:
        return -_normal_quantile(1 - q)
    t = q - 0.5
    r = t * t
    return (
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
        * t
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    )


@dataclass(frozen=True, slots=True)
class Agreement:
    """How well a judge agrees with labels: Cohen's kappa with its 95% interval, and the counts."""

    kappa: float
    low: float
    high: float
    observed: float
    """The share of examples where judge and label agree."""
    counts: dict[tuple[bool, bool], int]
    """``(label, judge) -> n``: the confusion counts."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> Agreement:
    """Cohen's kappa (1960) of ``(label, judge)`` pairs, with the large-sample standard error of
    Fleiss, Cohen and Everitt (1969) for its 95% interval (clipped to [-1, 1])."""
    n = len(pairs)
    if n == 0:
        raise ValueError("no labelled examples")
    counts = {(a, b): sum(1 for p in pairs if p == (a, b)) for a in (True, False) for b in (True, False)}
    p = {key: value / n for key, value in counts.items()}
    observed = p[True, True] + p[False, False]
    rows = {a: p[a, True] + p[a, False] for a in (True, False)}  # the labels' marginals
    cols = {b: p[True, b] + p[False, b] for b in (True, False)}  # the judge's marginals
    expected = rows[True] * cols[True] + rows[False] * cols[False]
    if expected >= 1:  # one class only, on both sides: agreement is perfect but not beyond chance
        return Agreement(1.0 if observed == 1 else 0.0, -1.0, 1.0, observed, counts)
    kappa = (observed - expected) / (1 - expected)
    inner = sum(p[i, i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in (True, False))
    cross = (1 - kappa) ** 2 * sum(
        p[i, j] * (cols[i] + rows[j]) ** 2 for i in (True, False) for j in (True, False) if i != j
    )
    slack = (kappa - expected * (1 - kappa)) ** 2
    variance = max(0.0, inner + cross - slack) / (n * (1 - expected) ** 2)
    half = Z95 * math.sqrt(variance)
    return Agreement(kappa, max(-1.0, kappa - half), min(1.0, kappa + half), observed, counts)


def fisher_lower(passed_new: int, total_new: int, passed_old: int, total_old: int) -> float:
    """One-sided p-value of Fisher's exact test that the new pass rate is lower than the old: the
    chance, with the margins fixed and no real difference, of ``passed_new`` passes or fewer."""
    passes = passed_new + passed_old
    total = total_new + total_old
    denominator = math.comb(total, total_new)
    tail = sum(
        math.comb(passes, k) * math.comb(total - passes, total_new - k)
        for k in range(max(0, total_new - (total - passes)), min(passed_new, passes) + 1)
    )
    return min(1.0, tail / denominator)


def rank_sum_lower(new: list[float], old: list[float]) -> float:
    """One-sided p-value of the Mann-Whitney rank-sum test that ``new`` values tend to be lower than
    ``old`` ones: exact (every way of splitting the pooled ranks, ties as mid-ranks) for up to 30
    values in all, else the normal approximation with the tie correction and a continuity correction."""
    pooled = sorted([(v, 0) for v in new] + [(v, 1) for v in old])
    ranks: list[float] = [0.0] * len(pooled)
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    observed = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    n, m = len(new), len(old)
    if n == 0 or m == 0:
        return 1.0
    if n + m <= 30:
        doubled = [round(2 * r) for r in ranks]  # mid-ranks are halves: count in half-ranks
        ways: list[dict[int, int]] = [dict() for _ in range(n + 1)]
        ways[0][0] = 1
        for r in doubled:
            for taken in range(min(n, len(doubled)) - 1, -1, -1):
                for total, count in ways[taken].items():
                    ways[taken + 1][total + r] = ways[taken + 1].get(total + r, 0) + count
        target = round(2 * observed)
        every = sum(ways[n].values())
        return sum(c for total, c in ways[n].items() if total <= target) / every
    mean = n * (n + m + 1) / 2
    ties = sum(t**3 - t for t in _tie_sizes([v for v, _ in pooled]))
    variance = n * m / 12 * ((n + m + 1) - ties / ((n + m) * (n + m - 1)))
    if variance <= 0:
        return 1.0
    z = (observed - mean + 0.5) / math.sqrt(variance)
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _tie_sizes(values: list[float]) -> list[int]:
    sizes: dict[float, int] = {}
    for v in values:
        sizes[v] = sizes.get(v, 0) + 1
    return [s for s in sizes.values() if s > 1]


def holm(p_values: dict[str, float], alpha: float = 0.05) -> set[str]:
    """The names whose hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``
    (S. Holm, *A simple sequentially rejective multiple test procedure*, 1979)."""
    rejected: set[str] = set()
    ordered = sorted(p_values.items(), key=lambda item: item[1])
    for i, (name, p) in enumerate(ordered):
        if p > alpha / (len(ordered) - i):
            break
        rejected.add(name)
    return rejected
