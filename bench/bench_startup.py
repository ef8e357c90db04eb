#!/usr/bin/env python3
"""The start-up figures, side by side in one run (alternating, medians).

(A) one offline SemanticTest file (one ``MockData`` test) with the plugin, against bare pytest
(``-p no:semantictest``) on a one-test Python file; target: at most 60 ms more. The SemanticTest Node
runner is compared when ``--node-runner`` names its command (it takes the file as its argument; it is
not installed on the machine this was written on, and the script says so when it is not given).
(B) ``pytest --collect-only`` over highbar's doc and example specs (the fidelity specs written from its
docs, ``tests/highbar/fidelity/``, and the sdist's example and fixture specs given by ``--sdist``)
against ``highbar validate`` on the same files; target: no slower.

Each kind runs in a fresh interpreter from a temp folder with an empty ``pytest.ini``; bytecode is
cached under the temp folder (``PYTHONPYCACHEPREFIX``). Printed per kind: median wall and CPU (the
child's user + sys from ``os.wait4``), both with the venv's other plugins and with plugin autoload
off (``-p pytest_semantictest.plugin`` only), since the installed plugins cost more than ours.

Usage::

    python bench/bench_startup.py [--repeat 9] [--highbar /tmp/hb/bin/highbar] [--sdist DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLEAN_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTHONDONTWRITEBYTECODE")
SUITE = {
    "name": "one",
    "tests": [
        {
            "id": "t1",
            "pipeline": [
                {
                    "id": "m",
                    "block": "MockData",
                    "config": {"data": {"id": 1, "name": "user 1"}},
                    "output": "user",
                }
            ],
            "assertions": {"user.id": 1, "user.name": {"contains": "user"}},
        }
    ],
}
FIDELITY_ENV = {
    "FIDELITY_PORT": "8999",
    "FIDELITY_PYTHON": "python",
    "FIDELITY_AGENT": "agent.py",
    "FIDELITY_HOOK": "hook.py",
    "FIDELITY_TRACES": "traces.jsonl",
}


def env_for(folder: Path, autoload: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    env.update(FIDELITY_ENV, PYTHONPYCACHEPREFIX=str(folder / "pycache"))
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(wall ms, CPU ms) of one child, which must exit with one of ``ok``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        sys.exit(f"bench_startup: {' '.join(argv)} exited {code}:\n{out[-3000:]}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def measure(
    kinds: dict[str, tuple[list[str], Path, dict[str, str], tuple[int, ...]]], repeat: int
) -> dict[str, tuple[float, float]]:
    """Every kind once unmeasured, then ``repeat`` alternating rounds; medians of wall and CPU."""
    for argv, cwd, env, ok in kinds.values():
        run(argv, cwd, env, ok)
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    for n in range(repeat):
        for name in list(kinds) if n % 2 == 0 else list(reversed(kinds)):
            got[name].append(run(*kinds[name]))
    return {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()
    }


def show(title: str, results: dict[str, tuple[float, float]], base: str) -> None:
    print(f"\n{title}")
    bw, bc = results[base]
    for name, (wall, cpu) in results.items():
        extra = (
            ""
            if name == base
            else f"   {wall - bw:+7.0f} ms wall ({wall / bw:.2f}x), {cpu - bc:+7.0f} ms CPU"
        )
        print(f"  {name:<44} wall {wall:7.0f} ms  CPU {cpu:7.0f} ms{extra}")


def highbar_set(folder: Path, sdist: Path | None) -> list[str]:
    specs = sorted((ROOT / "tests" / "highbar" / "fidelity").glob("*.highbar.yaml"))
    if sdist is not None:
        specs += sorted(
            p for p in sdist.glob("examples/*/specs/*.highbar.yaml") if "openai" not in p.parts[-3]
        )
        specs += sorted(sdist.glob("tests/integration/fixtures/*.highbar.yaml"))
    names = []
    for spec in specs:
        name = spec.name if spec.parent.name != "fixtures" else "integration.highbar.yaml"
        shutil.copy(spec, folder / name)
        names.append(name)
    return names


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument(
        "--highbar", type=Path, default=Path(shutil.which("highbar") or "/tmp/hb/bin/highbar")
    )
    parser.add_argument(
        "--node-runner", help="the SemanticTest Node runner's command, e.g. 'npx semantictest'"
    )
    parser.add_argument(
        "--sdist", type=Path, help="highbar 0.1.0rc3's unpacked sdist (its examples and fixture)"
    )
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        base = Path(tmp)
        one, empty, hb = base / "one", base / "empty", base / "highbar"
        for folder in (one, empty, hb):
            folder.mkdir()
            (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (one / "one.json").write_text(json.dumps(SUITE), encoding="utf-8")
        (empty / "test_empty.py").write_text("def test_empty():\n    pass\n", encoding="utf-8")
        pt = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        only = ["-p", "pytest_semantictest.plugin"]
        kinds = {
            "bare pytest, empty test file": (
                pt + ["-p", "no:semantictest"],
                empty,
                env_for(base, True),
                (0,),
            ),
            "plugin, one SemanticTest file": (pt, one, env_for(base, True), (0,)),
            "bare pytest, no autoload": (pt, empty, env_for(base, False), (0,)),
            "plugin only (no autoload), one SemanticTest file": (pt + only, one, env_for(base, False), (0,)),
        }
        node = args.node_runner
        if node:
            kinds["SemanticTest Node runner, same file"] = (
                [*node.split(), "one.json"],
                one,
                env_for(base, True),
                (0,),
            )
        results = measure(kinds, args.repeat)
        show(
            "(A) one offline SemanticTest file (target: plugin at most +60 ms over bare pytest)",
            {k: results[k] for k in list(kinds)[:2] + list(kinds)[4:]},
            "bare pytest, empty test file",
        )
        show(
            "    the same with plugin autoload off",
            {k: results[k] for k in list(kinds)[2:4]},
            "bare pytest, no autoload",
        )
        if not node:
            print(
                "  SemanticTest Node runner: not compared (--node-runner not given; it is not installed here)"
            )
        if not args.highbar.exists():
            print(f"\n(B) skipped: no highbar at {args.highbar}")
            return 0
        names = highbar_set(hb, args.sdist)
        co = pt + ["--collect-only", *names]
        # highbar validate exits 2 on p11 (min_pass over runs without --runs), pytest 2 (its collection error)
        kinds = {
            "highbar validate": ([str(args.highbar), "validate", "."], hb, env_for(base, True), (0, 2)),
            "pytest --collect-only": (co, hb, env_for(base, True), (0, 2)),
            "pytest --collect-only, plugin only": (co[:6] + only + co[6:], hb, env_for(base, False), (0, 2)),
        }
        show(
            f"(B) validating {len(names)} highbar specs (target: no slower than highbar validate)",
            measure(kinds, args.repeat),
            "highbar validate",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
