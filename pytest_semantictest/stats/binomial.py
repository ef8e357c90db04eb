"""Exact binomial probabilities, and the fixed-size test of a pass rate that they give.

Written out rather than imported: a few lines of ``lgamma`` keep the package free of a numerical
dependency (``bench/`` and the tests check these against scipy).
"""

from __future__ import annotations

import math


def pmf(n: int, p: float) -> list[float]:
    """``P(X = k)`` for ``k = 0..n``, ``X ~ Binomial(n, p)`` (computed in logs: no overflow at any n)."""
    if p <= 0.0 or p >= 1.0:
        return [float(k == (n if p >= 1.0 else 0)) for k in range(n + 1)]
    lp, lq = math.log(p), math.log1p(-p)
    head = math.lgamma(n + 1)
    return [
        math.exp(head - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq)
        for k in range(n + 1)
    ]


def at_least(n: int, p: float) -> list[float]:
    """``P(X >= c)`` for ``c = 0..n+1``."""
    tails = [0.0] * (n + 2)
    for k, mass in reversed(list(enumerate(pmf(n, p)))):
        tails[k] = tails[k + 1] + mass
    return [min(1.0, t) for t in tails]


def fixed_cut(n: int, p0: float, p1: float, alpha: float, beta: float) -> int | None:
    """The pass mark ``c`` of the exact one-sided test with ``n`` runs (pass iff ``k >= c``) whose
    wrong pass at ``p0`` is at most ``alpha`` and wrong fail at ``p1`` at most ``beta``; None when no
    mark of ``n`` runs holds both."""
    above0, above1 = at_least(n, p0), at_least(n, p1)
    cut = next(c for c in range(n + 2) if above0[c] <= alpha)
    return cut if 1 - above1[cut] <= beta else None


def fixed_design(p0: float, p1: float, alpha: float, beta: float) -> tuple[int, int]:
    """``(n, c)``: the fewest runs of an exact fixed-size test with both errors held, and its pass
    mark. The search starts a little below the normal approximation's ``n`` (which is too small:
    169 where 176 is needed at 0.75 against 0.85, 5% each)."""
    from statistics import NormalDist  # (statistics imports fractions and decimal: only a design needs it)

    z_a, z_b = NormalDist().inv_cdf(1 - alpha), NormalDist().inv_cdf(1 - beta)
    root = z_a * math.sqrt(p0 * (1 - p0)) + z_b * math.sqrt(p1 * (1 - p1))
    n = max(1, int(0.8 * (root / (p1 - p0)) ** 2))
    while (cut := fixed_cut(n, p0, p1, alpha, beta)) is None:
        n += 1
    return n, cut
