"""Intervals for a pass rate of k in n runs: Wilson's for a fixed number of runs, and an
anytime-valid confidence sequence where the number of runs depended on their outcomes (a sequential
decision, a ``runs``/``minPass`` test that stopped early)."""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""The standard normal quantile of 0.975: a two-sided 95% interval."""

CS_PRIOR = 0.5
"""The Beta(a, a) mixing distribution of the confidence sequence (a = 1/2: Jeffreys')."""


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


def confidence_sequence(passed: int, total: int, alpha: float = 0.05) -> tuple[float, float]:
    """The beta-binomial mixture confidence sequence for a pass rate (Robbins 1970; Howard, Ramdas,
    McAuliffe and Sekhon, *Time-uniform, nonparametric, nonasymptotic confidence sequences*, Ann.
    Statist. 2021, section 3): every ``p`` whose mixture likelihood ratio
    ``B(a+k, a+n-k) / B(a, a) / (p^k (1-p)^(n-k))`` stays below ``1/alpha``. For the true ``p`` that
    ratio is a non-negative martingale starting at 1, so by Ville's inequality the interval misses
    ``p`` at *some* n with probability at most ``alpha``: it holds at any stopping time, including
    one chosen by looking at the outcomes. Wider than Wilson's, which holds at a fixed n only."""
    if total <= 0:
        return 0.0, 1.0
    a = CS_PRIOR
    failed = total - passed
    mixture = (math.lgamma(a + passed) + math.lgamma(a + failed) - math.lgamma(2 * a + total)) - (
        2 * math.lgamma(a) - math.lgamma(2 * a)
    )
    bound = math.log(1 / alpha)

    def outside(p: float) -> bool:
        if p <= 0.0 or p >= 1.0:
            return (p <= 0.0 and passed > 0) or (p >= 1.0 and failed > 0)
        log_likelihood = passed * math.log(p) + failed * math.log1p(-p)
        return mixture - log_likelihood >= bound

    centre = passed / total

    def edge(inside: float, out: float) -> float:
        for _ in range(60):
            mid = (inside + out) / 2
            if outside(mid):
                out = mid
            else:
                inside = mid
        return out

    low = 0.0 if not outside(0.0) else edge(centre, 0.0)
    high = 1.0 if not outside(1.0) else edge(centre, 1.0)
    return low, high


def rate_interval(passed: int, total: int, anytime: bool = False) -> tuple[float, float]:
    """The interval a report prints: the confidence sequence when the number of runs depended on
    their outcomes (``anytime``), else Wilson's."""
    return confidence_sequence(passed, total) if anytime else wilson(passed, total)


def interval_label(anytime: bool = False) -> str:
    """``95% CI`` (Wilson, a fixed number of runs) or ``95% CS`` (the confidence sequence)."""
    return "95% CS" if anytime else "95% CI"


def percent(value: float) -> str:
    """A rate as a whole percentage, rounded away from a wrong 100% or 0% (0.996 -> 99%)."""
    shown = round(value * 100)
    if shown == 100 and value < 1:
        shown = 99
    if shown == 0 and value > 0:
        shown = 1
    return f"{shown}%"


def interval_text(passed: int, total: int, anytime: bool = False) -> str:
    """``72-100%``: the interval of ``passed / total`` (:func:`rate_interval`)."""
    low, high = rate_interval(passed, total, anytime)
    return f"{percent(low).rstrip('%')}-{percent(high)}"
