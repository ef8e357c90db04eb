"""What is never run ahead (docs/concurrency.md): each behaves exactly as one by one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_semantictest.databus import DataBus
from pytest_semantictest.json_types import JSONObject
from pytest_semantictest.model import CheckResult, Variants
from pytest_semantictest.run_context import RunContext
from tests.concurrency.conftest import compliance_doc, outcomes, sleeping, stats, write
from tests.helpers import run_pytest
from tests.ports import free_port

ONE_BY_ONE = "--semantictest-items-at-once=1"
FIDELITY_AGENT = Path(__file__).resolve().parents[1] / "highbar" / "fidelity_agent.py"

PROBE = """
import httpx
from pytest_semantictest import Block, register_block

class Probe(Block):
    name = "Probe"
    config_keys = None
    concurrency_safe = {safe}

    async def process(self, inputs, ctx):
        import asyncio
        seen = []
        for _ in range(4):
            seen.append(httpx.get("{base}/stats", trust_env=False).json()["in_flight"])
            await asyncio.sleep(0.1)
        return {{"in_flight": max(seen)}}

register_block(Probe)
"""


@pytest.mark.parametrize("safe", [False, True])
def test_a_block_not_marked_concurrency_safe_runs_alone(
    pytester: pytest.Pytester, latency: str, safe: bool
) -> None:
    """While a test with a user block runs, nothing else is in flight; marked concurrency_safe, it may be."""
    pytester.makeconftest(PROBE.format(safe=safe, base=latency))
    tests = []
    for i in range(3):
        tests += [
            sleeping(latency, f"h{i}", 0.5),
            {
                "id": f"probe{i}",
                "pipeline": [{"block": "Probe", "output": "p"}],
                "assertions": {"p.in_flight": 0},
            },
        ]
    write(pytester, "mixed", tests)
    fast = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    if safe:  # a probe then sees a test's request in flight alongside it: the check can fail (which probe
        # overlaps a request depends on how fast each test starts: under load the first may see none)
        probes = [word for name, word in outcomes(fast) if "probe" in name]
        assert "FAILED" in probes, outcomes(fast)
        return
    fast.assert_outcomes(passed=6)
    assert outcomes(fast) == outcomes(run_pytest(pytester, "-v", "-p", "no:cacheprovider", ONE_BY_ONE))


SLOW_S = 0.5  # each answer's delay: overlapping answers show in the agent's spans, not in wall time


def _highbar(port: int, tag: str, n: int, spans: Path | None = None, tests: str = "") -> str:
    """A spec of ``n`` slow order questions (or ``tests``); with ``spans``, each answer takes ``SLOW_S``
    and the agent writes when it worked on it to that file."""
    tests = tests or "".join(
        f"""
      - name: t{i}
        trigger: "Where is order 1042? slowly please"
        expect:
          function_calls:
            - name: get_order
"""
        for i in range(n)
    )
    timing = f" --slow-s {SLOW_S} --spans {spans}" if spans is not None else ""
    return f"""
agent:
  start: "{sys.executable} {FIDELITY_AGENT} --port {port} --tag {tag}{timing}"
  endpoint: "http://127.0.0.1:{port}/chat"
  health: "http://127.0.0.1:{port}/health"
  settle_time: 50
suites:
  - name: Orders
    tests:{tests}
