#!/usr/bin/env python3
"""highbar's doc and example specs run as one set, once by highbar and once by one pytest.

The set: the fidelity specs of ``tests/highbar/fidelity/`` and, with ``--sdist``, highbar 0.1.0rc3's own
examples (``quickstart``, ``trace-contract``; ``openai-agent`` needs an API key) and its integration
fixture. All are copied into one folder and run by ``highbar run <folder>`` and by
``python -m pytest <folder>`` in turn, from that folder, with the same environment. Prints both wall
times, the ratio, and each test's two verdicts where they differ (exit 1 when one does).

What the copies change, alike for both tools: each fidelity spec gets its own port variable
(``${FIDELITY_PORT}`` -> ``${FIDELITY_PORT_<n>}``; in one run the agents of several files would
otherwise share a port) and an attach-mode spec its own trace file; a relative ``python agent.py``
becomes that agent's absolute path. The sidecars of ``fidelity_harness`` apply (committed variations,
the fake LLM server's answers, queued again before each tool's run); the command-line options of single
specs do not, for either tool (p17's ``-n 2``; p11 is left out: it is about ``--runs 5``, without which
both tools reject it)::

    python3.12 -m venv /tmp/hb && /tmp/hb/bin/pip install 'highbar[quickstart]==0.1.0rc3'
    /tmp/hb/bin/pip download --no-deps --no-binary :all: highbar==0.1.0rc3 -d /tmp/hbsrc && tar xzf ...
    python bench/bench_highbar_set.py --highbar /tmp/hb/bin/highbar --sdist /tmp/hbsrc/highbar-0.1.0rc3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "highbar"))
sys.path.insert(0, str(ROOT))  # (the harness imports tests.helpers)

import fidelity_harness as harness  # noqa: E402

Verdicts = dict[tuple[str, str], str]


def build(folder: Path, sdist: Path | None) -> tuple[dict[str, str], list[tuple[int, Path]], list[list[str]]]:
    """Copy the set into ``folder``: the environment it needs, its attach agents (port, trace file) and
    the fake LLM's answers."""
    env = {
        "FIDELITY_PYTHON": sys.executable,
        "FIDELITY_AGENT": str(harness.AGENT),
        "FIDELITY_HOOK": str(harness.HOOK),
    }
    attach: list[tuple[int, Path]] = []
    answers: list[list[str]] = []
    variations: list[dict[str, object]] = []
    for n, spec in enumerate(harness.spec_files()):
        if spec.name in harness.RUNS:  # valid only with its command-line runs
            continue
        text = spec.read_text(encoding="utf-8").replace("${FIDELITY_PORT}", f"${{FIDELITY_PORT_{n}}}")
        text = text.replace("${FIDELITY_TRACES}", f"${{FIDELITY_TRACES_{n}}}")
        (folder / spec.name).write_text(text, encoding="utf-8")
        port = env[f"FIDELITY_PORT_{n}"] = str(harness.free_port())
        if spec.name.startswith("attach_"):
            traces = folder / f"traces-{n}.jsonl"
            env[f"FIDELITY_TRACES_{n}"] = str(traces)
            attach.append((int(port), traces))
        stem = spec.name.removesuffix(".highbar.yaml")
        if (sidecar := spec.with_name(f"{stem}.variations.json")).exists():
            variations += json.loads(sidecar.read_text(encoding="utf-8"))
        if (sidecar := spec.with_name(f"{stem}.llm.json")).exists():
            answers.append(json.loads(sidecar.read_text(encoding="utf-8")))
    if variations:
        sidecar = folder / "variations.sidecar.json"
        sidecar.write_text(json.dumps(variations), encoding="utf-8")
        harness.commit_variations(sidecar, folder)
        sidecar.unlink()
    if sdist is not None:
        for spec in sorted(sdist.glob("examples/*/specs/*.highbar.yaml")):
            if "openai" in spec.parts[-3]:
                continue
            agent = spec.parents[1] / "agent.py"
            text = spec.read_text(encoding="utf-8").replace('"python agent.py"', f'"python {agent}"')
            (folder / spec.name).write_text(text, encoding="utf-8")
        for spec in sorted(sdist.glob("tests/integration/fixtures/*.highbar.yaml")):
            text = spec.read_text(encoding="utf-8").replace("python tests/", f"python {sdist}/tests/")
            (folder / "integration.highbar.yaml").write_text(text, encoding="utf-8")
    return env, attach, answers


