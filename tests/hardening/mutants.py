"""Mutated spec files of all four formats, and the check every mutant must pass.

Seeds are the valid examples (``examples/``), the published compliance corpus and a few small
valid files written here. A mutant is a seed with one to three damages: a key dropped or renamed,
a value of the wrong type, a huge or infinite number, nesting 500 deep, odd unicode, a duplicate
key, a bad regex, or damage to the text (BOM, CRLF, a line dropped, doubled or cut). ``check``
loads a mutant the way collection does (format detection, then the format's loader, then the
markers pytest would register) and returns what a user would read; it raises ``MutantCrash`` for
anything else than a clean message (an exception, a traceback or a plugin path in the text, a hang).

Used by ``tests/test_loader_property.py`` (a small fixed campaign) and ``bench/fuzz_specs.py`` (long).
"""

from __future__ import annotations

import json
import random
import re
import signal
import time
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.detect import FORMATS, CollectContext
from pytest_semantictest.options import OPTIONS
from tests.shared import COMPLIANCE_CORPUS

ROOT = Path(__file__).resolve().parents[2]
ENV = {
    "EXAMPLE_AGENT_URL": "http://127.0.0.1:9",
    "FIDELITY_PYTHON": "python",
    "FIDELITY_AGENT": "agent.py",
    "FIDELITY_PORT": "9",
    "FIDELITY_TRACES": "traces.jsonl",
    "FIDELITY_HOOK": "hook.py",
    "API_KEY": "k" * 20,
    "VALID_JWT_TOKEN": "v" * 20,
    "EXPIRED_JWT_TOKEN": "e" * 20,
    "TOKEN_WITH_READ_SCOPE": "r" * 20,
}
TIME_LIMIT_S = 5.0
PLUGIN_PATH = re.compile(
    r"pytest_semantictest[/\\][\w/\\]+\.py|site-packages|Traceback \(most recent|File \""
)
"""What only a crash prints: a module of the plugin, a traceback (``$schema`` paths in a spec are fine)."""

NASTY: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2.5,
    10**400,
    -(10**400),
    "__INF__",
    "__-INF__",
    "__NAN__",
    1e308,
    "",
    " ",
    "x",
    [],
    {},
    [1, "a"],
    {"a": 1},
    "${",
    "${nope.x}",
    "{{",
    "{{message}}",
    "\u202e\u0000\ud7ff\U0001f600",
    "é" * 3,
    "[[:alpha:]]",
    "(",
    "a{99999999999}",
    "/(/",
    "/x/q",
    "(?P<n>",
    "\\",
    "*",
    "10**400",
    "1e400",
    ".inf",
    "-1",
    "30s",
    "2m",
    "0ms",
    "9" * 50 + "s",
    "regex:(",
    "matches",
    "..",
    "$.a[",
    "a" * 300,
]
KILLERS: list[Any] = [
    10**400,
    "__INF__",
    "__NAN__",
    "__DEEP__",
    "",
    [],
    {},
    {"a": 1},
    "[[:alpha:]]",
    "_x",
    -1,
]
"""Values that found crashes before (overflow, recursion, a non-object, a bad marker name): half the picks."""
REGEX_KEYS = {"matches", "not_matches", "pattern", "regex", "notMatches", "awaiting_input_pattern"}


# pytest.mark without a config: name checks, no unknown-mark warning
_MARKS = pytest.MarkGenerator(_ispytest=True)


class MutantCrash(AssertionError):
    """A mutant gave something other than a clean message: the text says what and how to reproduce."""


class _Hang(BaseException):
    """Raised by the alarm inside a loader that runs too long (BaseException: no loader swallows it)."""


@dataclass
class Seed:
    """A valid file: ``name`` (its extension picks the format), ``text``, companion files beside it."""

    name: str
    text: str
    companions: dict[str, str] = field(default_factory=dict)


