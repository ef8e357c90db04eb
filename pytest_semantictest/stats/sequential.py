"""The sequential test of "the pass rate is at least t": Wald's SPRT, truncated at ``max_runs`` by the
exact fixed-size test, so that every decision within the budget is pass or fail with both errors held.

Design (computed once per setting, exactly, by dynamic programming over the runs' outcomes): at each
run before the last, Wald's bounds on the likelihood ratio (scaled down when the budget needs more of
the error for its last look); at the last run, the pass mark ``c`` (pass iff ``k >= c``) that holds
the wrong-pass rate at ``p0`` to ``alpha`` and the wrong-fail rate at ``p1`` to ``beta``, counting the
errors the earlier looks already made. Passing is monotone in the outcomes, so those rates are the
worst over every ``p <= p0`` and every ``p >= p1``. When ``max_runs`` is below what the exact
fixed-size test needs, no mark holds both: the last look leaves an inconclusive band between a fail
mark and a pass mark (each still holding its error), and :attr:`Design.needed` says how many runs
would close it.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from enum import Enum

from .binomial import fixed_design, pmf

SCALES = (1.0, 0.5, 0.25, 0.1, 0.05, 0.01, 0.0)
"""Shares of the errors the looks before the last may spend, largest (fewest runs) first; 0: none (the
fixed-size test)."""


class Decision(str, Enum):
    """What a sequential test concluded."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    UNDECIDED = "undecided"
    """Not yet: more runs may decide (only while runs remain in the budget)."""


@dataclass(frozen=True, slots=True)
class Design:
    """The bounds a :class:`PassRateTest` decides by, and its exact errors."""

    upper: float
    """Pass before the last run once ``log L >= upper`` (inf: never)."""
    lower: float
    """Fail before the last run once ``log L <= lower`` (-inf: never)."""
    pass_mark: int
    """At the last run: pass iff at least this many passed."""
    fail_mark: int
    """At the last run: fail iff fewer than this many passed (== pass_mark: never inconclusive)."""
    wrong_pass: float
    """The exact chance of a pass at ``p0`` (the worst over ``p <= p0``)."""
    wrong_fail: float
    """The exact chance of a fail at ``p1`` (the worst over ``p >= p1``)."""
    needed: int
    """The runs the exact fixed-size test needs for the same errors."""

    @property
    def complete(self) -> bool:
        """Every decision within the budget is pass or fail."""
        return self.pass_mark == self.fail_mark


