"""Cohen's kappa of a judge against labels, with its interval; undefined where it cannot be computed."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .intervals import Z95


@dataclass(frozen=True, slots=True)
class Agreement:
    """How well a judge agrees with labels: Cohen's kappa with its 95% interval, and the counts.

    ``kappa`` is None when it is undefined: when the labels or the judge hold one class only (a judge
    that passes everything, examples that are all labelled pass), chance agreement is not estimable
    and ``(observed - expected) / (1 - expected)`` says nothing (0/0, or a 0 that means "constant",
    not "no better than chance"); ``undefined`` then says why. A gate on it fails closed."""

    kappa: float | None
    low: float | None
    high: float | None
    observed: float
    """The share of examples where judge and label agree."""
    counts: dict[tuple[bool, bool], int]
    """``(label, judge) -> n``: the confusion counts."""
    undefined: str | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _constant(name: str, said: dict[bool, float]) -> str | None:
    for value, share in said.items():
        if share >= 1:
            return f"{name} {'pass' if value else 'fail'} for every example"
    return None


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> Agreement:
    """Cohen's kappa (1960) of ``(label, judge)`` pairs, with the large-sample standard error of
    Fleiss, Cohen and Everitt (1969) for its 95% interval (clipped to [-1, 1]); undefined (None, with
    the reason) when either side holds one class only."""
    n = len(pairs)
    if n == 0:
        raise ValueError("no labelled examples")
    counts = _cell_counts(pairs)
    p = {key: value / n for key, value in counts.items()}
    observed = p[True, True] + p[False, False]
    rows = {a: p[a, True] + p[a, False] for a in (True, False)}  # the labels' marginals
    cols = {b: p[True, b] + p[False, b] for b in (True, False)}  # the judge's marginals
    constant = _constant("the labels say", rows) or _constant("the judge says", cols)
    if constant is not None:
        return Agreement(None, None, None, observed, counts, f"undefined: {constant}")
    expected = rows[True] * cols[True] + rows[False] * cols[False]
    kappa = (observed - expected) / (1 - expected)
    half = Z95 * math.sqrt(_kappa_variance(p, rows, cols, kappa, expected, n))
    return Agreement(kappa, max(-1.0, kappa - half), min(1.0, kappa + half), observed, counts)


def _cell_counts(pairs: list[tuple[bool, bool]]) -> dict[tuple[bool, bool], int]:
    """How many pairs fall in each cell of the 2x2 table (label, judge)."""
    return {(a, b): sum(1 for p in pairs if p == (a, b)) for a in (True, False) for b in (True, False)}


def _kappa_variance(
    p: dict[tuple[bool, bool], float],
    rows: dict[bool, float],
    cols: dict[bool, float],
    kappa: float,
    expected: float,
    n: int,
) -> float:
    """The large-sample variance of kappa (Fleiss, Cohen and Everitt 1969), from the cells' shares."""
    inner = sum(p[i, i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in (True, False))
    cross = (1 - kappa) ** 2 * sum(
        p[i, j] * (cols[i] + rows[j]) ** 2 for i in (True, False) for j in (True, False) if i != j
    )
    slack = (kappa - expected * (1 - kappa)) ** 2
    return max(0.0, inner + cross - slack) / (n * (1 - expected) ** 2)