SMALL_YAO = (
    "\n".join(
        json.dumps(case)
        for case in [
            {
                "id": "t1",
                "name": "turns",
                "turns": [
                    {
                        "input": "Hi",
                        "assertions": [
                            {"type": "contains", "value": "Hi"},
                            {"type": "regex", "pattern": "H."},
                        ],
                    }
                ],
            },
            {
                "id": "t2",
                "input": "x",
                "assertions": [
                    {"type": "tool_called", "name": "get", "arguments": {"a": 1}},
                    {"type": "json_path", "path": "$.a", "value": 1},
                    {"type": "type", "value": "string"},
                ],
                "timeout": "30s",
                "tags": ["a"],
            },
            {
                "id": "t3",
                "simulator": {"use": "simulator", "options": {"metadata": {"persona": "p", "goal": "g"}}},
                "checkpoints": [{"id": "c1", "assertion": {"type": "contains", "value": "ok"}}],
                "max_turns": 3,
                "timeout": "1m",
            },
        ]
    )
    + "\n"
)
SMALL_SEMANTICTEST = json.dumps(
    {
        "name": "n",
        "context": {"BASE": "http://127.0.0.1:9"},
        "tests": [
            {
                "id": "a",
                "timeout": 5000,
                "runs": 2,
                "minPass": 0.5,
                "pipeline": [
                    {
                        "block": "HttpRequest",
                        "input": {
                            "url": "${BASE}/x",
                            "method": "POST",
                            "body": {"q": "${BASE}"},
                            "timeout": 1000,
                        },
                        "output": "r",
                    },
                    {
                        "block": "StreamParser",
                        "input": "${r.body}",
                        "config": {"format": "sse-openai"},
                        "output": "s",
                    },
                    {
                        "block": "ValidateTools",
                        "input": {"from": "s.toolCalls", "as": "toolCalls"},
                        "config": {"expected": ["get"], "order": True},
                        "output": "t",
                    },
                    {
                        "block": "ValidateContent",
                        "input": {"from": "s.text", "as": "text"},
                        "config": {"matches": "^h", "matchFlags": "i", "maxLength": 10},
                        "output": "v",
                    },
                ],
                "assertions": {
                    "r.status": 200,
                    "s.text": {"matches": "a+", "minLength": 1},
                    "t.passed": True,
                },
            }
        ],
    },
    indent=2,
)


def seeds() -> list[Seed]:
    """Every seed, each checked to be valid by ``test_the_seeds_are_valid``."""
    found = [
        Seed(p.name, p.read_text("utf-8"))
        for p in sorted((ROOT / "examples" / "semantictest").glob("*.json"))
    ]
    found.append(Seed("small.json", SMALL_SEMANTICTEST))
    found += [
        Seed(p.name, p.read_text("utf-8")) for p in sorted((ROOT / "examples" / "highbar").glob("*.yaml"))
    ]
    found += [
        Seed(p.name, p.read_text("utf-8"))
        for p in sorted((ROOT / "tests" / "highbar" / "fidelity").glob("p*.highbar.yaml"))[:4]
    ]
    agent = (ROOT / "examples" / "yao" / "memory_test.agent.yaml").read_text("utf-8")
    found.append(
        Seed(
            "memory_test.jsonl",
            (ROOT / "examples" / "yao" / "memory_test.jsonl").read_text("utf-8"),
            {"memory_test.agent.yaml": agent},
        )
    )
    found.append(Seed("small.jsonl", SMALL_YAO, {"small.agent.yaml": agent}))
    found += [
        Seed(p.name, p.read_text("utf-8")) for p in sorted((ROOT / "examples" / "compliance").rglob("*.md"))
    ]
    found += [
        Seed(p.name, p.read_text("utf-8"))
        for p in sorted(COMPLIANCE_CORPUS.rglob("*.md"))
        if p.name != "README.md"
    ]  # the published corpus, where it is
    return found


def kind(name: str) -> str:
    return (
        "md"
        if name.endswith(".md")
        else "jsonl"
        if name.endswith(".jsonl")
        else "yaml"
        if name.endswith((".yaml", ".yml"))
        else "json"
    )


# ---- mutations of a data tree ---------------------------------------------------------------


def _containers(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, (dict, list)):
        yield path
        for key, child in node.items() if isinstance(node, dict) else enumerate(node):
            yield from _containers(child, path + (key,))


