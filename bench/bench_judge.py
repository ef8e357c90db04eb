#!/usr/bin/env python3
"""Benchmark: the cost of a cached LLM judge call, and judge calls overlapping within one test.

Targets:
  (a) a cached judge call costs under 1 ms of overhead;
  (b) a test making 10 independent judge calls against a server answering in 200 ms finishes in
      under 0.5 s (calls within a test run concurrently).

(a) runs in-process: N distinct judge requests are recorded once into a temp replay cache through
the fake OpenAI-compatible server (tests/llm/fake_openai.py), then replayed in ``replay`` mode (no
endpoint configured at all). It reports the mean and p99 time of ``Judge.judge`` per call, minus a
no-op coroutine baseline, both "cold" (a fresh client: every entry read from disk) and "warm" (the
same client again: entries already in memory). It checks that nothing reached the server.
(b) runs one SemanticTest test through the engine against the fake server answering every
request after 200 ms, with the cache off: 10 independent ``LLMJudge`` steps in one pipeline, then
one ``LLMJudge`` step repeated with ``runs: 10``. The client is warmed first (the first request
creates the ``openai`` client and its connection pool; that one-off cost is printed separately).

Usage::

    python bench/bench_judge.py [--n 1000] [--repeat 5] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_semantictest.api import arun_suite  # noqa: E402
from pytest_semantictest.llm import build  # noqa: E402
from pytest_semantictest.llm.config import LLMConfig  # noqa: E402
from pytest_semantictest.llm.judge import Judge, request_from_args  # noqa: E402
from pytest_semantictest.run_context import RunContext  # noqa: E402
from tests.llm.fake_openai import FakeOpenAI  # noqa: E402

CACHED_TARGET_MS = 1.0
CONCURRENT_TARGET_S = 0.5


def requests(n: int) -> list[Any]:
    return [
        request_from_args(
            f"I've scheduled meeting #{i} for tomorrow at 2 PM in Room {i % 7}.",
            "Confirms the meeting time and the room",
            constraints=["Mentions the room"],
            history=[{"role": "user", "content": f"Book meeting {i} tomorrow 2pm"}],
            tool_calls=[{"name": "create_event", "args": {"id": i}}],
        )
        for i in range(n)
    ]


async def timed_calls(judge: Judge, batch: list[Any]) -> list[float]:
    times = []
    for request in batch:
        start = time.perf_counter()
        await judge.judge(request)
        times.append(time.perf_counter() - start)
    return times


async def noop(_: Any) -> dict[str, Any]:
    return {}


async def baseline(batch: list[Any]) -> list[float]:
    times = []
    for request in batch:
        start = time.perf_counter()
        await noop(request)
        times.append(time.perf_counter() - start)
    return times


def p99(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.99) - 1)]


def cached_overhead(n: int, repeat: int) -> tuple[float, float, float, float]:
    """(cold mean, cold p99, warm mean, warm p99) in ms, baseline subtracted."""
    batch = requests(n)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        record = LLMConfig(base_url=server.url, cache_dir=Path(tmp), env={})
        client, judge = build(record)

        async def fill() -> None:
            await asyncio.gather(*(judge.judge(r) for r in batch))
            await client.aclose()

        asyncio.run(fill())
        recorded = server.count
        colds, warms, bases = [], [], []
        for _ in range(repeat):
            _, judge = build(LLMConfig(cache_dir=Path(tmp), cache_mode="replay", env={}))

            async def measure() -> tuple[list[float], list[float], list[float]]:
                return await timed_calls(judge, batch), await timed_calls(judge, batch), await baseline(batch)  # noqa: B023

            cold, warm, base = asyncio.run(measure())
            colds += cold
            warms += warm
            bases += base
        assert server.count == recorded, "a cached call reached the server"
    base = statistics.mean(bases)
    ms = 1000.0
    return (
        (statistics.mean(colds) - base) * ms,
        (p99(colds) - base) * ms,
        (statistics.mean(warms) - base) * ms,
        (p99(warms) - base) * ms,
    )


def judge_step(i: int) -> dict[str, Any]:
    return {
        "block": "LLMJudge",
        "id": f"judge{i}",
        "input": {
            "text": f"Answer number {i}: the meeting is at 2 PM.",
            "expected": {"expectedBehavior": "Confirms 2 PM"},
        },
        "output": f"j{i}",
    }


def concurrent_wall(repeat: int, delay: float) -> tuple[float, list[float], list[float]]:
    """(first request s, wall s of 10 judge steps per repeat, wall s of runs: 10 per repeat)."""
    steps = {
        "name": "b",
        "tests": [
            {
                "id": "ten-judges",
                "pipeline": [judge_step(i) for i in range(10)],
                "assertions": {f"j{i}.score": {"gt": 0.7} for i in range(10)},
            }
        ],
    }
    runs = {
        "name": "b",
        "tests": [
            {
                "id": "repeated",
                "runs": 10,
                "pipeline": [judge_step(0)],
                "assertions": {"j0.score": {"gt": 0.7}},
            }
        ],
    }
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(delay=delay) as server:

        async def go() -> tuple[float, list[float], list[float]]:
            ctx = RunContext(env={})
            ctx.llm, ctx.judge = build(
                LLMConfig(base_url=server.url, cache_dir=Path(tmp), cache_mode="off", env={})
            )
            start = time.perf_counter()
            await ctx.judge.judge(requests(1)[0])
            first = time.perf_counter() - start
            walls, reps = [], []
            for _ in range(repeat):
                for spec, out in ((steps, walls), (runs, reps)):
                    start = time.perf_counter()
                    result = await arun_suite(spec, ctx)
                    out.append(time.perf_counter() - start)
                    assert result.passed, result
            await ctx.aclose()
            return first, walls, reps

        first, walls, reps = asyncio.run(go())
        assert server.count == 1 + 20 * repeat
    return first, walls, reps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--n", type=int, default=1000, help="distinct cached judge calls per measurement (default 1000)"
    )
    ap.add_argument("--repeat", type=int, default=5, help="measurements of each kind (default 5)")
    ap.add_argument(
        "--delay", type=float, default=0.2, help="the fake server's answer time in seconds (default 0.2)"
    )
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}  n={args.n}  repeat={args.repeat}  server delay={args.delay:g} s")

    cold, cold99, warm, warm99 = cached_overhead(args.n, args.repeat)
    ok_a = cold < CACHED_TARGET_MS and warm < CACHED_TARGET_MS
    print("\n(a) cached judge call, overhead over a no-op coroutine (replay mode, no endpoint):")
    print(f"  cold (entry read from disk)  mean {cold:6.3f} ms   p99 {cold99:6.3f} ms")
    print(f"  warm (entry in memory)       mean {warm:6.3f} ms   p99 {warm99:6.3f} ms")
    print(f"  target mean < {CACHED_TARGET_MS:g} ms: {'PASS' if ok_a else 'FAIL'}")

    first, walls, reps = concurrent_wall(args.repeat, args.delay)
    worst = max(max(walls), max(reps))
    ok_b = worst < CONCURRENT_TARGET_S
    serial = 10 * args.delay
    print(
        f"\n(b) one test, 10 independent judge calls, server answers in {args.delay * 1000:.0f} ms "
        f"(serial would take {serial:.1f} s):"
    )
    print(
        f"  first request of the session: {first:.3f} s, {first - args.delay:.3f} s beyond the server's answer time"
        " (creating the openai client; one-off)"
    )
    print(
        f"  10 LLMJudge steps in one pipeline   median {statistics.median(walls):.3f} s   max {max(walls):.3f} s"
    )
    print(
        f"  1 LLMJudge step, runs: 10           median {statistics.median(reps):.3f} s   max {max(reps):.3f} s"
    )
    print(f"  target < {CONCURRENT_TARGET_S:g} s: {'PASS' if ok_b else 'FAIL'}")
    return 1 if args.check and not (ok_a and ok_b) else 0


if __name__ == "__main__":
    raise SystemExit(main())
