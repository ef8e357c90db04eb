"""Folder runs for ``fuzz_specs.py --folder-runs N``: every mutant (the spec fuzzer's mutations, and in
two mutants of five a damage to what detection reads: a suite's ``tests`` retyped, dropped, renamed or
cut at, a front matter in flow style, ``{}``, empty, a list, ``tags: null``, without ``transport`` or
its opening ``---``, a Yao first case without ``id``, a file cut short) sits next to a valid sibling of
its format in a folder of its own, and whole batches of such folders are collected by a real pytest
process (``--collect-only``) and checked by ``semantictest validate``, as a user's folder run would be.

Per mutant it counts:

- a **silent skip**: the file looks like a spec file (``looks_like_spec``: our detection, or an
  independent reading of the rule that parses what it can, docs/formats.md) but the folder run neither
  collected a test from it nor reported a collection error for it: a run that would be green;
- **validate disagreeing**: ``semantictest validate`` of the same folders does not list the file the way
  collection did (collected and ok, a test that will ERROR, a file that does not collect);
- per batch: a **traceback** (``Traceback``, ``INTERNALERROR`` or a module of the plugin in what a run
  printed outside its warnings), a **hang** (no end within ``--batch-timeout``) and **processes left**
  (any process whose command line names the batch's folder once the run ended);
- that the valid sibling was collected (else the batch is reported broken).
"""

from __future__ import annotations

import difflib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_semantictest.formats.collect_context import CollectContext  # noqa: E402
from pytest_semantictest.formats.detect import spec_format  # noqa: E402
from tests.hardening.mutants import ENV, PLUGIN_PATH, Seed, kind, mutate_text, seeds  # noqa: E402

FORMATS = ("json", "yaml", "jsonl", "md")
YAO_KEYS = {
    *("id", "name", "description", "mode", "input", "assertions", "assert", "expected", "options"),
    *("attachments", "turns", "simulator", "checkpoints", "max_turns", "timeout", "skip"),
    *("interactive", "before", "after", "user", "team", "metadata"),
}
FRONT_KEYS = {"name", "version", "transport", "dialect", "type", "tags", "timeout", "depends_on"}
FRONT_KEYS |= {"skip_reason", "description"}
SUITE_KEYS = {"name", "version", "description", "context", "input", "setup", "tests", "teardown"}
LABEL = re.compile(r"^\*\*(Request|Input|Strict|Assertions|Expected|Flow):\*\*", re.M)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)


@dataclass
class Tally:
    mutants: int = 0
    looks_like_spec: int = 0
    collected: int = 0
    errors: int = 0
    silent_skips: list[str] = field(default_factory=list)
    validate_disagrees: list[str] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    processes_left: list[str] = field(default_factory=list)
    broken_batches: list[str] = field(default_factory=list)


def _close(key: str, word: str) -> bool:
    key = key.lstrip("\ufeff").lower()
    return key == word or bool(difflib.get_close_matches(key, [word], n=1, cutoff=0.8))