def _at(root: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        root = root[part]
    return root


def _nasty(rng: random.Random) -> Any:
    return rng.choice(KILLERS if rng.random() < 0.5 else NASTY)


def _typo(key: str, rng: random.Random) -> str:
    if not key:
        return "x"
    i = rng.randrange(len(key))
    return rng.choice(
        [
            key[:i] + key[i + 1 :],
            key[:i] + key[i] * 2 + key[i + 1 :],
            key.upper(),
            key + "s",
            key[:i] + "\u0301" + key[i:],
            "\ufeff" + key,
        ]
    )


def mutate_tree(data: Any, rng: random.Random) -> str:
    """Damage ``data`` in place once; returns what was done."""
    paths = list(_containers(data))
    if not paths:
        return "nothing to mutate"
    path = rng.choice(paths)
    node = _at(data, path)
    how = rng.choice(["drop", "rename", "retype", "retype", "retype", "deep", "deep", "dup", "regex", "add"])
    if isinstance(node, dict) and node:
        key = rng.choice(list(node))
        if how == "drop":
            del node[key]
        elif how == "rename":
            node[_typo(str(key), rng)] = node.pop(key)
        elif how == "deep":
            node[key] = "__DEEP__"
        elif how == "dup":
            node["__DUP__" + str(key)] = _nasty(rng)
        elif how == "regex" or (how == "retype" and key in REGEX_KEYS):
            node[key] = rng.choice(["[[:alpha:]]", "(", "a{99999999999}", "(?<", "[z-a]", "/(/i", "\\"])
        elif how == "add":
            node[rng.choice([_typo(str(key), rng), "x-note", "", "runs", "timeout", "tags"])] = _nasty(rng)
        else:
            node[key] = _nasty(rng)
        return f"{how} {'.'.join(map(str, path + (key,)))}"
    if isinstance(node, list) and node:
        i = rng.randrange(len(node))
        if how == "drop":
            del node[i]
        elif how == "deep":
            node[i] = "__DEEP__"
        elif how in ("dup", "add"):
            node.insert(i, node[i] if how == "dup" else _nasty(rng))
        else:
            node[i] = _nasty(rng)
        return f"{how} {'.'.join(map(str, path + (i,)))}"
    if not path:  # an empty document: give it something
        node.update(x=_nasty(rng)) if isinstance(node, dict) else node.append(_nasty(rng))
        return "add to the empty document"
    _at(data, path[:-1])[path[-1]] = _nasty(rng)
    return f"retype {'.'.join(map(str, path))}"


def _deep(rng: random.Random) -> str:
    depth = rng.choice([200, 500, 2000])
    return ("[" * depth + "1" + "]" * depth) if rng.random() < 0.5 else ('{"a": ' * depth + "1" + "}" * depth)


def dump(data: Any, fmt: str, rng: random.Random) -> str:
    """``data`` as JSON or YAML text, the sentinels turned into what JSON/YAML cannot express directly."""
    if fmt == "yaml":
        text = yaml.safe_dump(data, allow_unicode=rng.random() < 0.5, sort_keys=False, width=10**6)
        inf, nan, dup = ".inf", ".nan", re.compile(r"(['\"]?)__DUP__")
        quoted = re.compile(r"'(__[-A-Z]+__)'")
        text = quoted.sub(r"\1", text)
    else:
        text = json.dumps(data, indent=rng.choice([None, 1, 2]), ensure_ascii=rng.random() < 0.5)
        inf, nan, dup = "1e999", "NaN", re.compile(r'(")__DUP__')
        text = re.sub(r'"(__[-A-Z]+__)"', r"\1", text)
    text = text.replace("__-INF__", "-" + inf).replace("__INF__", inf).replace("__NAN__", nan)
    text = text.replace("__DEEP__", _deep(rng))
    return dup.sub(r"\1", text)


def damage_text(text: str, rng: random.Random) -> str:
    """Byte-level damage: BOM, CRLF, a line dropped, doubled or cut, a stray character."""
    lines = text.splitlines(keepends=True) or [""]
    how = rng.choice(["bom", "crlf", "drop", "double", "cut", "char", "tabs"])
    i = rng.randrange(len(lines))
    if how == "bom":
        return "\ufeff" + text
    if how == "crlf":
        return text.replace("\n", "\r\n")
    if how == "drop":
        return "".join(lines[:i] + lines[i + 1 :])
    if how == "double":
        return "".join(lines[: i + 1] + lines[i:])
    if how == "cut":
        return text[: rng.randrange(len(text) + 1)]
    if how == "tabs":
        return text.replace("  ", "\t", 1)
    j = rng.randrange(len(text) + 1)
    return text[:j] + rng.choice(list(",:{}[]\"'\\#-`|>&*!%@\x00\u2028") + ["\ud800"]) + text[j:]


_FENCE = re.compile(r"(```(json|yaml)\n)(.*?)(\n```)", re.S)
_FRONT = re.compile(r"\A(---\n)(.*?)(\n---\n)", re.S)


def _mutate_block(text: str, fmt: str, rng: random.Random) -> tuple[str, str] | None:
    try:
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError, RecursionError):
        return None
    if not isinstance(data, (dict, list)):
        return None
    what = mutate_tree(data, rng)
    return dump(data, fmt, rng).rstrip("\n"), what


