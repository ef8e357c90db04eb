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
from pytest_semantictest.model import Case, CheckResult, Outcome, Suite, Verdict

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
        run = SuiteRun(Suite(name="s", path=Path("s.json"), format="semantictest", cases=[case]), None)  # type: ignore[arg-type]
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
