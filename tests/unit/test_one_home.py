"""One home per concept (``docs/architecture.md``, "One way per job"): each test fails when a
second home comes back."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import re
from pathlib import Path

import pytest

import pytest_semantictest
from pytest_semantictest.engine.suite import SuiteRun
from pytest_semantictest.evidence import JudgedItems
from pytest_semantictest.llm.client import LLMClient
from pytest_semantictest.llm.config import LLMConfig
from pytest_semantictest.llm.judge import Judge
from pytest_semantictest.model import Case, CheckResult, Outcome, Suite, Verdict
from pytest_semantictest.run_context import RunContext, Settings, llm_unavailable

PACKAGE = Path(pytest_semantictest.__file__).parent


def _sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}


@pytest.mark.parametrize(
    ("skip", "error", "outcome"),
    [
        ("asks to be skipped", None, Outcome.SKIPPED),
        (None, "line 3: undefined ${X}", Outcome.ERROR),
        ("asks to be skipped", "line 3: broken", Outcome.SKIPPED),  # a broken case that asks to be skipped
        (None, None, None),
    ],
)
def test_a_case_is_skipped_or_errors_by_one_rule(
    skip: str | None, error: str | None, outcome: Outcome | None
) -> None:
    """``Case.settled`` decides; ``run_suite``'s runner gives what it says (the pytest item asks it too)."""
    case = Case(id="c", name="c", steps=[], checks=[], skip=skip, error=error)
    settled = case.settled()
    assert (settled.outcome if settled else None) is outcome
    if settled is not None:
        suite = Suite(name="s", path=Path("s.json"), format="semantictest", cases=[case])
        run = SuiteRun(suite, RunContext(env={}))  # (a settled case makes no request)
        got = asyncio.run(run.run_case(case))
        assert (got.outcome, got.skip_reason, got.error) == (
            settled.outcome,
            settled.skip_reason,
            settled.error,
        )


def test_nothing_else_decides_a_case_skip_or_error() -> None:
    """Only ``model.py`` turns ``Case.skip``/``Case.error`` into an outcome."""
    pattern = re.compile(r"skip_reason=\s*[\w.]*case\.skip|error=\s*[\w.]*case\.error\b")
    assert [name for name, text in _sources().items() if pattern.search(text)] == []


def test_judgements_have_one_typed_form() -> None:
    """A judged check's verdicts are ``JudgedItems`` evidence; the dict form is written, never read."""
    assert "judgement" not in {f.name for f in dataclasses.fields(CheckResult)}
    assert "judgements" not in {f.name for f in dataclasses.fields(Verdict)}
    assert not hasattr(JudgedItems, "from_dict")


def test_the_env_variable_pattern_has_one_home() -> None:
    r"""``${NAME}`` is ``resolve.ENV_VAR``; no other module compiles it."""
    pattern = re.compile(r"\\\$\\\{\(?\[A-Za-z_\]")
    assert [name for name, text in _sources().items() if pattern.search(text)] == ["resolve.py"]


def test_masking_has_one_home() -> None:
    """Secrets are masked by ``redact.Redactor``: no other module defines a ``mask``/``redact``
    function or method (``report/logs.redact`` applies the redactor to a log record)."""
    found = []
    for name, text in _sources().items():
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name.strip("_") in {"mask", "redact", "scrub"}
                and name != "report/logs.py"
            ):
                found.append(f"{name}:{node.lineno} {node.name}")
    assert found == []


def test_run_counts_written_as_text_are_not_parsed_back() -> None:
    """JUnit's ``runs`` shows ``k/n`` for people; the summary, merge and baseline read numbers."""
    readers = [
        "report/summary.py",
        "report/baseline.py",
        "report/baseline_plugin.py",
        "report/results.py",
        "merge.py",
    ]
    sources = _sources()
    split = re.compile(r"""\.(split|partition|rpartition)\(\s*["']/["']""")
    assert [name for name in readers if split.search(sources[name])] == []


_CONTEXTS = re.compile(r"^(ctx|context|run_context|session)$|\.run_context$|^ctx\.")
_NODES = re.compile(r"^(item|node|other|spec_file|parent)$|\.spec_file$")
_NODE_STATE = {"verdict", "case", "mutation", "run_state", "suite", "spec_file", "usage"}


