"""Property tests of the loaders: whatever the input, the only error is a clean message.

SemanticTest: arbitrary JSON values, arbitrary text (mostly broken JSON), and valid suites with
random mutations (random keys, values of random types in random places, random block names,
operators and operands, strings with ``${``). All four formats: mutants of the valid examples
(``tests/hardening/mutants.py``) load with no traceback, no plugin path in what is printed and in
bounded time, directly and through a real pytest run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_semantictest.checks.operators import OPERATORS
from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.jsonsource import load_json
from pytest_semantictest.formats.semantictest.loader import load_text
from tests.hardening.mutants import (
    ENV,
    PLUGIN_PATH,
    MutantCrash,
    Seed,
    collect_context,
    kind,
    mutate_text,
    seeds,
)
from tests.hardening.mutants import check as check_file
from tests.helpers import env_number, fuzz_examples, patience

FILE = Path("x.json")
# A mutated suite often loses a test's id: the loader's warning about it is expected, not news.
pytestmark = pytest.mark.filterwarnings("ignore:tests\\[\\d+\\] has no 'id'")
SETTINGS = settings(
    max_examples=fuzz_examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

BLOCKS = [
    "HttpRequest",
    "JsonParser",
    "StreamParser",
    "ValidateContent",
    "ValidateTools",
    "LLMJudge",
    "Loop",
    "MockData",
]
KEYS = [
    "tests",
    "id",
    "name",
    "pipeline",
    "assertions",
    "block",
    "input",
    "config",
    "output",
    "context",
    "setup",
    "teardown",
    "target",
    "maxIterations",
    "condition",
    "path",
    "operator",
    "value",
    "data",
    "criteria",
    "matches",
    "matchFlags",
    "from",
    "as",
    "runs",
    "minPass",
    "timeout",
    "skip",
    "markers",
    "x-note",
    "$schema",
    "url",
    "format",
    "expected",
    "order",
    "minLength",
    "body",
    "",
]
TEMPLATES = [
    "${",
    "${}",
    "${d}",
    "${d.a}",
    "${nope.x}",
    "${env.HOME}",
    "${d[0]}",
    "${d.a[",
    "x ${d} y",
    "${${d}}",
    "${ d }",
    "$${d}",
    "${_loopCount:first}",
    "${1}",
    "${[0]}",
    "${d..a}",
    "}${",
    "(",
    "[a-",
    "a{99999999999}",
]

names = st.sampled_from(KEYS) | st.text(max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([0, -1, 1, 2, 10**30, 10**400, -(10**400), 0.5, 1e-320, 1e308, -1e308])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(TEMPLATES)
    | st.sampled_from(BLOCKS + list(OPERATORS))
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=4),
    max_leaves=20,
)


def check(text: str) -> None:
    """Load ``text``; any exception other than a SpecError naming x.json fails the property."""
    try:
        load_text(text, FILE)
    except SpecError as err:
        message = str(err)
        assert err.problems
        for line in message.splitlines():
            assert line.startswith("x.json"), line
        message.encode("utf-8")  # printable: no lone surrogates from \ud800 escapes


# ---- (a) arbitrary JSON and arbitrary text ------------------------------------------------------


@SETTINGS
@given(json_values)
def test_any_json_value(value: Any) -> None:
    check(json.dumps(value))


@SETTINGS
@given(json_values)
def test_any_json_value_as_the_tests_array(value: Any) -> None:
    check(json.dumps({"tests": value if isinstance(value, list) else [value]}))


@SETTINGS
@given(st.text(alphabet=st.sampled_from('{}[]:,"\\ \n\tabc01-.eEtrufalsn${}\ud800\u00e9'), max_size=60))
def test_any_text(text: str) -> None:
    check(text)


@SETTINGS
@given(json_values)
def test_line_index_matches_the_data(value: Any) -> None:
    """Every value of a pretty-printed document has a line, and it is the line it starts on."""
    text = json.dumps({"v": value}, indent=1)
    source = load_json(text)
    all_lines = text.splitlines()
    for path, line in source.lines.items():
        node: Any = source.data
        for part in path:
            node = node[part]  # every indexed path exists in the data
        if path:
            assert 1 <= line <= len(all_lines)
            first = json.dumps(node, indent=1).splitlines()[0]
            assert first in all_lines[line - 1], (path, line, first)
    assert not source.duplicates


# ---- (b) mutated near-valid suites --------------------------------------------------------------


def base_suite() -> dict[str, Any]:
    return {
        "name": "n",
        "context": {"BASE": "http://localhost", "USER": {"id": 1}},
        "setup": [{"block": "MockData", "config": {"data": {"token": "t"}}, "output": "auth"}],
        "tests": [
            {
                "id": "first",
                "pipeline": [
                    {
                        "id": "first",
                        "block": "MockData",
                        "config": {"data": {"a": 1, "s": "hi ${USER.id}"}},
                        "output": "d",
                    },
                    {"block": "JsonParser", "input": "${d.s}", "output": "p"},
                    {
                        "block": "ValidateContent",
                        "input": {"from": "d.s", "as": "text"},
                        "config": {"contains": ["hi"], "matches": "h.", "minLength": 1},
                        "output": "v",
                    },
                    {
                        "block": "Loop",
                        "config": {
                            "target": "first",
                            "maxIterations": 3,
                            "condition": {"path": "v.passed", "operator": "isFalse"},
                        },
                    },
                    {
                        "block": "LLMJudge",
                        "input": {"text": "${d.s}"},
                        "config": {"criteria": {"a": 0.5, "b": 0.5}},
                        "output": "j",
                    },
                    {
                        "block": "HttpRequest",
                        "input": {"url": "${BASE}/x", "method": "GET"},
                        "output": {"status": "st"},
                    },
                ],
                "assertions": {
                    "d.a": {"gt": 0, "lte": 5},
                    "d.s": {"contains": "hi"},
                    "st": 200,
                    "p.error": None,
                    "j.score": {"gte": 0.5},
                    "auth.token": {"isDefined": True},
                },
            },
            {
                "id": "second",
                "runs": 3,
                "minPass": 0.5,
                "markers": ["smoke"],
                "pipeline": [{"block": "MockData", "config": {"data": [1, 2]}}],
                "assertions": {"MockData": {"minLength": 2}},
            },
        ],
        "teardown": [{"block": "MockData", "config": {"data": 1}, "output": "bye"}],
    }


def containers(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every dict and list in ``node``."""
    found: list[tuple[Any, ...]] = []
    if isinstance(node, (dict, list)):
        found.append(path)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            found.extend(containers(child, path + (key,)))
    return found


