"""Each format owns its glue: the one interface (``formats/pytest_glue.py``), the scheduling hint of the
SemanticTest format, typed data instead of live objects, no LLM calls in format code."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import pytest_semantictest
from pytest_semantictest.formats import pytest_glue as glue

PACKAGE = Path(pytest_semantictest.__file__).parent


def test_register_installs_exactly_what_each_format_glue_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import import_module

    registered: list[tuple[str, object]] = []

    class Manager:
        def register(self, plugin: object, name: str) -> None:
            registered.append((name, plugin))

    class Config:
        pluginmanager = Manager()

    config: Any = Config()
    wanted: list[str] = []
    for name in glue.GLUE:
        module = import_module(f"pytest_semantictest.formats.{name}.pytest_glue")
        monkeypatch.setattr(
            module, "plugins", lambda config, runtime, name=name: [(f"glue-{name}", (name, runtime))]
        )
        wanted.append(f"glue-{name}")
    runtime: Any = object()
    glue.register(config, runtime)
    assert registered == [(f"glue-{n}", (n, runtime)) for n in glue.GLUE]
    assert [name for name, _ in registered] == wanted


def test_a_session_has_the_glue_of_every_format(pytester: pytest.Pytester) -> None:
    # parseconfigure() skips pytest_cmdline_main, where the plugin gives pytest-asyncio its default
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    config = pytester.parseconfigure()
    names = {name for name, _ in config.pluginmanager.list_name_plugin()}
    assert {"semantictest-compliance", "semantictest-xdist-scheduling"} <= names
    assert "semantictest-generation" not in names  # only with --semantictest-generate
    config = pytester.parseconfigure("--semantictest-generate=http://127.0.0.1:9/v1")
    assert config.pluginmanager.get_plugin("semantictest-generation") is not None


def test_the_plugin_names_no_format_glue() -> None:
    source = (PACKAGE / "plugin.py").read_text(encoding="utf-8")
    for name in (
        "ComplianceSession",
        "Generation",
        "FileSetupScheduling",
        "compliance_session",
        "xdist_scheduling",
    ):
        assert name not in source, name


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_scheduling_hint_says_what_the_compiled_suite_says(tmp_path: Path) -> None:
    from pytest_semantictest.formats.semantictest.loader import load_file, runs_on_one_worker

    step = {"block": "MockData", "config": {"data": {"a": 1}}, "output": "d"}
    test = {"id": "t", "pipeline": [step], "assertions": {"d.a": 1}}
    broken_test = {"id": "b", "pipeline": [{"block": "MockData", "config": {"data": 1}, "unknown": 2}]}
    files = [
        _write(tmp_path / "setup.json", {"setup": [step], "tests": [test]}),
        _write(tmp_path / "teardown.json", {"teardown": [step], "tests": [test]}),
        _write(tmp_path / "neither.json", {"tests": [test]}),
        _write(tmp_path / "empty.json", {"setup": [], "teardown": [], "tests": [test]}),
        _write(tmp_path / "one_broken_test.json", {"setup": [step], "tests": [test, broken_test]}),
    ]
    for path in files:
        suite = load_file(path)
        assert runs_on_one_worker(path) is bool(suite.setup or suite.teardown), path.name
    assert [runs_on_one_worker(p) for p in files] == [True, True, False, False, True]


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool, Path))


def test_yao_step_configs_are_plain_data_and_the_target_is_compiled(tmp_path: Path) -> None:
    from pytest_semantictest.agents.chat import ChatTarget
    from pytest_semantictest.blocks.simulated_conversation import DynamicPlan
    from pytest_semantictest.formats.yao.compile import compile_file
    from tests.yao.conftest import EXPENSE_CHECKPOINTS, EXPENSE_TURNS, SIMULATOR, jsonl
    from tests.yao.test_yao_format import context

    (tmp_path / "hooks_mod.py").write_text(
        "def before(ctx, case):\n    return 1\n\n\ndef after(ctx, case):\n    pass\n"
    )
    path = tmp_path / "mixed_test.jsonl"
    path.write_text(
        jsonl(
            {"id": "flow", "turns": EXPENSE_TURNS, "before": "hooks_mod:before", "after": "hooks_mod:after"},
            {
                "id": "dyn",
                "mode": "dynamic",
                "input": "hi",
                "simulator": SIMULATOR,
                "checkpoints": EXPENSE_CHECKPOINTS,
            },
        ),
        encoding="utf-8",
    )
    suite = compile_file(path, context(tmp_path, agent_endpoint="http://127.0.0.1:9/v1/chat/completions"))
    assert [case.error for case in suite.cases] == [None, None]
    steps = [s for case in suite.cases for s in [*case.steps, *case.cleanup]]
    assert {s.block for s in steps} >= {"ChatTurn", "SimulatedConversation", "YaoHook"}
    for step in steps:
        assert _plain(step.config), (step.block, step.config)
    assert all(isinstance(s.compiled, ChatTarget) for s in steps if s.block == "ChatTurn")
    assert all(isinstance(s.compiled, DynamicPlan) for s in steps if s.block == "SimulatedConversation")


def test_compliance_data_is_typed_on_the_model(tmp_path: Path) -> None:
    from pytest_semantictest.formats.compliance.compile import Settings, compile_document
    from pytest_semantictest.formats.compliance.data import ComplianceCase, ComplianceFile
    from pytest_semantictest.formats.compliance.parse import parse_text
    from tests.compliance.conftest import chat_case, doc

    text = doc(chat_case("1. Hello", model="echo"), name="second", depends_on="[first]")
    suite = compile_document(
        parse_text(text, str(tmp_path / "second.md")), Settings(base_url="http://127.0.0.1:9")
    )
    assert isinstance(suite.format_data, ComplianceFile)
    assert (suite.format_data.name, suite.format_data.depends_on) == ("second", ("first",))
    assert suite.format_data.setup.base_url == "http://127.0.0.1:9"
    case = suite.cases[0]
    assert isinstance(case.format_data, ComplianceCase) and case.format_data.parsed.title
    assert case.barrier == "a compliance file with depends_on runs when its dependencies are reported"


def test_format_code_calls_no_llm() -> None:
    """Nothing under formats/ runs anything while tests run, but the pytest glue (and what it
    registers: Yao's generator at session start): judging and paraphrasing are checks and blocks."""
    calls = re.compile(r"\.complete\(|from \.+llm\b|pytest_semantictest\.llm\b")
    found = [
        str(p.relative_to(PACKAGE))
        for p in (PACKAGE / "formats").rglob("*.py")
        if "pytest_glue" not in p.with_suffix("").parts and calls.search(p.read_text(encoding="utf-8"))
    ]
    assert (
        PACKAGE / "formats" / "yao" / "pytest_glue" / "generation.py"
    ).is_file()  # what the rule leaves out
    assert found == []


def test_dependency_order_moves_a_file_after_what_it_depends_on() -> None:
    from pytest_semantictest.formats.compliance.ordering import dependency_order

    b, a, other = ("b", ("a",)), ("a", ()), None
    items = [("py1", other), ("b1", b), ("b2", b), ("a1", a), ("py2", other)]
    assert dependency_order(items) == ["py1", "a1", "b1", "b2", "py2"]
    assert dependency_order([("b1", ("b", ("gone",))), ("a1", a)]) is None  # nothing collected to wait for
