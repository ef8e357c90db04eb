#!/usr/bin/env python3
"""highbar and the plugin side by side on the fidelity specs (``tests/highbar/fidelity/``).

Runs every spec with highbar 0.1.0rc3 (needs a Python 3.12 environment with ``highbar`` installed)
and with pytest, and prints each test's two verdicts; exit 1 when one differs. ``--record`` writes
highbar's verdicts to ``tests/highbar/fidelity/verdicts.json`` (``test_highbar_fidelity.py`` compares
ours against that file where highbar cannot be installed)::

    python3.12 -m venv /tmp/hb && /tmp/hb/bin/pip install highbar==0.1.0rc3
    python bench/highbar_side_by_side.py --highbar /tmp/hb/bin/highbar [--record] [spec names...]

``--examples DIR`` also runs highbar's own examples (``examples/`` of its sdist: ``pip download --no-deps
--no-binary :all: highbar==0.1.0rc3``; their SDK-based agents need ``highbar[quickstart]`` in that venv):
each example's ``specs/`` from a copy of its folder, with the venv's ``bin`` first on ``PATH`` so that
``python agent.py`` has highbar's SDK, for both tools.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "highbar"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # (the harness imports tests.helpers)

import fidelity_harness as harness


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--highbar", default=shutil.which("highbar") or "/tmp/hb/bin/highbar")
    parser.add_argument("--record", action="store_true", help="write highbar's verdicts to verdicts.json")
    parser.add_argument("--verbose", action="store_true", help="print both outputs of a differing spec")
    parser.add_argument(
        "--examples", type=Path, help="highbar's examples/ folder: run those side by side too"
    )
    parser.add_argument("specs", nargs="*", help="spec file names (default: all)")
    args = parser.parse_args()
    if not Path(args.highbar).exists():
        print(f"highbar not found at {args.highbar}: install highbar==0.1.0rc3 in a Python 3.12 venv")
        return 2
    version = subprocess.run([args.highbar, "--version"], capture_output=True, text=True).stdout.strip()
    specs = [s for s in harness.spec_files() if not args.specs or s.name in args.specs]
    recorded: dict[str, object] = {}
    differ = 0
    walls = [0.0, 0.0]  # highbar's, ours: each spec is its own run of each tool
    for spec in specs:
        started = time.perf_counter()
        code, theirs, their_out = harness.run_highbar(args.highbar, spec)
        walls[0] += time.perf_counter() - started
        started = time.perf_counter()
        our_code, ours, our_out = harness.run_ours(spec)
        walls[1] += time.perf_counter() - started
        print(f"{spec.name}: highbar exit {code}, pytest exit {our_code}")
        same = True
        for name in sorted(set(theirs) | set(ours)):
            a, b = theirs.get(name, "-"), ours.get(name, "-")
            same = same and a == b
            print(f"  {'  ' if a == b else '!='} {name}: highbar {a}, ours {b}")
        if not same:
            differ += 1
            if args.verbose:
                print(their_out, our_out, sep="\n---\n")
        command = " ".join(shlex.quote(part) for part in harness.highbar_command("highbar", Path(spec.name)))
        recorded[spec.name] = {"command": command, "exit": code, "verdicts": theirs}
        if tested := harness.highbar_variations(their_out):
            recorded[spec.name]["variations"] = tested
        if spec.name in harness.MESSAGES:  # highbar's words, compared with ours by test_highbar_fidelity.py
            messages = harness.highbar_messages(their_out)
            recorded[spec.name]["messages"] = {name: messages[name] for name in theirs if name in messages}
    if args.record:
        if args.specs and harness.VERDICTS.exists():  # a subset re-recorded: keep the others' verdicts
            recorded = {**json.loads(harness.VERDICTS.read_text(encoding="utf-8"))["specs"], **recorded}
            recorded = dict(sorted(recorded.items()))
        data = {
            "recorded_with": version,
            "how": "python bench/highbar_side_by_side.py --highbar <venv>/bin/highbar --record "
            "(each spec run as 'command' from a temp dir, FIDELITY_* set by tests/highbar/fidelity_harness.py)",
            "specs": recorded,
        }
        harness.VERDICTS.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"recorded {len(recorded)} specs to {harness.VERDICTS}")
    print(f"{len(specs) - differ} of {len(specs)} specs give the same verdicts")
    print(
        f"wall, one run per spec and tool (temp folder and verdict parsing included): highbar {walls[0]:.1f} s, "
        f"pytest {walls[1]:.1f} s, {walls[0] / max(walls[1], 1e-9):.2f}x"
    )
    if args.examples is not None:
        differ += run_examples(args.examples, Path(args.highbar))
    return 1 if differ else 0


def run_examples(examples: Path, highbar: Path) -> int:
    """highbar's own examples (those whose agent needs no API key), both ways; how many differ."""
    differ = 0
    for example in sorted(p for p in examples.iterdir() if (p / "specs").is_dir()):
        if "openai" in example.name:  # its agent calls the OpenAI API
            print(f"{example.name}: skipped (needs an OpenAI API key)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / example.name
            shutil.copytree(example, work)
            (work / "pytest.ini").write_text("[pytest]\n")
            env = {
                **os.environ,
                "PATH": f"{highbar.parent}{os.pathsep}{os.environ.get('PATH', '')}",
                "COLUMNS": "400",
                "NO_COLOR": "1",
            }
            env.pop("HIGHBAR_TRACES_URL", None)
            env.pop("PYTEST_ADDOPTS", None)
            theirs_run = subprocess.run(
                [str(highbar), "run", "specs/"],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            ours_run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "specs/",
                    "-p",
                    "no:cacheprovider",
                    "-q",
                    "--junitxml=junit.xml",
                ],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            theirs = harness.parse_highbar(theirs_run.stdout)
            ours = harness.parse_junit(work / "junit.xml") if (work / "junit.xml").exists() else {}
            ours = harness.with_late_failures(ours, ours_run.stdout)
        print(f"{example.name}: highbar exit {theirs_run.returncode}, pytest exit {ours_run.returncode}")
        for name in sorted(set(theirs) | set(ours)):
            a, b = theirs.get(name, "-"), ours.get(name, "-")
            print(f"  {'  ' if a == b else '!='} {name}: highbar {a}, ours {b}")
        differ += theirs != ours or theirs_run.returncode != ours_run.returncode
    return differ


if __name__ == "__main__":
    sys.exit(main())