def _json_rule(text: str) -> bool:
    """A parse-based reading of the SemanticTest rule (docs/semantictest-format.md)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        if re.search(r'"tests"\s*(:|$)', text):
            return True
        return _cut_suite(text)
    if not isinstance(data, dict):
        return False
    if "tests" in data:
        return True
    return "pipeline" in text and any(
        _close(str(k), "tests") and isinstance(v, list) and v and isinstance(v[0], dict)
        for k, v in data.items()
    )


def _cut_suite(text: str) -> bool:
    """A suite cut short before its ``tests`` key, read with json's own decoder: its top-level keys,
    one value at a time, until the text ends."""
    from json.decoder import scanstring

    decoder, own = json.JSONDecoder(), ("tests", "context", "setup", "teardown")
    text = text.lstrip("\ufeff")
    i, n, keys = len(text) - len(text.lstrip()), len(text), []

    def blank(at: int) -> int:
        while at < n and text[at] in " \t\r\n":
            at += 1
        return at

    if i >= n or text[i] != "{":
        return False
    i = blank(i + 1)
    while i < n:
        if text[i] != '"':
            return False
        try:
            key, i = scanstring(text, i + 1)
        except ValueError:  # the text ends inside this key
            cut = text[i + 1 :]
            return (
                len(cut) >= 2 and all(k in SUITE_KEYS for k in keys) and any(k.startswith(cut) for k in own)
            )
        keys.append(key)
        i = blank(i)
        if i < n and text[i] == ":":
            i = blank(i + 1)
            if i >= n:
                break
            try:
                _, i = decoder.raw_decode(text, i)
            except (ValueError, RecursionError):  # cut inside this value (or broken: then not cut)
                if text.rstrip().endswith("}"):
                    return False
                break
            i = blank(i)
        if i >= n:
            break
        if text[i] == "}":
            return False  # closed: not cut short
        if text[i] != ",":
            return False
        i = blank(i + 1)
    return all(k in SUITE_KEYS for k in keys) and any(k in own for k in keys)


def _md_rule(text: str) -> bool:
    """A parse-based reading of the compliance rule (docs/compliance.md)."""
    text = text.lstrip("\ufeff")
    body = FENCE.sub("", text)
    cases = bool(re.search(r"^##\s+Test Cases\s*$", body, re.M | re.I)) and bool(LABEL.search(body))
    if not text.startswith("---"):
        end = text.find("\n---")
        try:
            data = yaml.safe_load(text[:end]) if end != -1 else None
        except yaml.YAMLError:
            return False
        return isinstance(data, dict) and "transport" in data
    end = text.find("\n---", 3)
    try:
        data = yaml.safe_load(text[3 : end if end != -1 else len(text)])
    except (yaml.YAMLError, RecursionError):
        return cases
    if isinstance(data, dict):
        keys = [str(k) for k in data]
        if any(_close(k, "transport") for k in keys):
            return True
        own = [k for k in keys if k in FRONT_KEYS or k.startswith("x-")]
        return cases and (len(set(own)) >= 2 or len(own) == len(keys))
    return cases  # a list, null, a scalar: no key of another tool


def _jsonl_rule(text: str) -> bool:
    """A parse-based reading of the Yao rule's plainest case (docs/conversations.md)."""
    for line in text.splitlines():
        line = line.strip().lstrip("\ufeff")
        if not line or line.startswith("//"):
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            return '"id"' in line and any(f'"{k}"' in line for k in ("input", "turns", "checkpoints"))
        if not isinstance(data, dict):
            return False
        has_input = any(k in data for k in ("input", "turns", "checkpoints"))
        return has_input and ("id" in data or (len(data) > 1 and all(k in YAO_KEYS for k in data)))
    return False


def looks_like_spec(path: Path, ctx: CollectContext) -> bool:
    """Our detection, or the independent reading of the rule: either makes a skip silent."""
    if spec_format(path, lambda: ctx) is not None:
        return True
    text = path.read_text("utf-8", errors="replace")
    fmt = kind(path.name)
    if fmt == "yaml":
        return path.name.endswith(".highbar.yaml")
    if fmt == "json":
        return _json_rule(text)
    if fmt == "md":
        return _md_rule(text)
    return "test" in path.name.lower() and _jsonl_rule(text)


def _write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text, "utf-8", errors="surrogatepass")


def _sibling_name(seed: Seed) -> str:
    fmt = kind(seed.name)
    return {"json": "sibling.json", "yaml": "sibling.highbar.yaml", "jsonl": "sibling_test.jsonl"}.get(
        fmt, "sibling.md"
    )


