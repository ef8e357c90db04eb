#!/usr/bin/env python3
"""Benchmark: N spec tests against a local agent that answers in 1 s, in one process.

Three suites, each run in a fresh ``python -m pytest -q -p no:cacheprovider`` (no xdist) from a temp
dir with an empty ``pytest.ini``, with the default ``--semantictest-items-at-once`` (16) and with
``--semantictest-items-at-once 1`` (one by one, as before the look-ahead):

- ``highbar``: N one-call tests in one ``*.highbar.yaml`` against ``tests/agents/slow_agent.py --delay
  1`` (the plugin starts it; tool calls from its trace file; ``settle_time: 0``; ``concurrency: 16``
  in ``agent:``, the agent's own bound, whose default is 8). Its first test runs alone (it shows the
  trace records are tagged), so 16 at once make 1 + 4 rounds of 1 s: it is also run with 25 at once
  (``--semantictest-items-at-once 25``, agent ``concurrency: 25``: 1 + 2 rounds);
- ``semantictest``: N ``HttpRequest`` tests in one SemanticTest JSON file against
  ``tests/concurrency/latency_server.py`` (``/sleep?s=1``);
- ``compliance``: N chat-completion cases in one compliance Markdown file against the same server
  (every ``/chat/completions`` answers after 1 s).

Bytecode is cached in the temp dir (``PYTHONPYCACHEPREFIX``) and one unmeasured collection per suite
fills it, as in everyday use. Figures: the child's wall time (interpreter start, collection, agent
start-up and all tests), and the
tests' own span (first test's setup to last test's end, from an in-run conftest), with the
``passed`` count checked. Target: a wall time under 6 s for each kind (its best concurrent row),
about N s one by one.

Stdlib + pytest + the repository's test servers.  Usage::

    python bench/bench_concurrency.py [--n 50] [--delay 1] [--kinds highbar,semantictest,compliance]
                                      [--skip-sequential] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from bench_highbar import free_port, one_call_test  # noqa: E402  (the same spec text as the highbar bench)

from tests.concurrency import latency_server  # noqa: E402

SLOW_AGENT = ROOT / "tests" / "agents" / "slow_agent.py"
PYTEST = [
    sys.executable,
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:hypothesispytest",
    "-p",
    "no:xdist",
]
TARGET_S = 6.0
TIMING = """\
import json, os, time
_T = {}
def pytest_runtest_logstart(nodeid, location):
    _T.setdefault("first", time.perf_counter())
def pytest_runtest_logfinish(nodeid, location):
    _T["last"] = time.perf_counter()
def pytest_sessionfinish(session):
    with open(os.path.join(str(session.config.rootpath), "timing.json"), "w") as f:
        json.dump(_T, f)
"""


def highbar_spec(n: int, delay: float, concurrency: int = 16) -> str:
    port = free_port()
    start = shlex.join(
        [sys.executable, str(SLOW_AGENT), "--port", str(port), "--delay", f"{delay:g}", "--tcp-nodelay"]
    )
    tests = "".join(one_call_test(f"t{i}") for i in range(n))
    return (
        f'agent:\n  start: "{start}"\n  endpoint: "http://127.0.0.1:{port}/chat"\n'
        f'  health: "http://127.0.0.1:{port}/health"\n  settle_time: 0\n  concurrency: {concurrency}\n'
        f"suites:\n  - name: Bench\n    tests:\n{tests}"
    )


def semantictest_suite(n: int, base: str, delay: float) -> str:
    tests = [
        {
            "id": f"t{i}",
            "pipeline": [
                {"block": "HttpRequest", "input": {"url": f"{base}/sleep?s={delay:g}&id={i}"}, "output": "r"}
            ],
            "assertions": {"r.status": 200, "r.body.ok": True},
        }
        for i in range(n)
    ]
    return json.dumps({"name": "bench", "tests": tests}, indent=1)


def compliance_file(n: int) -> str:
    cases = "".join(
        f"### {i + 1}. Case {i + 1}\n\n**Request:**\nPOST `/chat/completions`\n```json\n"
        f'{{"model": "echo-agent", "messages": [{{"role": "user", "content": "Hello {i}"}}]}}\n```\n\n'
        "**Strict:**\n```yaml\nstatus: 200\n```\n\n"
        for i in range(n)
    )
    return (
        "---\nname: bench\nversion: 1.0\ntransport: completions\n---\n\n# Bench\n\n## Setup\n\n"
        "Create an agent with the following configuration:\n- Name: `echo-agent`\n"
        "- Instructions: \"Repeat back exactly what the user says, prefixed with 'Echo: '\"\n\n"
        f"## Test Cases\n\n{cases}"
    )


def child_env(bytecode: Path) -> dict[str, str]:
    """This environment without what would change the runs; bytecode cached under ``bytecode`` (the
    bench's temp folder), as in everyday use, where the package is not compiled again for every run."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYTEST_ADDOPTS",
            "PYTEST_PLUGINS",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
            "BASE_URL",
            "COMPLIANCE_BASE_URL",
            "OPENAI_BASE_URL",
            "PYTHONDONTWRITEBYTECODE",
        )
    }
    env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return env