"""


def _most_at_once(spans: Path) -> int:
    """The most answers the agent was working on at the same time (its ``start end`` spans)."""
    events = []
    for line in spans.read_text().splitlines():
        start, end = map(float, line.split())
        events += [(start, 1), (end, -1)]
    at_once = most = 0
    for _, step in sorted(events):  # an end sorts before a start at the same instant
        at_once += step
        most = max(most, at_once)
    return most


@pytest.mark.parametrize("tag", ["none", "own"])
def test_an_agent_whose_records_are_untagged_gets_one_test_at_a_time(
    pytester: pytest.Pytester, tag: str
) -> None:
    """Untagged trace records: its tests run one by one (each counts the calls written meanwhile, as in
    highbar); tagged ones run at once after the first test showed they are."""

    from tests.concurrency.latency_server import serving  # noqa: F401  (free port below)

    port = free_port()
    spans = pytester.path / "spans.txt"
    pytester.makefile(".highbar.yaml", orders=_highbar(port, tag, 4, spans))
    fast = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    assert len(spans.read_text().splitlines()) == 4  # every test's answer was slow
    most_at_once = _most_at_once(spans)
    slow = run_pytest(pytester, "-v", "-p", "no:cacheprovider", ONE_BY_ONE)
    assert outcomes(fast) == outcomes(slow) and len(outcomes(fast)) == 4
    if tag == "none":
        assert most_at_once == 1  # one answer after another
    else:
        assert most_at_once > 1


def test_a_tagged_agent_that_loses_the_tag_on_one_path_gives_the_one_by_one_verdicts(
    pytester: pytest.Pytester,
) -> None:
    """The first test shows tagged records; a later one makes a call on a thread without the tag, while
    three slow tests that expect no call are in flight: they read that call too, so each runs again alone
    (one by one they pass; the thread test is an error either way, highbar's rule)."""
    port = free_port()
    tests = (
        """
      - name: probe
        trigger: "Where is order 1042?"
        expect: {function_calls: [{name: get_order}]}
"""
        + "".join(
            f"""
      - name: quiet{i}
        trigger: "hello, slowly"
        expect: {{function_calls: []}}
"""
            for i in range(3)
        )
        + """
      - name: thread
        trigger: "thread: where is order 1042?"
        expect: {function_calls: [{name: get_order}]}
"""
    )
    pytester.makefile(".highbar.yaml", lossy=_highbar(port, "own", 0, tests=tests))
    fast = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    slow = run_pytest(pytester, "-v", "-p", "no:cacheprovider", ONE_BY_ONE)
    assert [word for _, word in outcomes(slow)] == ["PASSED"] * 4 + ["ERROR"], slow.stdout.str()[-3000:]
    assert outcomes(fast) == outcomes(slow), fast.stdout.str()[-3000:]


def test_depends_on_decides_as_one_by_one(pytester: pytest.Pytester, latency: str) -> None:
    """A dependant file's cases wait until their dependency is reported, and skip when it failed."""
    pytester.makefile(
        ".md",
        a_dependant=compliance_doc(
            "dependant", [("1. Runs", 200), ("2. Runs too", 200)], depends_on="[base]"
        ),
    )
    pytester.makefile(
        ".md", b_base=compliance_doc("base", [("1. Fine", 200), ("2. Fails", 201), ("3. Fine", 200)])
    )
    pytester.makefile(".md", c_other=compliance_doc("other", [(f"{i}. Other", 200) for i in range(1, 4)]))
    args = ["-v", "-p", "no:cacheprovider", f"--semantictest-compliance-base-url={latency}"]
    fast = run_pytest(pytester, *args)
    fast.assert_outcomes(passed=5, failed=1, skipped=2)
    assert outcomes(fast) == outcomes(run_pytest(pytester, *args, ONE_BY_ONE))
    assert [n for n, _ in outcomes(fast)][:3] == [
        "b_base.md::1. Fine",
        "b_base.md::2. Fails",
        "b_base.md::3. Fine",
    ]
    assert stats(latency)["max_in_flight"] > 1  # the files without depends_on did run at once


class _SyncCheck:
    """A check evaluated without an LLM (it has ``evaluate_sync``)."""

    line: int | None = None
    reads: frozenset[str] = frozenset()

    def describe(self) -> str:
        return "sync"

    async def evaluate(self, bus: DataBus, ctx: RunContext) -> CheckResult:
        raise AssertionError("not evaluated here")

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        raise AssertionError("not evaluated here")


class _JudgedCheck:
    """A check that waits for an LLM judge (no ``evaluate_sync``)."""

    line: int | None = None
    reads: frozenset[str] = frozenset()

    def describe(self) -> str:
        return "judged"

    async def evaluate(self, bus: DataBus, ctx: RunContext) -> CheckResult:
        raise AssertionError("not evaluated here")


class _Phrasings:
    async def resolve(self, run_context: RunContext) -> list[tuple[str, JSONObject]]:
        return []


def test_only_built_in_computing_blocks_with_deterministic_checks_count_as_io_free() -> None:
    from pytest_semantictest.lookahead.rules import io_free
    from pytest_semantictest.model import Case, Check, Step

    def case(
        block: str, checks: list[Check], variants: Variants | None = None, gates: list[Check] | None = None
    ) -> Case:
        step = Step(id="s", block=block, config={}, input={}, output="m", checks=gates or [])
        return Case(id="t", name="t", steps=[step], checks=checks, variants=variants)

    sync, judged = _SyncCheck(), _JudgedCheck()
    assert io_free(case("MockData", [sync]))
    assert io_free(case("JsonParser", []))
    assert not io_free(case("HttpRequest", [sync]))
    assert not io_free(case("MockData", [judged]))  # an LLM-judged check waits for the judge
    assert not io_free(case("MockData", [sync], gates=[judged]))
    assert not io_free(case("MockData", [sync], variants=_Phrasings()))  # phrasings come from an LLM


SETUP_HOOK = """
import httpx
from pathlib import Path

def pytest_semantictest_compliance_setup(config, setup):
    started = httpx.get("{base}/stats", trust_env=False).json()["order"]
    with open(Path(__file__).with_name("hook.log"), "a") as log:
        log.write(f"{{setup.document}} {{len(started)}}\\n")
"""


def test_no_compliance_case_starts_before_its_files_setup_hook(
    pytester: pytest.Pytester, latency: str
) -> None:
    """The setup hook creates the agents a file's cases talk to: the look-ahead starts none of them
    before it ran (the compliance glue's look-ahead gate)."""
    pytester.makeconftest(SETUP_HOOK.format(base=latency))
    pytester.makefile(".md", a_first=compliance_doc("first", [(f"{i}. First", 200) for i in range(1, 4)]))
    pytester.makefile(".md", b_second=compliance_doc("second", [(f"{i}. Second", 200) for i in range(1, 4)]))
    result = run_pytest(
        pytester, "-v", "-p", "no:cacheprovider", f"--semantictest-compliance-base-url={latency}"
    )
    result.assert_outcomes(passed=6)
    # when each file's hook ran, only the earlier file's cases had been sent
    assert (pytester.path / "hook.log").read_text().split("\n") == ["first 0", "second 3", ""]
    assert stats(latency)["max_in_flight"] > 1  # the cases of a file did run at once