def make_batch(work: Path, jobs: list[tuple[Seed, str, str]]) -> dict[str, tuple[Path, str]]:
    """One folder per mutant (``case-NNNN``) with the mutant, its seed's companions and a valid sibling;
    returns the mutant's path relative to ``work`` -> (path, what was done)."""
    out = {}
    for n, (seed, text, what) in enumerate(jobs):
        folder = work / f"case-{n:04d}"
        folder.mkdir()
        for name, companion in seed.companions.items():
            _write(folder, name, companion)
        sibling = _sibling_name(seed)
        _write(folder, sibling, seed.text)
        if kind(seed.name) == "jsonl":
            agent = next((c for name, c in seed.companions.items() if name.endswith(".agent.yaml")), None)
            if agent is not None:
                _write(folder, "sibling_test.agent.yaml", agent)
        _write(folder, seed.name, text)
        out[f"case-{n:04d}/{seed.name}"] = (folder / seed.name, what)
    return out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEMANTICTEST_"))}
    env.update(ENV)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(args: list[str], cwd: Path, timeout: float) -> tuple[str | None, float]:
    """(the output, or None on a hang, the process group then killed; seconds)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, time.perf_counter() - started
    return out.decode("utf-8", "replace"), time.perf_counter() - started


def _left(work: Path) -> list[str]:
    """Processes whose command line names ``work`` (none may outlive a run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if str(work) in cmd:
            found.append(f"{entry.name}: {cmd[:200]}")
    return found


def _crashed(output: str) -> str | None:
    shown = output.split("warnings summary", 1)[0]
    for marker in ("Traceback (most recent call last)", "INTERNALERROR"):
        if marker in shown:
            return marker
    found = PLUGIN_PATH.search(shown)
    return found.group() if found else None


def check_batch(work: Path, batch: dict[str, tuple[Path, str]], tally: Tally, timeout: float) -> None:
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-p", "no:randomly"]
    collected_out, took = _run([*base, "--collect-only", "-q", "."], work, timeout)
    validate_out, _ = _run([sys.executable, "-m", "pytest_semantictest.cli", "validate", "."], work, timeout)
    left = _left(work)
    if left:
        tally.processes_left += left
    for name, output in (("collect-only", collected_out), ("validate", validate_out)):
        if output is None:
            tally.hangs.append(f"{work.name} ({name}, {took:.0f} s)")
            return
        crash = _crashed(output)
        if crash:
            tally.tracebacks.append(f"{work.name} ({name}): {crash}")
    assert collected_out is not None and validate_out is not None
    items = {line.split("::", 1)[0] for line in collected_out.splitlines() if "::" in line}
    errors = set(re.findall(r"^_+ ERROR collecting (\S+) _+$", collected_out, re.M))
    will_error = set(
        re.findall(r"^(\S+?)::\S.*: ", collected_out.split("tests that will ERROR", 1)[-1], re.M)
    )
    ok_validate = set(re.findall(r"^ok  (\S+) \(", validate_out, re.M))
    bad_validate = set(re.findall(r"^✗ ([^:\s]+)", validate_out, re.M))
    for folder in sorted({name.split("/", 1)[0] for name in batch}):
        sibling = next((p for p in (work / folder).iterdir() if p.name.startswith("sibling")), None)
        if (
            sibling is not None
            and f"{folder}/{sibling.name}" not in items
            and not sibling.name.endswith(".agent.yaml")
        ):
            tally.broken_batches.append(f"{folder}/{sibling.name} was not collected")
    ctx = CollectContext(work, work, dict(ENV), lambda name: None, ())
    for name, (path, what) in batch.items():
        tally.mutants += 1
        spec = looks_like_spec(path, ctx)
        tally.looks_like_spec += spec
        in_items, in_errors = name in items, name in errors
        tally.collected += in_items
        tally.errors += in_errors
        if spec and not in_items and not in_errors:
            tally.silent_skips.append(f"{name} ({what})")
        if in_items or in_errors:  # validate must say the same of it
            says = "ok" if name in ok_validate else "bad" if name in bad_validate else "nothing"
            wants = "bad" if in_errors or name in will_error else "ok"
            if says != wants:
                tally.validate_disagrees.append(f"{name}: collection {wants}, validate {says} ({what})")


def damage_detection(seed: Seed, rng: random.Random) -> tuple[str, str] | None:
    """Damage to what detection reads (a suite's ``tests``, a front matter, a first case's ``id``,
    the file cut short), so that the rule is tested where it is drawn; None when the seed has none."""
    fmt, text = kind(seed.name), seed.text
    if fmt == "md":
        return _damage_front_matter(text, rng)
    if fmt == "jsonl":
        return _damage_first_case(text, rng)
    if fmt == "json":
        data = json.loads(text)
        how = rng.choice(["retype", "retype", "drop", "rename", "cut", "cut-at-key"])
        if how == "cut":
            return text[: rng.randrange(len(text))], "cut"
        if how == "cut-at-key":
            at = text.find('"tests"')
            return text[: at + rng.randrange(1, 10)], "cut at tests"
        if how == "retype":
            value = rng.choice(["-Infinity", "NaN", "null", "{}", "5", '"x"', "true", "1e999"])
            data["tests"] = "__VALUE__"
            return json.dumps(data).replace('"__VALUE__"', value), f"tests: {value}"
        if how == "drop":
            del data["tests"]
            return json.dumps(data), "drop tests"
        data[rng.choice(["test", "Tests", "tsets", "testss"])] = data.pop("tests")
        return json.dumps(data), "rename tests"
    return text[: rng.randrange(len(text))], "cut"


def _damage_front_matter(text: str, rng: random.Random) -> tuple[str, str] | None:
    front = re.match(r"\A---\n(.*?)\n---\n", text, re.S)
    if front is None:
        return None
    body = text[front.end() :]
    data = yaml.safe_load(front.group(1)) or {}
    how = rng.choice(["flow", "flow", "empty", "braces", "tags-null", "no-transport", "list", "unopened"])
    if how == "flow":
        new = yaml.safe_dump(data, default_flow_style=True, width=10**6).strip()
    elif how == "empty":
        new = ""
    elif how == "braces":
        new = "{}"
    elif how == "tags-null":
        new = "tags: null" if rng.random() < 0.5 else yaml.safe_dump({**data, "tags": None})
    elif how == "no-transport":
        new = yaml.safe_dump({k: v for k, v in data.items() if k != "transport"})
    elif how == "list":
        new = yaml.safe_dump([{k: v} for k, v in data.items()])
    else:
        return f"{yaml.safe_dump(data).strip()}\n---\n{body}", "front matter without its opening ---"
    return f"---\n{new.strip()}\n---\n{body}", f"front matter: {how}"


def _damage_first_case(text: str, rng: random.Random) -> tuple[str, str] | None:
    lines = text.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("{"))
    first = json.loads(lines[i])
    how = rng.choice(["no-id", "no-id", "no-id-only-input", "cut"])
    if how == "cut":
        lines[i] = lines[i][: rng.randrange(len(lines[i]))]
    else:
        first.pop("id", None)
        if how == "no-id-only-input":
            first = {k: v for k, v in first.items() if k in ("name", "input", "turns", "timeout")}
        lines[i] = json.dumps(first)
    return "\n".join(lines) + "\n", f"first case: {how}"


