"""Look-ahead execution: items run at once, report in pytest's order, stop as pytest stops."""

from __future__ import annotations

import time

import pytest

from tests.concurrency.conftest import outcomes, sleeping, stats, write
from tests.helpers import run_pytest

ONE_BY_ONE = "--semantictest-items-at-once=1"


def _at_once_then_one_by_one(
    pytester: pytest.Pytester, latency: str, **expected: int
) -> tuple[pytest.RunResult, pytest.RunResult, float]:
    """The folder's specs at the default concurrency (at least 4 requests at once), then one by one (one
    at a time): the same outcomes both ways. The two runs and the first one's wall time."""
    start = time.perf_counter()
    fast = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    elapsed = time.perf_counter() - start
    fast.assert_outcomes(**expected)
    assert stats(latency)["max_in_flight"] >= 4
    httpx_reset(latency)
    slow = run_pytest(pytester, "-v", "-p", "no:cacheprovider", ONE_BY_ONE)
    slow.assert_outcomes(**expected)
    assert stats(latency)["max_in_flight"] == 1
    assert outcomes(fast) == outcomes(slow)
    return fast, slow, elapsed


def test_items_run_at_once_and_report_in_order(pytester: pytest.Pytester, latency: str) -> None:
    """Later items answer first, yet every report comes in collection order, as one by one."""
    tests = [sleeping(latency, f"t{i}", 0.8 - i * 0.1, status=200 if i != 3 else 201) for i in range(8)]
    write(pytester, "order", tests)
    fast, _, elapsed = _at_once_then_one_by_one(pytester, latency, passed=7, failed=1)
    assert elapsed < 3.5  # 8 items of 0.1-0.8 s; one by one they take 3.6 s
    assert [nodeid for nodeid, _ in outcomes(fast)] == [f"order.json::t{i}" for i in range(8)]


def httpx_reset(base: str) -> None:
    import httpx

    httpx.post(f"{base}/reset", timeout=5, trust_env=False)