def mutate_text(seed: Seed, rng: random.Random) -> tuple[str, str]:
    """One to three damages to ``seed.text``; returns (mutant text, what was done)."""
    text, done = seed.text, []
    fmt = kind(seed.name)
    for _ in range(rng.choice([1, 1, 2, 3])):
        if rng.random() < 0.25:
            text, what = damage_text(text, rng), "text"
        elif fmt in ("json", "yaml"):
            try:
                data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
            except (ValueError, yaml.YAMLError, RecursionError):
                data = None
            if not isinstance(data, (dict, list)):
                continue
            what = mutate_tree(data, rng)
            text = dump(data, fmt, rng)
        elif fmt == "jsonl":
            lines = text.splitlines()
            i = rng.randrange(len(lines))
            block = _mutate_block(lines[i], "json", rng)
            if block is None:
                continue
            lines[i] = block[0].replace("\n", " ")
            text, what = "\n".join(lines) + "\n", f"line {i + 1}: {block[1]}"
        else:
            blocks = [(m.start(3), m.end(3), m.group(2)) for m in _FENCE.finditer(text)]
            front = _FRONT.match(text)
            if front:
                blocks.append((front.start(2), front.end(2), "yaml"))
            if not blocks:
                continue
            start, end, block_fmt = rng.choice(blocks)
            block = _mutate_block(text[start:end], block_fmt, rng)
            if block is None:
                continue
            text, what = text[:start] + block[0] + text[end:], f"{block_fmt} at {start}: {block[1]}"
        done.append(what)
        if "deep " in what:  # re-reading 2,000 levels of YAML to damage it again would only cost time
            break
    return text, "; ".join(done) or "unchanged"


# ---- loading one file as collection does ----------------------------------------------------


def collect_context(folder: Path) -> CollectContext:
    defaults = {name: default for name, _, default, _ in OPTIONS}
    return CollectContext(folder, folder, dict(ENV), lambda name: defaults.get(name), ())


def check(path: Path, ctx: CollectContext, time_limit_s: float = TIME_LIMIT_S) -> tuple[str, float]:
    """(what the user reads, CPU seconds of this thread) for loading ``path``; raises MutantCrash when it
    is not clean. The cost is the loading thread's CPU time, which a busy machine does not inflate as it
    does the wall time (the alarm, a hang's bound, is wall time: the caller scales it for load)."""

    def alarm(signum: int, frame: Any) -> None:
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit_s)
    start = time.thread_time()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shown = _load(path, ctx)
        for warning in caught:  # a warning is the spec's: located in the spec file, never in our code
            if issubclass(warning.category, ResourceWarning):
                continue  # (given when the collector frees an object: any earlier test's, not this load's)
            text = f"{warning.filename}:{warning.lineno}: {warning.category.__name__}: {warning.message}"
            if Path(warning.filename).name != path.name:
                raise MutantCrash(f"{path.name}: a warning located outside the spec: {text}")
            shown += "\n" + text
    except _Hang:
        raise MutantCrash(f"{path.name}: no answer within {time_limit_s:g} s") from None
    except MutantCrash:
        raise
    except SpecError as err:
        shown = str(err)
        if not shown.strip() or path.name not in shown.splitlines()[0]:
            raise MutantCrash(f"{path.name}: a SpecError that does not name the file: {shown!r}") from None
    except Exception:  # noqa: BLE001
        raise MutantCrash(f"{path.name}: {traceback.format_exc(limit=-4)}") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    took = time.thread_time() - start
    if PLUGIN_PATH.search(shown):
        raise MutantCrash(f"{path.name}: the message shows the plugin's code: {shown[:2000]}")
    try:
        shown.encode("utf-8")
    except UnicodeEncodeError:
        raise MutantCrash(
            f"{path.name}: the message cannot be printed (a lone surrogate): {shown[:300]!r}"
        ) from None
    return shown, took


def _load(path: Path, ctx: CollectContext) -> str:
    for name, detect, module in FORMATS:  # noqa: B007
        if not detect(path, ctx):
            continue
        suite = import_module(f"pytest_semantictest.formats.{module}").make_loader(ctx)(path)
        out = []
        for case in suite.cases:
            for marker in case.markers:
                getattr(_MARKS, marker)  # what SpecItem.build does with a tag: must not raise
            if case.error:
                out.append(case.error)
        return "\n".join(out)
    return ""