def mutants(per_format: int, seed: int) -> Iterator[tuple[str, Seed, str, str]]:
    """``per_format`` mutants of each format, drawn in turn from that format's seeds."""
    by_format: dict[str, list[Seed]] = {}
    for found in seeds():
        if kind(found.name) == "jsonl" and "test" not in found.name:  # Yao's name rule, as a user names it
            stem = found.name.removesuffix(".jsonl")
            companions = {n.replace(stem, f"{stem}_test", 1): t for n, t in found.companions.items()}
            found = Seed(f"{stem}_test.jsonl", found.text, companions)
        by_format.setdefault(kind(found.name), []).append(found)
    for fmt in FORMATS:
        pool = by_format.get(fmt, [])
        for i in range(per_format if pool else 0):
            chosen = pool[i % len(pool)]
            rng = random.Random(f"{seed}:folder:{fmt}:{i}")
            damaged = damage_detection(chosen, rng) if rng.random() < 0.4 else None
            text, what = damaged if damaged is not None else mutate_text(chosen, rng)
            yield fmt, chosen, text, what


def folder_runs(per_format: int, seed: int, batch_size: int, timeout: float, keep: Path) -> Tally:
    tally = Tally()
    import tempfile

    jobs = list(mutants(per_format, seed))
    for start in range(0, len(jobs), batch_size):
        work = Path(tempfile.mkdtemp(prefix="fuzz-folders-"))
        (work / "pytest.ini").write_text("[pytest]\n")
        try:
            chunk = jobs[start : start + batch_size]
            batch = make_batch(work, [(s, text, what) for _, s, text, what in chunk])
            before = len(tally.silent_skips) + len(tally.tracebacks) + len(tally.validate_disagrees)
            check_batch(work, batch, tally, timeout)
            if len(tally.silent_skips) + len(tally.tracebacks) + len(tally.validate_disagrees) > before:
                shutil.copytree(work, keep / work.name, dirs_exist_ok=True)  # reproducers
            print(
                f"batch {start // batch_size + 1}: {tally.mutants} mutants, {len(tally.silent_skips)} silent "
                f"skips, {len(tally.tracebacks)} tracebacks, {len(tally.hangs)} hangs",
                flush=True,
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return tally


def report(tally: Tally, per_format: int) -> int:
    for title, found in (
        ("SILENT SKIP", tally.silent_skips),
        ("VALIDATE DISAGREES", tally.validate_disagrees),
        ("TRACEBACK", tally.tracebacks),
        ("HANG", tally.hangs),
        ("PROCESS LEFT", tally.processes_left),
        ("BROKEN BATCH", tally.broken_batches),
    ):
        for line in found[:50]:
            print(f"{title} {line}")
    print(
        f"folder runs: {tally.mutants} mutants ({per_format} per format, each next to a valid sibling), "
        f"{tally.looks_like_spec} look like a spec file, {tally.collected} collected, "
        f"{tally.errors} collection errors; {len(tally.tracebacks)} tracebacks, {len(tally.hangs)} hangs, "
        f"{len(tally.silent_skips)} silent skips, {len(tally.processes_left)} processes left, "
        f"{len(tally.validate_disagrees)} validate disagreements"
    )
    bad = (
        tally.silent_skips,
        tally.tracebacks,
        tally.hangs,
        tally.processes_left,
        tally.validate_disagrees,
        tally.broken_batches,
    )
    return 1 if any(bad) else 0