def test_exitfirst_reports_nothing_past_the_failure(pytester: pytest.Pytester, latency: str) -> None:
    """-x: the items after the first failure were running ahead; they are cancelled, not reported."""
    tests = [
        sleeping(latency, f"t{i}", 0.3 if i != 2 else 0.1, status=200 if i != 2 else 500) for i in range(10)
    ]
    write(pytester, "stop", tests)
    for extra in ((), (ONE_BY_ONE,)):
        result = run_pytest(pytester, "-v", "-x", "-p", "no:cacheprovider", *extra)
        result.assert_outcomes(passed=2, failed=1)
        assert [n for n, _ in outcomes(result)] == ["stop.json::t0", "stop.json::t1", "stop.json::t2"]
        assert "stop.json::t3" not in result.stdout.str()
    deadline = time.monotonic() + 5
    while stats(latency)["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stats(latency)["in_flight"] == 0


def test_maxfail_and_deselection_as_one_by_one(pytester: pytest.Pytester, latency: str) -> None:
    tests = [sleeping(latency, f"t{i}", 0.1, status=200 if i % 3 else 500) for i in range(9)]
    write(pytester, "many", tests)
    for args in (("--maxfail=2",), ("-k", "not t3 and not t6"), ("--lf",)):
        fast = run_pytest(pytester, "-v", *args)
        slow = run_pytest(pytester, "-v", *args, ONE_BY_ONE)
        assert outcomes(fast) == outcomes(slow), args
        assert outcomes(fast)


def test_a_failing_setup_errors_every_test_of_its_file_only(pytester: pytest.Pytester, latency: str) -> None:
    broken = [sleeping(latency, f"b{i}", 0.1) for i in range(3)]
    write(
        pytester,
        "a_broken",
        broken,
        setup=[
            {
                "block": "HttpRequest",
                "output": "s",
                "id": "login",
                "input": {"url": "http://127.0.0.1:9/unreachable"},
            }
        ],
    )
    write(pytester, "b_fine", [sleeping(latency, f"f{i}", 0.1) for i in range(3)])
    fast = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    fast.assert_outcomes(passed=3, errors=3)
    slow = run_pytest(pytester, "-v", "-p", "no:cacheprovider", ONE_BY_ONE)
    assert outcomes(fast) == outcomes(slow)
    assert "setup step 'login'" in fast.stdout.str()


def test_setup_and_teardown_files_are_not_crossed(pytester: pytest.Pytester, latency: str) -> None:
    """A file with setup/teardown steps: nothing of the next file runs before its teardown, nothing of it
    before its setup (the server sees the order one by one would give at those boundaries)."""
    write(pytester, "a_plain", [sleeping(latency, f"a{i}", 0.2) for i in range(3)])
    write(
        pytester,
        "b_setup",
        [sleeping(latency, f"b{i}", 0.2) for i in range(3)],
        setup=[
            {"block": "HttpRequest", "output": "s", "input": {"url": f"{latency}/sleep?s=0.1&id=b-setup"}}
        ],
        teardown=[
            {"block": "HttpRequest", "output": "t", "input": {"url": f"{latency}/sleep?s=0.1&id=b-teardown"}}
        ],
    )
    write(pytester, "c_plain", [sleeping(latency, f"c{i}", 0.2) for i in range(3)])
    run_pytest(pytester, "-p", "no:cacheprovider").assert_outcomes(passed=9)
    order = stats(latency)["order"]
    assert set(order[:3]) == {"a0", "a1", "a2"} and order[3] == "b-setup"
    assert set(order[4:7]) == {"b0", "b1", "b2"} and order[7] == "b-teardown"
    assert set(order[8:]) == {"c0", "c1", "c2"}


def computing(test_id: str, value: int, expect: int) -> dict[str, object]:
    """A test that only computes (MockData and a path check): it passes when ``value == expect``."""
    return {
        "id": test_id,
        "pipeline": [{"block": "MockData", "config": {"data": {"v": value}}, "output": "m"}],
        "assertions": {"m.v": expect},
    }


def test_items_that_only_compute_run_when_reached_and_the_others_still_run_at_once(
    pytester: pytest.Pytester, latency: str
) -> None:
    """MockData-only items are not started ahead (nothing to wait for); the look-ahead walks past them,
    so the HTTP items around them still overlap, and every report comes in order, as one by one."""
    tests: list[dict[str, object]] = []
    for i in range(6):
        tests.append(computing(f"c{i}", i, i if i != 4 else -1))
        tests.append(sleeping(latency, f"h{i}", 0.5))
    write(pytester, "mixed", tests)
    fast, _, _ = _at_once_then_one_by_one(pytester, latency, passed=11, failed=1)  # the HTTP items overlapped
    assert [n for n, _ in outcomes(fast)] == [f"mixed.json::{t['id']}" for t in tests]


def _from_context(test_id: str, expect: int) -> dict[str, object]:
    """A test that only computes and reads its file's ``context``: it passes when ``X`` is ``expect``."""
    return {
        "id": test_id,
        "pipeline": [{"block": "MockData", "config": {"data": {"x": "${X}"}}, "output": "m"}],
        "assertions": {"m.x": str(expect)},
    }


def test_items_that_only_compute_are_computed_together_with_the_verdicts_of_one_by_one(
    pytester: pytest.Pytester,
) -> None:
    """Runs of computing items are computed in one loop turn each (``Lookahead._compute``): a skipped test
    and another file (its own context) end a run, a failure is reported where it is, and ``-x`` stops
    there, each as one by one."""
    first = [computing(f"a{i}", i, i if i != 5 else -1) for i in range(8)]
    first.insert(3, {**computing("skipped", 0, 0), "skip": "not today"})
    write(pytester, "a_first", [*first, _from_context("a_ctx", 1)], context={"X": "1"})
    write(pytester, "b_second", [_from_context(f"b{i}", 2) for i in range(5)], context={"X": "2"})
    runs = [run_pytest(pytester, "-v", "-p", "no:cacheprovider", *more) for more in ([], [ONE_BY_ONE])]
    for result in runs:
        result.assert_outcomes(passed=13, failed=1, skipped=1)
    assert outcomes(runs[0]) == outcomes(runs[1])
    assert ("a_first.json::a5", "FAILED") in outcomes(runs[0])
    stopped = [
        run_pytest(pytester, "-v", "-p", "no:cacheprovider", "-x", *more) for more in ([], [ONE_BY_ONE])
    ]
    for result in stopped:
        result.assert_outcomes(passed=5, failed=1, skipped=1)
    assert outcomes(stopped[0]) == outcomes(stopped[1])
    assert outcomes(stopped[0])[-1] == ("a_first.json::a5", "FAILED")
