"""The baseline gate's statistics: Fisher's exact test of two pass rates, the rank-sum test of two
samples, and the multiplicity corrections (Holm; Holm over the tests that could reach significance,
Tarone 1990)."""

from __future__ import annotations

import math


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


def fisher_lower_min(passed_new: int, total_new: int, passed_old: int, total_old: int) -> float:
    """The smallest p-value :func:`fisher_lower` can give with these margins (the new side with as few
    passes as the margins allow): a test whose smallest is above the level cannot be significant
    whatever it shows, so it is left out of the correction (:func:`tarone_holm`)."""
    passes, total = passed_new + passed_old, total_new + total_old
    fewest = max(0, total_new - (total - passes))
    return fisher_lower(fewest, total_new, passes - fewest, total_old)


def rank_sum_lower(new: list[float], old: list[float]) -> float:
    """One-sided p-value of the Mann-Whitney rank-sum test that ``new`` values tend to be lower than
    ``old`` ones: exact (every way of splitting the pooled ranks, ties as mid-ranks) for up to 30
    values in all, else the normal approximation with the tie correction and a continuity correction."""
    pooled = sorted([(v, 0) for v in new] + [(v, 1) for v in old])
    ranks = _mid_ranks([v for v, _ in pooled])
    observed = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    n, m = len(new), len(old)
    if n == 0 or m == 0:
        return 1.0
    if n + m <= 30:
        return _exact_lower(ranks, n, observed)
    return _normal_lower(observed, n, m, [v for v, _ in pooled])


def _mid_ranks(ordered: list[float]) -> list[float]:
    """The ranks (from 1) of sorted values, tied values sharing the mean of their ranks."""
    ranks: list[float] = [0.0] * len(ordered)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[i]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _exact_lower(ranks: list[float], n: int, observed: float) -> float:
    """The share of the ways of taking ``n`` of the ``ranks`` whose sum is at most ``observed``."""
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


def _normal_lower(observed: float, n: int, m: int, values: list[float]) -> float:
    """The normal approximation of the rank sum's lower tail, with the tie and continuity corrections."""
    mean = n * (n + m + 1) / 2
    ties = sum(t**3 - t for t in _tie_sizes(values))
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


def tarone_holm(tests: dict[str, tuple[float, float]], alpha: float = 0.05) -> set[str]:
    """Holm's step-down procedure over the tests that could reach significance: ``tests`` maps a name
    to ``(p, smallest attainable p)``. Tarone (*A modified Bonferroni method for discrete data*,
    Biometrics 1990) counts only the ``K`` tests whose smallest attainable p-value is at most
    ``alpha / K``: a discrete test that cannot be significant (a test whose runs all passed on both
    sides) costs the others nothing. Given the margins the set is fixed and each p-value valid, so the
    family-wise error stays at most ``alpha`` (Hommel and Krummenauer 1998 for the step-down form)."""
    size = 1
    while sum(1 for _, least in tests.values() if least <= alpha / size) > size:
        size += 1
    testable = {name: p for name, (p, least) in tests.items() if least <= alpha / size}
    return holm(testable, alpha)
