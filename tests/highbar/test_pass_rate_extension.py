"""highbar specs can ask for a sequential pass-rate decision (our extension ``pass_rate``, next to
where ``runs`` would be); it is validated as strictly as highbar's own keys."""

from __future__ import annotations

import pytest

from tests.highbar.test_highbar_validation import has, load, one_test, problems
from tests.reports.scenario import run, trace_agent_spec

pytest_plugins = ["pytester"]


def test_pass_rate_compiles_to_the_sequential_test() -> None:
    spec = load(
        one_test(
            '- trigger: "hi"\n  pass_rate: {at_least: 0.9, confidence: 0.9, max_runs: 30}\n'
            '  expect: {response: {contains: "ok"}}\n'
        )
    )
    (test,) = spec.suites[0].tests
    assert test.pass_rate is not None
    got = test.pass_rate
    assert (got.threshold, got.margin, got.max_runs) == (0.9, 0.05, 30)
    assert got.alpha == pytest.approx(0.1) and got.beta == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("written", "fragment"),
    [
        ("pass_rate: {at_lest: 0.9}", "unknown key 'at_lest' — did you mean 'at_least'?"),
        ("pass_rate: {confidence: 0.9}", "missing 'at_least'"),
        ("pass_rate: {at_least: 1.5}", "at_least must be between 0 and 1, got 1.5"),
        ("pass_rate: {at_least: 0.97}", "at_least 0.97 with a margin of 0.05 needs 0 < at_least - margin"),
        ("pass_rate: 0.9", "pass_rate must be a mapping with at_least"),
        (
            "runs: 5\n  pass_rate: {at_least: 0.9}",
            "pass_rate decides how many runs are made and pass: leave out runs",
        ),
    ],
)
def test_a_bad_pass_rate_is_a_spec_error(written: str, fragment: str) -> None:
    has(
        problems(one_test(f'- trigger: "hi"\n  {written}\n  expect: {{response: {{contains: "ok"}}}}\n')),
        "suites[0].tests[0].pass_rate",
        fragment,
        None,
    )


def test_a_highbar_test_is_decided_by_its_pass_rate(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".highbar.yaml",
        orders=trace_agent_spec("""\
        - name: looks the order up
          trigger: "Where is order 1042?"
          pass_rate: {at_least: 0.8, max_runs: 60}
          expect:
            function_calls: [{name: get_order}]
        - name: wrong tool
          trigger: "Where is order 1042?"
          pass_rate: {at_least: 0.8, max_runs: 60}
          expect:
            function_calls: [{name: cancel_order}]
        """),
    )
    result = run(pytester, "--semantictest-results=r.jsonl", "--semantictest-runs-at-once=10")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "pass rate: fail: 0/6 runs passed (95% CS 0-53%); pass rate >= 0.8 (SPRT" in out, out[-3000:]
    import json

    runs = {
        r["name"]: len(r["runs"])
        for r in map(json.loads, (pytester.path / "r.jsonl").read_text().splitlines())
    }
    # decided run by run on the first runs, whatever the batches: 24 passes, or 6 failures (60 runs
    # leave the looks before the last all of each error: bounds at log 20)
    assert runs == {"looks the order up": 24, "wrong tool": 6}