def _typed_state_lookups(sources: dict[str, str] | None = None) -> list[str]:
    """``getattr``/``hasattr`` on a typed context (a step's, a check's, the run's) or, for our own state,
    on a pytest item or node: each is a place that bypasses the contract the type declares."""
    found = []
    for name, text in (sources if sources is not None else _sources()).items():
        for node in ast.walk(ast.parse(text)):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr"}
                and len(node.args) >= 2
            ):
                continue
            target, attribute = ast.unparse(node.args[0]), node.args[1]
            ours = isinstance(attribute, ast.Constant) and attribute.value in _NODE_STATE
            if _CONTEXTS.search(target) or (_NODES.search(target) and ours):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_typed_contexts_and_item_state_are_read_as_typed() -> None:
    """Blocks and checks read ``StepContext``/``CheckRun`` fields; reports read item state through the
    stash keys (``spec_nodes.VERDICT``, ``MUTATION``, ``lookahead.case_runs.FILE_RUN``): no look-up by name."""
    assert _typed_state_lookups() == []


def test_the_lookup_counter_sees_what_it_forbids() -> None:
    bad = 'def f(ctx, item):\n    return getattr(ctx, "judge", None), getattr(item, "verdict", None)\n'
    xdist = "getattr(node, 'workerinput')"  # pytest-xdist's attribute, not our state
    assert len(_typed_state_lookups({"bad.py": bad, "fine.py": xdist})) == 2


def _client(tmp_path: Path, base_url: str | None) -> LLMClient:
    return LLMClient(LLMConfig(base_url=base_url, cache_dir=tmp_path, env={}))


@pytest.mark.parametrize("role", ["judge", "validator", "simulator"])
def test_whether_an_llm_role_can_answer_is_decided_once(tmp_path: Path, role: str) -> None:
    """``RunContext.llm_unavailable``: no LLM, "not evaluated"; under ``--semantictest-require-judge``
    an ERROR that says how to configure one; a configured role (the judge also built) answers."""
    lenient = RunContext(env={}).llm_unavailable(role)
    assert lenient is not None and not lenient.error and str(lenient) == f"LLM {role} not configured"
    strict = RunContext(Settings(require_judge=True), env={}).llm_unavailable(role)
    assert strict is not None and strict.error
    assert str(strict).startswith(f"LLM {role} not configured and --semantictest-require-judge is set: set ")
    offline = RunContext(env={}, llm=_client(tmp_path, None)).llm_unavailable(role)
    assert offline is not None and str(offline) == f"LLM {role} not configured"
    client = _client(tmp_path, "http://127.0.0.1:9/v1")
    configured = RunContext(env={}, llm=client, judge=Judge(client))
    assert configured.llm_unavailable(role) is None
    assert RunContext(env={}, llm=client).llm_unavailable("judge") is not None  # no judge built on it
    assert llm_unavailable(role, configured=False, require=True) == strict


def test_the_llm_role_rule_is_worded_in_one_place() -> None:
    """Only ``run_context.py`` says an LLM role is "not configured" and reads ``require_judge`` to decide
    it (``plugin.py`` hands the setting to the fixtures, which ask ``run_context.llm_unavailable``)."""
    worded, decided = set(), set()
    for name, text in _sources().items():
        tree = ast.parse(text)
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            said = node.value if isinstance(node, ast.Constant) and id(node) not in docstrings else None
            if isinstance(said, str) and " not configured" in said:
                worded.add(name)
            if isinstance(node, ast.Attribute) and node.attr == "require_judge":
                decided.add(name)
    assert worded == {"run_context.py"}
    assert decided <= {"run_context.py", "plugin.py"}


def test_a_format_is_registered_by_its_one_record(pytester: pytest.Pytester) -> None:
    """``formats/registry.FORMATS`` feeds the markers, detection, the pytest glue and the schemas; a
    format's package has glue exactly when its record says so."""
    from pytest_semantictest import schemas
    from pytest_semantictest.formats import detect, pytest_glue, registry

    names = [f.name for f in registry.FORMATS]
    assert [(name, collector) for name, _, collector in detect.FORMATS] == [
        (f.name, f.collector) for f in registry.FORMATS
    ]
    assert [d.__name__ for _, d, _ in detect.FORMATS] == [f.detector for f in registry.FORMATS]
    formats_dir = PACKAGE / "formats"
    has_glue = {n for n in names if any((formats_dir / n).glob("pytest_glue*"))}
    assert set(pytest_glue.GLUE) == has_glue == {f.name for f in registry.FORMATS if f.glue}
    assert [s for f in registry.FORMATS for s in f.schemas] == schemas.SCHEMAS
    for f in registry.FORMATS:
        assert (formats_dir / f"{f.collector.replace('.', '/')}.py").is_file(), f.collector
    shown = pytester.runpytest("--markers", "-p", "no:cacheprovider").stdout.str()
    assert all(f"@pytest.mark.{f.name}: {f.marker}" in shown for f in registry.FORMATS)
    listed = re.compile(r"\(\s*\"semantictest\",\s*\"(highbar|compliance|yao)\"")
    assert [name for name, text in _sources().items() if listed.search(text)] == []  # no second list
