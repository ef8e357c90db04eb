"""The statistics behind every rate and decision the reports state (docs/statistics.md).

Pure functions, no I/O, in four modules: intervals for k of n (:mod:`.intervals`: Wilson for a fixed
number of runs, an anytime-valid confidence sequence after a sequential or early-stopped run), exact
binomial tails (:mod:`.binomial`), the truncated sequential pass-rate test (:mod:`.sequential`), the
two-sample comparisons and multiplicity corrections of the baseline gate (:mod:`.compare`), and
Cohen's kappa (:mod:`.agreement`). Each name is imported from its module when it is first used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each name's module is imported on first use
    from .agreement import Agreement, cohen_kappa
    from .compare import fisher_lower, fisher_lower_min, holm, rank_sum_lower, tarone_holm
    from .intervals import (
        Z95,
        confidence_sequence,
        interval_label,
        interval_text,
        percent,
        rate_interval,
        wilson,
    )
    from .sequential import Decision, Design, PassRateTest, fixed_runs, simulate

_HOME: dict[str, str] = {
    **dict.fromkeys(("Agreement", "cohen_kappa"), "agreement"),
    **dict.fromkeys(("fisher_lower", "fisher_lower_min", "holm", "rank_sum_lower", "tarone_holm"), "compare"),
    **dict.fromkeys(
        (
            "Z95",
            "confidence_sequence",
            "interval_label",
            "interval_text",
            "percent",
            "rate_interval",
            "wilson",
        ),
        "intervals",
    ),
    **dict.fromkeys(("Decision", "Design", "PassRateTest", "fixed_runs", "simulate"), "sequential"),
}
"""Each name's module: a run that states no kappa or baseline comparison never imports theirs."""


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