def warm_up(folder: Path, target: str, extra: list[str]) -> None:
    """One unmeasured collection, which fills the bytecode cache the measured runs read."""
    subprocess.run(
        [*PYTEST, target, "--collect-only", *extra],
        cwd=folder,
        env=child_env(bytecode_dir(folder)),
        capture_output=True,
        timeout=600,
        check=False,
    )


def bytecode_dir(folder: Path) -> Path:
    """The bytecode cache every run of the bench shares (beside the suites' folders)."""
    return folder.parent / "pycache"


def run(folder: Path, target: str, n: int, extra: list[str]) -> tuple[float, float]:
    """(wall s, tests' span s) of one pytest run that must report exactly ``n passed``."""
    start = time.perf_counter()
    done = subprocess.run(
        [*PYTEST, target, *extra],
        cwd=folder,
        env=child_env(bytecode_dir(folder)),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    wall = time.perf_counter() - start
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or f"{n} passed" not in last:
        sys.exit(
            f"{target} {' '.join(extra)}: expected {n} passed\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
        )
    timing = json.loads((folder / "timing.json").read_text())
    return wall, timing["last"] - timing["first"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--kinds", default="highbar,semantictest,compliance")
    parser.add_argument("--skip-sequential", action="store_true", help="do not run the one-by-one runs")
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 if a default run takes {TARGET_S:g} s or more"
    )
    args = parser.parse_args()
    failed = False
    sequential = [("one by one", ["--semantictest-items-at-once", "1"])]
    with (
        tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp,
        latency_server.serving(args.delay) as base,
    ):
        root = Path(tmp)
        for kind in args.kinds.split(","):
            folder = root / kind
            folder.mkdir()
            (folder / "pytest.ini").write_text("[pytest]\n")
            (folder / "conftest.py").write_text(TIMING)
            if kind == "highbar":
                target, extra = "bench.highbar.yaml", []
                (folder / target).write_text(highbar_spec(args.n, args.delay))
            elif kind == "semantictest":
                target, extra = "bench_test.json", []
                (folder / target).write_text(semantictest_suite(args.n, base, args.delay))
            elif kind == "compliance":
                target, extra = "bench.md", [f"--semantictest-compliance-base-url={base}"]
                (folder / target).write_text(compliance_file(args.n))
            else:
                sys.exit(f"unknown kind {kind!r}: highbar, semantictest or compliance")
            warm_up(folder, target, extra)
            modes: list[tuple[str, list[str]]] = [("default (16)", [])]
            if kind == "highbar":
                modes.append(("25 at once", ["--semantictest-items-at-once", "25"]))
            best = float("inf")
            for label, more in modes + ([] if args.skip_sequential else sequential):
                if kind == "highbar":  # the agent's own bound follows
                    (folder / target).write_text(highbar_spec(args.n, args.delay, 25 if "25" in more else 16))
                wall, span = run(folder, target, args.n, [*extra, *more])
                if (label, more) in modes:
                    best = min(best, wall)
                print(f"{kind:13} {label:13} wall {wall:6.2f} s   tests {span:6.2f} s", flush=True)
            failed |= best >= TARGET_S
            print(
                f"{kind:13} best concurrent wall {best:.2f} s: {'PASS' if best < TARGET_S else 'FAIL'} "
                f"(target {TARGET_S:g} s)",
                flush=True,
            )
    if args.check and failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
