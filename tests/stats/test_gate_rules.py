"""The baseline gate's rules on records shaped as a run writes them: the pass rate decides, latency
and scores are reported apart and gate only when asked, every line shows the direction and both
figures, and a test whose pass rate fell is never "improved"."""

from __future__ import annotations

from pytest_semantictest.report.baseline import compare, fold


def _record(passed: int, runs: int, ms: float, score: float | None = None) -> dict[str, object]:
    record: dict[str, object] = {
        "id": "s.json::t",
        "file": "s.json",
        "outcome": "passed",
        "results_version": 1,
        "runs": ["passed"] * passed + ["failed"] * (runs - passed),
        "run_durations_ms": [ms + i for i in range(runs)],
    }
    if score is not None:
        record["run_scores"] = [score + i / 1000 for i in range(runs)]
    return record


def _one(old: dict[str, object], new: dict[str, object], **options: float):
    found = compare({"s.json::t": old}, {"s.json::t": new}, "b", ["s.json"], **options)
    return found, found.changes["s.json::t"]


def test_a_fall_with_faster_runs_is_a_regression_never_an_improvement() -> None:
    found, change = _one(_record(18, 20, 500.0), _record(5, 10, 100.0))
    assert change.kind == "regressed" and found.failing == ["s.json::t"]
    assert change.reasons[0].startswith("pass rate 18/20 -> 5/10 (down, Fisher p=")
    (latency,) = change.figures
    assert latency.direction == "faster" and latency.text().startswith("latency 510 ms -> 104 ms (faster, ")


def test_the_same_pass_rate_with_slower_runs_does_not_fail_the_gate_unless_asked() -> None:
    found, change = _one(_record(16, 20, 100.0), _record(16, 20, 160.0))
    assert change.kind == "unchanged" and not found.failing
    (latency,) = change.figures
    assert latency.significant and latency.direction == "slower" and not latency.gates
    found, _ = _one(_record(16, 20, 100.0), _record(16, 20, 160.0), slower=1.5)
    assert found.failing == ["s.json::t (latency)"]  # medians 109.5 -> 169.5 ms: 1.55x
    found, _ = _one(_record(16, 20, 100.0), _record(16, 20, 160.0), slower=1.6)
    assert not found.failing


def test_a_score_drop_gates_only_when_asked_and_at_least_the_asked_size() -> None:
    found, change = _one(_record(20, 20, 100.0, 0.9), _record(20, 20, 100.0, 0.7))
    assert change.kind == "unchanged" and not found.failing
    (score,) = [f for f in change.figures if f.name == "score"]
    assert score.direction == "lower" and score.significant
    assert _one(_record(20, 20, 100.0, 0.9), _record(20, 20, 100.0, 0.7), score_drop=0.1)[0].failing
    assert not _one(_record(20, 20, 100.0, 0.9), _record(20, 20, 100.0, 0.7), score_drop=0.3)[0].failing


def test_a_single_run_flip_needs_a_history() -> None:
    single = {"id": "s.json::t", "file": "s.json", "outcome": "passed", "results_version": 1}
    failed = {**single, "outcome": "failed"}
    _, change = _one(single, failed)
    assert change.kind == "changed" and "not enough runs to tell" in change.reasons[-1]
    history = single
    for _ in range(19):
        history = fold(history, single)
    assert history["runs"] == ["passed"] * 20 and history["history"] == 20
    _, change = _one(history, failed)
    assert (
        change.kind == "regressed" and "pass rate 20/20 -> 0/1 (down, Fisher p=0.0476)" in change.reasons[0]
    )
