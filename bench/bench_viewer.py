#!/usr/bin/env python3
"""The results viewer at scale: a 10,000-test results file, its page's size and how fast it opens.

Targets: the page opens in headless Chromium in under 2 s and is under 15 MB.

The results file is made up (seeded): a mix shaped like the examples' records. Each test has an
HTTP exchange with a JSON request (~150 characters) and response (~700), two tool calls with
arguments, LLM usage, and one in ten a failure message of ~600 characters; one in five is a
conversation of three turns; one in twenty a repeated test (20 runs, an interval); one in
twenty a judge verdict with three criteria. Then: ``semantictest report`` builds the page (its wall
time is printed), the page's size, and Chromium opens it ``--repeat`` times (a fresh browser each
time): the time from navigation until the list is drawn, median and worst, plus the time until
the search has narrowed the list and until a test's details are open.

Not covered: records much larger than these (bodies up to the results file's 1,000-character cut
each), browsers other than Chromium, machines slower than this one.

Usage::

    python bench/bench_viewer.py [--tests 10000] [--repeat 3] [--seed 7] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reports.cdp import Browser  # noqa: E402

WORDS = [
    "agent",
    "weather",
    "paris",
    "oslo",
    "booking",
    "calendar",
    "meeting",
    "order",
    "refund",
    "tool",
    "reply",
    "user",
    "city",
    "days",
]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def record(rng: random.Random, i: int) -> dict[str, object]:
    fmt = rng.choice(["semantictest", "highbar", "compliance", "yao"])
    failed = i % 10 == 3
    request = json.dumps({"model": "demo", "messages": [{"role": "user", "content": sentence(rng, 12)}]})
    response = json.dumps(
        {
            "id": f"chatcmpl-{i}",
            "choices": [{"message": {"content": sentence(rng, 90)}}],
            "usage": {"total_tokens": 80},
        }
    )
    tools = [
        {"name": "get_weather", "arguments": json.dumps({"city": rng.choice(WORDS), "unit": "celsius"})},
        {
            "name": "get_forecast",
            "arguments": json.dumps({"city": rng.choice(WORDS), "days": rng.randint(1, 7)}),
        },
    ]
    rec: dict[str, object] = {
        "id": f"specs/{fmt}/file{i // 50}.json::test-{i}",
        "name": f"test {i}",
        "file": f"specs/{fmt}/file{i // 50}.json",
        "format": fmt,
        "outcome": "failed" if failed else "passed",
        "duration_s": round(rng.uniform(0.01, 2.0), 6),
        "results_version": 1,
        "latency_ms": round(rng.uniform(5, 900), 1),
        "llm_usage": {
            "calls": 1,
            "cache_hits": 0,
            "tokens": 120,
            "prompt_tokens@gpt-4o-mini": 90,
            "completion_tokens@gpt-4o-mini": 30,
        },
        "steps": [
            {
                "step": "HttpRequest",
                "ms": 20.0,
                "http": [
                    {
                        "method": "POST",
                        "url": "http://127.0.0.1:8000/v1/chat/completions",
                        "status": 200,
                        "request": request,
                        "response": response,
                    }
                ],
                "tools": tools,
            }
        ],
    }
    if failed:
        rec["message"] = f"specs/{fmt}/file{i // 50}.json:3: tools.passed: " + sentence(rng, 90)
    if i % 5 == 0:
        rec["turns"] = [
            {"turn": t, "input": sentence(rng, 10), "output": sentence(rng, 30)} for t in (1, 2, 3)
        ]
    if i % 20 == 0:
        runs = ["passed" if rng.random() < 0.8 else "failed" for _ in range(20)]
        k = runs.count("passed")
        rec["runs"] = runs
        rec["pass_rate"] = {
            "passed": k,
            "runs": 20,
            "rate": k / 20,
            "low": max(0, k / 20 - 0.2),
            "high": min(1, k / 20 + 0.15),
            "threshold": 0.8,
        }
    if i % 20 == 7:
        rec["steps"].append(  # type: ignore[attr-defined]
            {
                "step": "LLMJudge",
                "judges": [
                    {
                        "kind": "judge",
                        "score": 0.8,
                        "threshold": 0.7,
                        "passed": True,
                        "reasoning": sentence(rng, 40),
                        "criteria": {"accuracy": 0.9, "completeness": 0.7, "relevance": 0.8},
                        "constraints": [],
                    }
                ],
            }
        )
    return rec


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the results file and page in this folder"
    )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    results = folder / "results.jsonl"
    with results.open("w", encoding="utf-8") as fh:
        for i in range(args.tests):
            fh.write(json.dumps(record(rng, i)) + "\n")
    page = folder / "report.html"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest_semantictest.cli", "report", str(results), "-o", str(page)],
        capture_output=True,
        text=True,
        check=False,
    )
    built = time.perf_counter() - started
    if done.returncode not in (0, 1):
        print(done.stdout, done.stderr)
        return 2
    size = page.stat().st_size / 1e6
    opened, unpacked, searched, details = [], [], [], []
    for n in range(args.repeat):
        with Browser(folder / f"browser-{n}") as b:
            started = time.perf_counter()
            opened.append(b.open(page.as_uri()))
            b.wait_for("document.body.dataset.details === '1'")
            unpacked.append(time.perf_counter() - started)
            t = time.perf_counter()
            b.type("#st-search", "test-9999")
            b.wait_for("document.querySelectorAll('tr.st-row').length === 1")
            searched.append(time.perf_counter() - t)
            t = time.perf_counter()
            b.click("tr.st-row")
            b.wait_for("document.querySelector('tr.st-detail') !== null")
            details.append(time.perf_counter() - t)
            if b.errors:
                print("console errors:", b.errors)
                return 2
    print(f"{args.tests} tests (seed {args.seed}): results file {results.stat().st_size / 1e6:.1f} MB")
    print(
        f"  semantictest report: {built:.2f} s; page {size:.1f} MB (target < 15 MB: {'PASS' if size < 15 else 'FAIL'})"
    )
    print(
        f"  opens in Chromium: median {statistics.median(opened):.2f} s, worst {max(opened):.2f} s "
        f"(target < 2 s: {'PASS' if max(opened) < 2 else 'FAIL'}; {args.repeat} fresh browsers)"
    )
    print(f"  every test's details unpacked, from navigation: median {statistics.median(unpacked):.2f} s")
    print(
        f"  search narrows the list: median {statistics.median(searched) * 1000:.0f} ms; "
        f"a test's details open: median {statistics.median(details) * 1000:.0f} ms"
    )
    return 0 if size < 15 and max(opened) < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