@contextmanager
def services(
    folder: Path, attach: list[tuple[int, Path]], answers: list[list[str]]
) -> Iterator[dict[str, str]]:
    """Fresh attach agents and a fake LLM server for one tool's run; the environment naming the LLM."""
    with ExitStack() as stack:
        env: dict[str, str] = {}
        for port, traces in attach:
            traces.write_text("")
            agent = subprocess.Popen(
                [sys.executable, str(harness.AGENT), "--port", str(port), "--traces", str(traces)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            stack.callback(lambda a=agent: (a.terminate(), a.wait(10)))
            harness.wait_port(port)
        if answers:
            from tests.llm.fake_openai import FakeOpenAI, Reply

            llm = FakeOpenAI().start()
            stack.callback(llm.stop)
            for answer in (a for group in answers for a in group):
                llm.queue(Reply(content=answer))
            env.update(
                {
                    "HIGHBAR_LLM_API_KEY": harness.LLM_KEY,
                    "HIGHBAR_LLM_BASE_URL": llm.url,
                    "HIGHBAR_LLM_MODEL": harness.LLM_MODEL,
                }
            )
        yield env


def parse_highbar(out: str) -> Verdicts:
    """highbar's verdict per (file, test), its late re-judging applied: each file's part of the output."""
    verdicts: Verdicts = {}
    parts = re.split(r"^  Running (.+\.highbar\.yaml)$", out, flags=re.M)
    for file, text in zip(parts[1::2], parts[2::2]):
        verdicts.update({(Path(file).name, name): v for name, v in harness.parse_highbar(text).items()})
    return verdicts


def parse_ours(junit: Path, out: str) -> Verdicts:
    """pytest's verdict per (file, test): JUnit, then the summary's late failures."""
    verdicts: Verdicts = {}
    if junit.exists():
        for case in ET.parse(junit).iter("testcase"):
            file = case.get("classname", "").split(".highbar.yaml")[0] + ".highbar.yaml"
            kinds = {child.tag for child in case}
            verdicts[(file, case.get("name", ""))] = next(
                (
                    word
                    for tag, word in (("error", "error"), ("failure", "failed"), ("skipped", "skipped"))
                    if tag in kinds
                ),
                "passed",
            )
    late = re.compile(r"^(FAILED|ERROR) by a late call: (\S+?\.highbar\.yaml)::(?:[^:]+::)?(.+?) - ")
    for line in out.splitlines():
        if found := late.match(line):
            verdicts[(found.group(2), found.group(3))] = found.group(1).lower()
    return verdicts


def timed(
    command: list[str], cwd: Path, env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    return time.perf_counter() - start, done


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--highbar", type=Path, default=Path(shutil.which("highbar") or "/tmp/hb/bin/highbar")
    )
    parser.add_argument(
        "--sdist", type=Path, help="highbar 0.1.0rc3's unpacked sdist (its examples and fixture)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each tool, alternating (the best is shown)"
    )
    parser.add_argument("--pytest-args", default="", help="more pytest options, e.g. '-n 2'")
    parser.add_argument("--verbose", action="store_true", help="print both outputs")
    parser.add_argument(
        "--tools", default="highbar,pytest", help="run only these (e.g. 'pytest' while profiling)"
    )
    parser.add_argument("--keep", type=Path, help="also copy the set and its environment (env.json) here")
    args = parser.parse_args()
    if not args.highbar.exists():
        parser.error(f"no highbar at {args.highbar} (--highbar)")
    with tempfile.TemporaryDirectory(prefix="bench-highbar-set-") as tmp:
        folder = Path(tmp) / "set"
        folder.mkdir()
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        fidelity, attach, answers = build(folder, args.sdist)
        files = sorted(p.name for p in folder.glob("*.highbar.yaml"))
        env = {
            **os.environ,
            **fidelity,
            "COLUMNS": "400",
            "NO_COLOR": "1",
            "PATH": f"{args.highbar.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }  # their agents' `python`
        for name in ("PYTEST_ADDOPTS", "HIGHBAR_TRACES_URL", "PYTHONDONTWRITEBYTECODE"):
            env.pop(name, None)
        if args.keep is not None:
            shutil.copytree(folder, args.keep, dirs_exist_ok=True)
            (args.keep / "env.json").write_text(json.dumps(fidelity, indent=1), encoding="utf-8")
        junit = folder / "junit.xml"
        ours_cmd = [
            sys.executable,
            "-m",
            "pytest",
            ".",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
            *args.pytest_args.split(),
        ]
        walls: dict[str, list[float]] = {"highbar": [], "pytest": []}
        theirs: Verdicts = {}
        ours: Verdicts = {}
        codes: dict[str, int] = {"highbar": -1, "pytest": -1}
        for _ in range(args.repeat):
            for tool in args.tools.split(","):
                shutil.rmtree(folder / ".semantictest", ignore_errors=True)
                with services(folder, attach, answers) as extra:
                    command = [str(args.highbar), "run", "."] if tool == "highbar" else ours_cmd
                    wall, done = timed(command, folder, {**env, **extra})
                walls[tool].append(wall)
                codes[tool] = done.returncode
                if args.verbose:
                    print(f"--- {tool} ---\n{done.stdout}{done.stderr}")
                if tool == "highbar":
                    theirs = parse_highbar(done.stdout)
                else:
                    ours = parse_ours(junit, done.stdout)
        both = all(walls.values())
        differ = sorted(key for key in set(theirs) | set(ours) if both and theirs.get(key) != ours.get(key))
        for file, name in differ:
            print(
                f"  != {file}::{name}: highbar {theirs.get((file, name), '-')}, ours {ours.get((file, name), '-')}"
            )
        best = {tool: min(w) if w else float("nan") for tool, w in walls.items()}
        print(
            f"{len(files)} files, {len(theirs)} tests (highbar's count), {len(ours)} (ours); "
            f"same verdict: {len(theirs) - len([k for k in differ if k in theirs])} of {len(theirs)}; "
            f"exit codes highbar {codes['highbar']}, pytest {codes['pytest']}"
        )
        print(
            f"wall, best of {args.repeat}: highbar {best['highbar']:.1f} s, pytest {best['pytest']:.1f} s, "
            f"{best['highbar'] / max(best['pytest'], 1e-9):.2f}x faster (target 7x)"
        )
        return 1 if differ or (both and codes["highbar"] != codes["pytest"]) else 0


if __name__ == "__main__":
    sys.exit(main())
