#!/usr/bin/env python3
"""Fuzzing the files a run reads and writes besides spec files: baselines, merge inputs, results
paths and replay-cache entries (``bench/fuzz_specs.py`` does the spec files).

Each mutant is one of: a valid results file or cache entry with bytes flipped, cut, or a field given
another type (a string, a list, an object, ``NaN``, ``Infinity``, a huge number, nesting 100,000
deep, escape sequences in an id); or a special file (a FIFO, a link to ``/dev/zero``, a folder
holding one, an empty or non-UTF-8 file). Each is read, in this process, the way the run reads it:
as a baseline (``report/results_file.load``), as ``semantictest merge`` input (with its outputs), as
a replay-cache entry (``ReplayCache.get``); and each generated results path (a folder, a path under a
file, ``/proc``, ``/sys``, a FIFO, the baseline itself) is checked as ``--semantictest-results``.
Every answer must be accepted, or refused with one line naming the file; anything else is a
traceback, and a read that does not end within ``--time-limit`` is a hang. ``--runs`` end-to-end
pytest runs with a mutant baseline check exit 4 (or 0) and no traceback.

    python bench/fuzz_inputs.py --mutants 2000 --runs 40 --seed 1
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_semantictest.files import write_problem  # noqa: E402
from pytest_semantictest.llm.cache import ReplayCache, cache_key, sealed  # noqa: E402
from pytest_semantictest.llm.errors import LLMError  # noqa: E402
from pytest_semantictest.merge import merge  # noqa: E402
from pytest_semantictest.report.results_file import ResultsFileError, load  # noqa: E402

RECORD = {
    "id": "s.json::t",
    "name": "t",
    "file": "s.json",
    "format": "semantictest",
    "outcome": "passed",
    "duration_s": 0.1,
    "results_version": 1,
    "latency_ms": 3.5,
    "runs": ["passed", "failed", "passed"],
    "run_durations_ms": [1.0, 2.0, 3.0],
    "run_scores": [0.9, 0.8, 0.7],
    "score": 0.9,
    "llm_usage": {"calls": 1, "cache_hits": 0, "tokens": 10},
}
VALUES = [
    "passed", "", "\x1b[2J\x07", [], {}, [1, "x"], {"a": []}, None, True, -1, 10**30, 1.5,
    "NaN", "Infinity", "-Infinity", "1e999", "9" * 5000,
]  # fmt: skip
SUITE = {
    "name": "s",
    "tests": [
        {
            "id": "t",
            "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "d"}],
            "assertions": {"d": 1},
        }
    ],
}


class Hang(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise Hang


def _value_text(value: object) -> str:
    if value in ("NaN", "Infinity", "-Infinity", "1e999"):
        return str(value)  # bare: JSON's forbidden constants, or a number no float holds
    return json.dumps(value)


def mutate(rng: random.Random, base: dict[str, object]) -> tuple[str, str]:
    """One mutant text of ``base`` (a JSON object per line) and what was done."""
    text = json.dumps(base)
    kind = rng.choice(["field", "field", "drop", "bytes", "cut", "deep", "lines", "id"])
    if kind == "field":
        key = rng.choice(sorted(base))
        value = rng.choice(VALUES)
        return text.replace(
            json.dumps(key) + ": " + json.dumps(base[key]), f"{json.dumps(key)}: {_value_text(value)}", 1
        ), f"{key}={value!r:.30}"
    if kind == "drop":
        key = rng.choice(sorted(base))
        return json.dumps({k: v for k, v in base.items() if k != key}), f"without {key}"
    if kind == "bytes":
        chars = list(text)
        for _ in range(rng.randint(1, 5)):
            chars[rng.randrange(len(chars))] = rng.choice('{}[]",:\\0a\x00\x1b\udcff')
        return "".join(chars), "bytes changed"
    if kind == "cut":
        return text[: rng.randrange(len(text))], "cut short"
    if kind == "deep":
        depth = rng.choice([40, 70, 1000, 100_000])
        return text[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}", f"nested {depth} deep"
    if kind == "lines":
        return "\n".join([text] * rng.randint(2, 4)) + "\n\n", "repeated lines"
    return text.replace(
        '"s.json::t"', json.dumps("s.json::\x1b]0;x\x07" + rng.choice(["", "é", "\n"]))
    ), "id with escapes"


def special(rng: random.Random, folder: Path, name: str) -> tuple[Path, str]:
    """A special file (or a folder holding one) at ``folder/name``."""
    path = folder / name
    kind = rng.choice(["fifo", "zero", "folder-zero", "empty", "latin1", "dir-empty", "null"])
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "null":
        path.symlink_to("/dev/null")
    elif kind == "folder-zero":
        path.mkdir()
        (path / "a.jsonl").write_text(json.dumps(RECORD) + "\n")
        (path / "z.jsonl").symlink_to("/dev/zero")
    elif kind == "dir-empty":
        path.mkdir()
    elif kind == "empty":
        path.write_text("")
    else:
        path.write_bytes("café".encode("latin-1"))
    return path, kind


def _entry(cache: ReplayCache) -> tuple[str, dict[str, object]]:
    messages = [{"role": "user", "content": "hello"}]
    key = cache_key(
        role="judge",
        model="m",
        template="t",
        messages=messages,
        temperature=0.0,
        seed=1,
        repeat=0,
        schema=None,
    )
    entry = {"key": key, "role": "judge", "model": "m", "messages": messages, "response": {"content": "hi"}}
    return key, sealed(entry)


def one_line(message: str, path: Path) -> bool:
    return (
        "\n" not in message.strip()
        and "Traceback" not in message
        and (path.name in message or str(path) in message)
    )


def run_checks(path: Path, work: Path, rng: random.Random) -> list[tuple[str, str]]:
    """Each reader on ``path``: (reader, result) with result ``ok``, ``refused`` or ``BAD: ...``."""
    found: list[tuple[str, str]] = []

    def attempt(name: str, call: Callable[[], str]) -> None:
        try:
            found.append((name, call()))
        except Hang:
            raise
        except Exception as exc:  # noqa: BLE001  anything not a clean refusal is a finding
            found.append((name, f"BAD: {type(exc).__name__}: {str(exc)[:200]}"))

    def baseline() -> str:
        try:
            load(path, "baseline")
        except ResultsFileError as exc:
            return "refused" if one_line(str(exc), path) else f"BAD: not one line: {str(exc)[:200]}"
        return "ok"

    def merged() -> str:
        outputs = [None, str(work / "out" / "m.jsonl"), str(work), str(path), str(work / "afile" / "x")]
        out = rng.choice(outputs)
        html = rng.choice([None, str(work / "m.html"), str(work)])
        stdout, stderr = io.StringIO(), io.StringIO()
        code = merge([str(path)], out, html, [], stdout, stderr)
        err = stderr.getvalue()
        if code == 4:
            return "refused" if err.count("\n") == 1 and "Traceback" not in err else f"BAD: {err[:200]}"
        return "ok" if code in (0, 1) and not err else f"BAD: exit {code} {err[:200]}"

    attempt("baseline", baseline)
    attempt("merge", merged)
    return found


def cache_check(text: str | None, special_path: Callable[[Path], None] | None, work: Path) -> str:
    cache = ReplayCache(work / "cache", "read")
    key, _ = _entry(cache)
    target = cache.path("judge", key)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() or target.is_symlink():
        target.unlink() if not target.is_dir() else os.rmdir(target)
    if special_path is not None:
        special_path(target)
    else:
        assert text is not None
        target.write_text(text, "utf-8", errors="surrogatepass")
    try:
        cache.get("judge", key, {"model": "m"})
    except LLMError as exc:
        return "refused" if one_line(str(exc), target) else f"BAD: not one line: {str(exc)[:200]}"
    except Hang:
        raise
    except Exception as exc:  # noqa: BLE001
        return f"BAD: {type(exc).__name__}: {str(exc)[:200]}"
    return "ok"


def results_paths(work: Path) -> list[tuple[str, Path]]:
    (work / "afile").write_text("")
    (work / "adir").mkdir(exist_ok=True)
    fifo = work / "rfifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    null = work / "rnull"
    if not null.is_symlink():
        null.symlink_to("/dev/null")
    return [
        ("a folder", work / "adir"),
        ("under a file", work / "afile" / "r.jsonl"),
        ("/proc", Path("/proc/r.jsonl")),
        ("/sys", Path("/sys/r.jsonl")),
        ("a FIFO", fifo),
        ("a link to /dev/null", null),
        ("a new folder", work / "new" / "deeper" / "r.jsonl"),
        ("an existing file", work / "afile"),
    ]


def end_to_end(runs: int, rng: random.Random, work: Path) -> Counter[str]:
    tally: Counter[str] = Counter()
    project = work / "e2e"
    project.mkdir()
    (project / "s.json").write_text(json.dumps(SUITE))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for i in range(runs):
        name = f"b{i}.jsonl"
        if rng.random() < 0.3:
            path, _ = special(rng, project, name)
        else:
            text, _ = mutate(rng, RECORD)
            (project / name).write_text(text + "\n", "utf-8", errors="surrogatepass")
        args = [sys.executable, "-m", "pytest", "s.json", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
        args.append(f"--semantictest-baseline={name}")
        if rng.random() < 0.3:
            args.append(f"--semantictest-results={rng.choice([name, 'adir', 'r.jsonl', '/proc/x.jsonl'])}")
            (project / "adir").mkdir(exist_ok=True)
        try:
            done = subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            tally["hang"] += 1
            continue
        text = done.stdout + done.stderr
        if "Traceback" in text or "INTERNALERROR" in text or done.returncode not in (0, 4):
            tally["traceback"] += 1
            print(f"E2E BAD exit {done.returncode}: {' '.join(args[-2:])}\n{text[-600:]}", flush=True)
        else:
            tally[f"exit {done.returncode}"] += 1
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=20, help="end-to-end pytest runs with a mutant baseline")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=5.0)
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, resource.RLIM_INFINITY))  # an unbounded read ends here
    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(args.seed)
    tally: Counter[str] = Counter()
    findings: list[str] = []
    slowest = 0.0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-inputs-") as tmp:
        root = Path(tmp)
        for i in range(args.mutants):
            work = root / f"m{i}"
            work.mkdir()
            (work / "afile").write_text("")
            is_special = rng.random() < 0.25
            if is_special:
                path, what = special(rng, work, "r.jsonl")
            else:
                text, what = mutate(rng, RECORD)
                path = work / "r.jsonl"
                path.write_text(text + "\n", "utf-8", errors="surrogatepass")
            entry_text, entry_what = mutate(rng, _entry(ReplayCache(work / "c", "read"))[1])
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, args.time_limit)
            try:
                results = run_checks(path, work, rng)
                if rng.random() < 0.25:
                    kinds = rng.choice(["fifo", "zero", "dir"])
                    maker = {
                        "fifo": lambda p: os.mkfifo(p),
                        "zero": lambda p: p.symlink_to("/dev/zero"),
                        "dir": lambda p: p.mkdir(),
                    }[kinds]
                    results.append((f"cache entry ({kinds})", cache_check(None, maker, work)))
                else:
                    results.append((f"cache entry ({entry_what})", cache_check(entry_text, None, work)))
            except Hang:
                tally["hang"] += 1
                findings.append(f"HANG {what}")
                print(f"HANG {what}", flush=True)
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            slowest = max(slowest, time.perf_counter() - t0)
            for reader, result in results:
                label = result if not result.startswith("BAD") else "traceback"
                tally[f"{reader.split(' (')[0]} {label}"] += 1
                if result.startswith("BAD"):
                    tally["traceback"] += 1
                    findings.append(f"{reader} on {what}: {result}")
                    print(f"BAD {reader} on {what}: {result}", flush=True)
        paths = results_paths(root)
        for name, target in paths:
            problem = write_problem(target)
            tally[f"results path {'refused' if problem else 'ok'}"] += 1
            print(f"results path {name}: {problem or 'writable'}")
        e2e = end_to_end(args.runs, rng, root)
    tally["hang"] += e2e.pop("hang", 0)
    tally["traceback"] += e2e.pop("traceback", 0)
    took = time.perf_counter() - started
    print(
        f"\n{args.mutants} mutants (seed {args.seed}) in {took:.1f} s, slowest read {slowest * 1000:.0f} ms"
    )
    for key in sorted(tally):
        print(f"  {key}: {tally[key]}")
    print(f"  end-to-end pytest runs: {dict(sorted(e2e.items()))}")
    print(f"tracebacks: {tally['traceback']}, hangs: {tally['hang']}")
    return 1 if tally["traceback"] or tally["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