def at(root: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        root = root[part]
    return root


mutation_values = (
    json_values
    | st.sampled_from(BLOCKS).map(lambda b: {"block": b})
    | st.sampled_from(list(OPERATORS)).flatmap(lambda op: json_values.map(lambda v: {op: v}))
    | st.text(max_size=6).map(lambda t: {"block": t})
    | st.sampled_from(TEMPLATES).flatmap(lambda t: st.text(max_size=5).map(lambda s: s + t))
)


@st.composite
def mutated_suites(draw: st.DrawFn) -> dict[str, Any]:
    suite = base_suite()
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(containers(suite)))
        target = at(suite, path)
        action = draw(st.sampled_from(["set", "add", "delete", "rename"]))
        if isinstance(target, dict):
            keys = list(target)
            if action in ("set", "add") or not keys:
                key = draw(st.sampled_from(keys) if keys and action == "set" else names)
                target[key] = draw(mutation_values)
            elif action == "delete":
                del target[draw(st.sampled_from(keys))]
            else:
                old = draw(st.sampled_from(keys))
                target[draw(names)] = target.pop(old)
        else:
            if action == "set" and target:
                target[draw(st.integers(0, len(target) - 1))] = draw(mutation_values)
            elif action == "delete" and target:
                del target[draw(st.integers(0, len(target) - 1))]
            else:
                target.insert(draw(st.integers(0, len(target))), draw(mutation_values))
    return suite


def test_the_base_suite_is_valid() -> None:
    suite = load_text(json.dumps(base_suite()), FILE)
    assert [c.id for c in suite.cases] == ["first", "second"]


@SETTINGS
@given(mutated_suites())
def test_mutated_suites(suite: dict[str, Any]) -> None:
    check(json.dumps(suite, indent=2))


@SETTINGS
@given(mutated_suites(), st.data())
def test_mutated_suite_text(suite: dict[str, Any], data: st.DataObject) -> None:
    """Byte-level damage too: cut, duplicate or drop a character of the pretty-printed file."""
    text = json.dumps(suite, indent=2)
    i = data.draw(st.integers(0, len(text)))
    how = data.draw(st.sampled_from(["cut", "dup", "drop", "insert"]))
    if how == "cut":
        text = text[:i]
    elif how == "dup":
        text = text[:i] + text[i : i + 1] * 2 + text[i + 1 :]
    elif how == "drop":
        text = text[:i] + text[i + 1 :]
    else:
        text = (
            text[:i] + data.draw(st.sampled_from(list(',:{}[]"\\') + ["NaN", "1e999", "\ufeff"])) + text[i:]
        )
    check(text)