@dataclass(frozen=True, slots=True)
class PassRateTest:
    """A truncated sequential test of "the pass rate is at least ``threshold``" (see the module doc).

    The two hypotheses are ``p0 = threshold - margin`` (too low) and ``p1 = threshold + margin``
    (good enough); between them is the indifference zone, where either answer is acceptable. The
    decision is taken run by run in the planned order (``decide(k, n)`` on the first ``n`` runs), so
    it depends on the outcomes only, never on how many runs were in flight.
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

    @property
    def design(self) -> Design:
        return _design(self)

    def log_ratio(self, passed: int, total: int) -> float:
        """``log L = k log(p1/p0) + (n-k) log((1-p1)/(1-p0))`` after ``passed`` of ``total`` runs."""
        failed = total - passed
        return passed * math.log(self.p1 / self.p0) + failed * math.log((1 - self.p1) / (1 - self.p0))

    def decide(self, passed: int, total: int) -> Decision:
        """The decision after the first ``total`` runs (in planned order), ``passed`` of them passed."""
        design = self.design
        if total >= self.max_runs:
            if passed >= design.pass_mark:
                return Decision.PASS
            return Decision.FAIL if passed < design.fail_mark else Decision.INCONCLUSIVE
        ratio = self.log_ratio(passed, total)
        if ratio >= design.upper:
            return Decision.PASS
        return Decision.FAIL if ratio <= design.lower else Decision.UNDECIDED

    def describe(self) -> str:
        """The rule in words, for a report."""
        design = self.design
        text = (
            f"pass rate >= {self.threshold:g} (SPRT: wrong pass <= {self.alpha:g} at p <= {self.p0:g}, "
            f"wrong fail <= {self.beta:g} at p >= {self.p1:g}, at most {self.max_runs} runs"
        )
        if not design.complete:
            text += f"; inconclusive possible: {design.needed} runs would decide every test"
        return text + ")"

    def shortfall(self) -> str | None:
        """Why ``max_runs`` is too small for the asked errors (a collection warning), or None."""
        design = self.design
        if design.complete:
            return None
        return (
            f"a budget of {self.max_runs} runs is too small for a pass rate of at least {self.threshold:g} "
            f"with confidence {1 - self.alpha:g} and margin {self.margin:g}: at least {design.needed} runs "
            f"are needed (the exact fixed-size test) for every test to end in pass or fail; with "
            f"{self.max_runs}, a pass rate between {design.fail_mark}/{self.max_runs} and "
            f"{design.pass_mark - 1}/{self.max_runs} is inconclusive"
        )


def _operating(
    test: PassRateTest, upper: float, lower: float, p: float
) -> tuple[float, float, list[float], float]:
    """At true rate ``p``: the chances of a pass and a fail before the last run, the distribution of
    passes at the last run of the paths that reach it, and the mean runs until the decision."""
    last = test.max_runs
    if math.isinf(upper) and math.isinf(lower):
        return 0.0, 0.0, pmf(last, p), float(last)
    went_pass = went_fail = runs = 0.0
    alive = {0: 1.0}
    for n in range(1, last + 1):
        step: dict[int, float] = {}
        for k, mass in alive.items():
            step[k + 1] = step.get(k + 1, 0.0) + mass * p
            step[k] = step.get(k, 0.0) + mass * (1 - p)
        if n == last:
            final = [step.get(k, 0.0) for k in range(last + 1)]
            return went_pass, went_fail, final, runs + last * sum(final)
        alive = {}
        for k, mass in step.items():
            ratio = test.log_ratio(k, n)
            if ratio >= upper:
                went_pass += mass
                runs += n * mass
            elif ratio <= lower:
                went_fail += mass
                runs += n * mass
            else:
                alive[k] = mass
    raise AssertionError("unreachable")  # pragma: no cover


_SLACK = 1e-12
"""Rounding room when an exact error is compared with its bound."""


@functools.lru_cache(maxsize=64)
def _design(test: PassRateTest) -> Design:
    """The first complete design, the looks before the last spending the largest share of the errors
    that leaves one; else the first (largest share) there is."""
    needed = fixed_design(test.p0, test.p1, test.alpha, test.beta)[0]
    fallback: Design | None = None
    for scale in SCALES:
        design = _design_at(test, scale, needed)
        if design.complete:
            return design
        fallback = fallback or design
    assert fallback is not None
    return fallback


def _design_at(test: PassRateTest, scale: float, needed: int) -> Design:
    """The design whose looks before the last spend ``scale`` of the errors (bounds on ``log L``), and
    the marks at the last run that keep both exact errors within theirs."""
    upper = math.log(1 / (test.alpha * scale)) if scale else math.inf
    lower = math.log(test.beta * scale) if scale else -math.inf
    pass0, fail0, final0, _ = _operating(test, upper, lower, test.p0)
    pass1, fail1, final1, _ = _operating(test, upper, lower, test.p1)
    above0 = [sum(final0[c:]) for c in range(len(final0) + 1)]
    below1 = [sum(final1[:c]) for c in range(len(final1) + 1)]
    pass_mark = next(c for c in range(len(above0)) if pass0 + above0[c] <= test.alpha + _SLACK)
    fail_mark = max(c for c in range(len(below1)) if fail1 + below1[c] <= test.beta + _SLACK)
    if pass_mark <= fail_mark:  # any mark between holds both: the one nearest the threshold
        pass_mark = fail_mark = min(max(math.ceil(test.threshold * test.max_runs), pass_mark), fail_mark)
    fail_mark = min(fail_mark, pass_mark)
    return Design(
        upper, lower, pass_mark, fail_mark, pass0 + above0[pass_mark], fail1 + below1[fail_mark], needed
    )


def fixed_runs(test: PassRateTest) -> int:
    """The runs the exact fixed-size test needs for ``test``'s two errors (what the sequential test
    is compared with)."""
    return fixed_design(test.p0, test.p1, test.alpha, test.beta)[0]


def operating(test: PassRateTest, p: float) -> dict[str, float]:
    """The exact shares of pass, fail and inconclusive at true rate ``p``, and the mean runs to the
    decision (what ``bench/bench_sequential.py`` prints next to its simulation)."""
    design = test.design
    went_pass, went_fail, final, runs = _operating(test, design.upper, design.lower, p)
    passed = went_pass + sum(final[design.pass_mark :])
    failed = went_fail + sum(final[: design.fail_mark])
    return {"pass": passed, "fail": failed, "inconclusive": max(0.0, 1 - passed - failed), "mean_runs": runs}


def simulate(test: PassRateTest, rate: float, tests: int, batch: int, rng: random.Random) -> dict[str, float]:
    """``tests`` decisions for an agent that passes with probability ``rate``, runs made in batches as
    the engine makes them and decided run by run: the share of each decision, the mean runs the
    decision counted (``mean_runs``) and the mean runs made (``mean_made``, whole batches)."""
    outcomes = dict.fromkeys(("pass", "fail", "inconclusive"), 0)
    counted = made = 0
    for _ in range(tests):
        results: list[bool] = []
        decision, n = Decision.UNDECIDED, 0
        while decision is Decision.UNDECIDED:
            size = min(max(1, batch), test.max_runs - len(results))
            results += [rng.random() < rate for _ in range(size)]
            while decision is Decision.UNDECIDED and n < len(results):
                n += 1
                decision = test.decide(sum(results[:n]), n)
        outcomes[decision.value] += 1
        counted += n
        made += len(results)
    return {
        **{k: v / tests for k, v in outcomes.items()},
        "mean_runs": counted / tests,
        "mean_made": made / tests,
    }
