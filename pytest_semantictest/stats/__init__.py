"""The statistics behind every rate and decision the reports state (docs/statistics.md).

Pure functions, no I/O, in four modules: intervals for k of n (:mod:`.intervals`: Wilson for a fixed
number of runs, an anytime-valid confidence sequence after a sequential or early-stopped run), exact
binomial tails (:mod:`.binomial`), the truncated sequential pass-rate test (:mod:`.sequential`), the
two-sample comparisons and multiplicity corrections of the baseline gate (:mod:`.compare`), and
Cohen's kappa (:mod:`.agreement`).
"""

from __future__ import annotations

from .agreement import Agreement, cohen_kappa
from .compare import fisher_lower, fisher_lower_min, holm, rank_sum_lower, tarone_holm
from .intervals import Z95, confidence_sequence, interval_label, interval_text, percent, rate_interval, wilson
from .sequential import Decision, Design, PassRateTest, fixed_runs, simulate

__all__ = [
    "Z95",
    "Agreement",
    "Decision",
    "Design",
    "PassRateTest",
    "cohen_kappa",
    "confidence_sequence",
    "fisher_lower",
    "fisher_lower_min",
    "fixed_runs",
    "holm",
    "interval_label",
    "interval_text",
    "percent",
    "rank_sum_lower",
    "rate_interval",
    "simulate",
    "tarone_holm",
    "wilson",
]