# ---- (c) mutants of every format's valid files, loaded as collection does -------------------
# tests/hardening/mutants.py makes them; SEMANTICTEST_FUZZ=<mutants per seed> runs a longer campaign
# here, bench/fuzz_specs.py a long one with reproducers.

FUZZ_PER_SEED = int(env_number("SEMANTICTEST_FUZZ", 12))
MUTANT_TIME_LIMIT_S = 2.0
"""CPU seconds a mutant may take to load (its loading thread's, so a busy machine does not fail it)."""
KINDS = ["json", "yaml", "jsonl", "md"]


def _write_seed(folder: Path, seed: Seed, text: str, stem: str = "") -> Path:
    """``seed`` with ``text`` under ``folder``, companions beside it; ``stem`` renames both."""
    base = seed.name.split(".", 1)[0]
    name = stem + seed.name[len(base) :] if stem else seed.name
    for companion, content in seed.companions.items():
        (folder / (stem + companion[len(base) :] if stem else companion)).write_text(content, "utf-8")
    path = folder / name
    path.write_text(text, "utf-8", errors="surrogatepass")
    return path


def test_the_seeds_are_valid(tmp_path: Path) -> None:
    found = {kind(seed.name) for seed in seeds()}
    assert found == set(KINDS)
    ctx = collect_context(tmp_path)
    for seed in seeds():
        shown, _ = check_file(_write_seed(tmp_path, seed, seed.text), ctx)
        assert shown.strip() == "", (seed.name, shown)


@pytest.mark.parametrize("fmt", KINDS)
def test_mutants_load_cleanly_and_quickly(tmp_path: Path, fmt: str) -> None:
    """No traceback, no plugin path, a message naming the file, at most MUTANT_TIME_LIMIT_S each."""
    ctx = collect_context(tmp_path)
    crashes, slow, count = [], [], 0
    for seed in (s for s in seeds() if kind(s.name) == fmt):
        for i in range(FUZZ_PER_SEED):
            rng = random.Random(f"{seed.name}:{i}")
            text, what = mutate_text(seed, rng)
            path = _write_seed(tmp_path, seed, text)
            count += 1
            try:
                _, took = check_file(path, ctx, time_limit_s=patience(4 * MUTANT_TIME_LIMIT_S))
            except MutantCrash as crash:
                crashes.append(f"{seed.name} mutant {i} ({what}):\n{crash}")
                continue
            if took > MUTANT_TIME_LIMIT_S:
                slow.append(f"{seed.name} mutant {i} ({what}): {took:.2f} s")
    assert count and not crashes and not slow, "\n\n".join(crashes + slow)


def test_mutants_through_pytest(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same through a real (in-process) pytest run: collection and the setup phase of every test."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    pytester.makefile(".cfg", setup="[tool:pytest]\n")
    for n, seed in enumerate(seeds()):
        for i in range(2):
            text, _ = mutate_text(seed, random.Random(f"pytest:{seed.name}:{i}"))
            _write_seed(pytester.path, seed, text, stem=f"m{n}_{i}")
    result = pytester.runpytest("--setup-only", "--continue-on-collection-errors", "-p", "no:cacheprovider")
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out, out[-5000:]
    assert not PLUGIN_PATH.search(out), PLUGIN_PATH.search(out)
    assert result.ret in (0, 1, 2) and "error" in out, out[-3000:]  # some mutants are errors, none a crash


def test_the_fuzzer_sees_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check`` reports a loader's exception and a warning located in the plugin's code."""
    import warnings

    from pytest_semantictest.formats.semantictest import loader

    path = tmp_path / "x.json"
    path.write_text(json.dumps(base_suite()))

    def crash(p: Path, ctx: object = None) -> object:
        raise KeyError("boom")

    monkeypatch.setattr(loader, "load_file", crash)
    with pytest.raises(MutantCrash, match="KeyError"):
        check_file(path, collect_context(tmp_path))

    def warns(p: Path, ctx: object = None) -> Any:
        warnings.warn("from our code", FutureWarning)  # noqa: B028
        return load_text(path.read_text(), path)

    monkeypatch.setattr(loader, "load_file", warns)
    with pytest.raises(MutantCrash, match="a warning located outside the spec"):
        check_file(path, collect_context(tmp_path))
