"""The Yao file format: reading JSONL, validating cases, detection rules, the agent sidecar, compiling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.agents.chat import ChatTarget
from pytest_semantictest.blocks.simulated_conversation import DynamicPlan
from pytest_semantictest.checks.conversation import TurnAssertion
from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.detect import CollectContext, yao_jsonl
from pytest_semantictest.formats.yao.compile import compile_file
from pytest_semantictest.options import OPTIONS
from tests.yao.conftest import EXPENSE_CHECKPOINTS, EXPENSE_TURNS, SIMULATOR, jsonl


def context(
    tmp_path: Path, args: tuple[str, ...] = (), env: dict[str, str] | None = None, **values: Any
) -> Any:
    defaults = {name: default for name, _, default, _ in OPTIONS}
    defaults.update({k.replace("_", "-"): v for k, v in values.items()})
    return CollectContext(
        tmp_path, tmp_path, env if env is not None else {}, lambda name: defaults.get(name), args
    )


def problems(path: Path, ctx: Any) -> list[str]:
    """The file's collection error, else the errors of its cases (a problem of one case is its own)."""
    try:
        suite = compile_file(path, ctx)
    except SpecError as exc:
        return exc.render().splitlines()
    found = [line for case in suite.cases if case.error for line in case.error.splitlines()]
    assert found, "neither the file nor a case has a problem"
    return found


# --- reading and validating ---------------------------------------------------------------


def test_every_bad_line_is_reported_with_its_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad_test.jsonl"
    path.write_text(
        "\n".join(
            [
                '{"id": "ok", "input": "hi"}',
                "",
                "// a comment line",
                '{"id": "broken", "input": "hi",}',
                '["not", "an", "object"]',
                '{"id": "ok", "input": "again"}',
                '{"id": "typo", "inputt": "hi"}',
                '{"id": "dup-key", "input": "a", "input": "b"}',
                '{"id": "bad-assert", "input": "hi", "assertions": [{"type": "regex", "patern": "x"}]}',
                '{"id": "bad-type", "input": "hi", "assert": {"type": "contans", "value": "x"}}',
                '{"id": "both", "input": "hi", "turns": [{"input": "x"}]}',
                '{"id": "dyn", "mode": "dynamic", "simulator": {}, "checkpoints": [{"id": "a", "after": ["b"], '
                '"assertion": {"type": "contains", "value": "x"}}, {"id": "b", "after": ["a"], "assertion": '
                '{"type": "contains", "value": "y"}}, {"id": "c", "after": ["zz", "c"], "assertion": {"type": "contains", '
                '"value": "z"}}]}',
                '{"id": "attach", "input": "see", "attachments": [{"type": "image", "source": "file://missing.png"}]}',
                '{"id": "t", "input": "hi", "timeout": "soon"}',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    lines = problems(path, context(tmp_path))
    file = str(path)
    assert lines == [  # what makes the file unreadable: a collection error, before any case
        f"{file}:4: invalid JSON at column 32: Expecting property name enclosed in double quotes (a trailing comma "
        "before it?)",
        f"{file}:5: each line must be one test case (a JSON object), got an array",
        f"{file}:6: id: duplicate id 'ok' (first used on line 1)",
    ]
    text = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(text[:3] + ["// gone"] * 3 + text[6:]) + "\n", encoding="utf-8")
    suite = compile_file(path, context(tmp_path))
    by_id = {case.id: case.error for case in suite.cases}
    assert by_id["ok"] is None  # every other case still runs
    file = str(path)  # the full path: a run shows it relative to the rootdir, as node ids are
    lines = problems(path, context(tmp_path))
    assert lines == [  # each problem confined to one case is that case's error
        f"{file}:7: unknown key 'inputt' — did you mean 'input'?",
        f"{file}:8: duplicate key 'input' (the later value would hide the earlier)",
        f"{file}:9: assertions[0]: unknown key 'patern' — did you mean 'pattern'?",
        f"{file}:10: assert[0].type: unknown assertion type 'contans' — did you mean 'contains'? (types: equals, "
        "contains, not_contains, regex, json_path, type, tool_called, tool_result, script, agent)",
        f"{file}:11: give 'input' (one turn) or 'turns' (several), not both",
        f"{file}:12: checkpoints[2].after: unknown checkpoint 'zz'",
        f"{file}:12: checkpoints[2].after: checkpoint 'c' cannot come after itself",
        f"{file}:12: checkpoints[0].after: the after order has a cycle: a -> b -> a",
        f"{file}:13: attachments[0].source: file not found: {tmp_path / 'missing.png'}",
        f"{file}:14: timeout: must be a duration like '30s', '2m' or '1m30s', got 'soon'",
    ]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            {"id": "x"},
            "a test case needs 'input' (one turn), 'turns' (static mode) or 'checkpoints' (dynamic mode)",
        ),
        ({"id": "x", "turns": []}, "'turns' must have at least one turn"),
        ({"id": "x", "input": "a", "checkpoints": [], "mode": "static"}, "belong to dynamic mode"),
        ({"id": "x", "mode": "dynamic", "simulator": {}}, "dynamic mode needs 'checkpoints'"),
        (
            {"id": "x", "mode": "dynamic", "checkpoints": EXPENSE_CHECKPOINTS},
            "dynamic mode needs 'simulator'",
        ),
        (
            {
                "id": "x",
                "mode": "dynamic",
                "simulator": {},
                "turns": [{"input": "a"}],
                "checkpoints": EXPENSE_CHECKPOINTS,
            },
            "dynamic mode has no 'turns'",
        ),
        (
            {
                "id": "x",
                "simulator": {},
                "checkpoints": EXPENSE_CHECKPOINTS,
                "assertions": [{"type": "contains", "value": "a"}],
            },
            "move these assertions into a checkpoint",
        ),
        (
            {"id": "x", "input": "a", "expected": "b", "assert": {"type": "contains", "value": "b"}},
            "give 'assertions' or 'expected'",
        ),
        ({"id": "x", "input": "a", "assert": [], "assertions": []}, "give one of assertions, assert"),
        ({"id": "x", "input": "a", "mode": "interactive"}, "mode: must be 'static' or 'dynamic'"),
        ({"id": "x", "input": "a", "max_turns": 3}, "'max_turns' belongs to dynamic mode"),
        ({"id": "a::b", "input": "a"}, "id: must not contain '::'"),
        ({"id": "x", "input": {"role": "usr", "content": "a"}}, "input.role: must be one of user, assistant"),
    ],
)
def test_case_shape_problems(tmp_path: Path, case: dict[str, Any], message: str) -> None:
    path = tmp_path / "shape_test.jsonl"
    path.write_text(jsonl(case), encoding="utf-8")
    found = problems(path, context(tmp_path))
    assert any(message in line for line in found), found


def test_empty_file_and_comments_only(tmp_path: Path) -> None:
    path = tmp_path / "empty_test.jsonl"
    path.write_text("// nothing yet\n\n", encoding="utf-8")
    assert problems(path, context(tmp_path)) == [f"{path}: no test cases: write one JSON object per line"]


# --- compiling ----------------------------------------------------------------------------


def test_compiles_static_single_and_dynamic_cases(tmp_path: Path) -> None:
    path = tmp_path / "mixed_test.jsonl"
    path.write_text(
        jsonl(
            {
                "id": "flow",
                "name": "Expense flow",
                "turns": EXPENSE_TURNS,
                "options": {"metadata": {"a": 1}},
                "assertions": [{"type": "contains", "value": "EXP"}],
            },
            {"id": "one", "input": "hello", "expected": "Hi! How can I help?"},
            {
                "id": "dyn",
                "mode": "dynamic",
                "input": "hi",
                "simulator": SIMULATOR,
                "checkpoints": EXPENSE_CHECKPOINTS,
            },
            {"id": "later", "input": "hi", "skip": "not ready"},
            comment="three kinds of cases",
        ),
        encoding="utf-8",
    )
    suite = compile_file(path, context(tmp_path, agent_endpoint="http://127.0.0.1:9/v1/chat/completions"))
    flow, one, dyn, later = suite.cases
    assert suite.format == "yao" and len(suite.agents) == 1 and suite.agents[0].calls_from == "reply"
    assert (
        [s.block for s in flow.steps] == ["ChatTurn"] * 3 and flow.line == 2 and flow.name == "Expense flow"
    )
    assert [type(c).__name__ for c in flow.steps[1].checks] == ["TurnCompleted", "DeterministicTurnAssertion"]
    assert flow.steps[2].config["previous"] == ["turn1", "turn2"]
    assert flow.steps[0].config["options"] == {"metadata": {"a": 1}}
    final, greeting = flow.checks[0], one.steps[0].checks[1]
    assert isinstance(final, TurnAssertion) and isinstance(greeting, TurnAssertion)
    assert final.label == "final reply" and final.slot == "turn3"
    assert greeting.specs[0].value == "Hi! How can I help?"
    assert [s.block for s in dyn.steps] == ["SimulatedConversation"]
    plan = dyn.steps[0].compiled
    assert isinstance(plan, DynamicPlan)
    assert (plan.max_turns, plan.timeout, plan.simulator.model_use) == (20, 300.0, "simulator")
    assert later.skip == "not ready" and not later.steps


def test_no_agent_skips_every_case_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "lonely_test.jsonl"
    path.write_text(jsonl({"id": "a", "input": "hi"}), encoding="utf-8")
    suite = compile_file(path, context(tmp_path))
    assert suite.cases[0].skip == (
        "no agent to test: set --semantictest-agent-endpoint (or ini "
        "semantictest_agent_endpoint), or write lonely_test.agent.yaml next to the file"
    )


def test_sidecar_configures_the_agent_and_is_validated(tmp_path: Path) -> None:
    path = tmp_path / "side_test.jsonl"
    path.write_text(jsonl({"id": "a", "input": "hi"}), encoding="utf-8")
    sidecar = tmp_path / "side_test.agent.yaml"
    sidecar.write_text(
        "endpoint: http://127.0.0.1:9/v1/chat/completions\nmodel: agent-model\nheaders:\n"
        "  Authorization: Bearer ${AGENT_TOKEN}\nbody: {temperature: 0}\nawaiting_input: {pattern: '\\?$'}\n",
        encoding="utf-8",
    )
    suite = compile_file(
        path, context(tmp_path, env={"AGENT_TOKEN": "tok-123456"}, agent_endpoint="http://elsewhere:1/x")
    )
    target = suite.cases[0].steps[0].compiled
    assert isinstance(target, ChatTarget)
    assert target.endpoint == "http://127.0.0.1:9/v1/chat/completions"  # the sidecar wins over the option
    assert target.config.request_headers == {"Authorization": "Bearer tok-123456"}
    assert target.config.secrets == ["tok-123456"]  # by its name, and the header it reached
    assert (target.model, target.body, target.awaiting_pattern) == ("agent-model", {"temperature": 0}, "\\?$")
    sidecar.write_text("endpoint: http://x:1/\nprotocl: openai\ntraces: t.jsonl\n", encoding="utf-8")
    assert problems(path, context(tmp_path)) == [
        f"{sidecar}:2: unknown key 'protocl' — did you mean 'protocol'?"
    ]
    sidecar.write_text("endpoint: http://x:1/\ntraces: t.jsonl\n", encoding="utf-8")
    assert problems(path, context(tmp_path)) == [f"{sidecar}:1: traces: only for protocol: highbar"]
    sidecar.write_text("endpoint: http://x:1/\nheaders: {A: '${UNSET_VAR_X}'}\n", encoding="utf-8")
    assert "environment variable UNSET_VAR_X is not set" in problems(path, context(tmp_path))[0]


def test_highbar_protocol_takes_text_turns_only(tmp_path: Path) -> None:
    path = tmp_path / "hb_test.jsonl"
    path.write_text(jsonl({"id": "a", "input": [{"role": "user", "content": "hi"}]}), encoding="utf-8")
    found = problems(
        path, context(tmp_path, agent_endpoint="http://127.0.0.1:9/chat", agent_protocol="highbar")
    )
    assert found == [
        f"{path}:1: input: the highbar protocol sends one text message a turn: use text inputs without "
        "attachments, or protocol: openai"
    ]


# --- detection ----------------------------------------------------------------------------


def write(path: Path, first: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n// comment\n" + json.dumps(first) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "first", "collected"),
    [
        ("flows_test.jsonl", {"id": "a", "input": "hi"}, True),
        ("test_flows.jsonl", {"id": "a", "turns": []}, True),
        ("TestFlows.jsonl", {"id": "a", "checkpoints": []}, True),
        ("data.jsonl", {"id": "a", "input": "hi"}, False),  # data that only looks like a case
        ("flows_test.jsonl", {"input": "hi"}, False),  # no id
        ("flows_test.jsonl", {"id": "a", "prompt": "hi"}, False),  # none of input/turns/checkpoints
        ("flows_test.json", {"id": "a", "input": "hi"}, False),
    ],
)
def test_detection_by_name_and_first_case(tmp_path: Path, name: str, first: Any, collected: bool) -> None:
    assert yao_jsonl(write(tmp_path / name, first), context(tmp_path)) is collected


def test_detection_of_files_named_on_the_command_line_or_by_ini_globs(tmp_path: Path) -> None:
    data = write(tmp_path / "cases" / "flows.jsonl", {"id": "a", "input": "hi"})
    other = write(tmp_path / "data" / "records.jsonl", {"id": "a", "input": "hi"})
    assert not yao_jsonl(data, context(tmp_path))
    assert not yao_jsonl(data, None)
    assert yao_jsonl(data, context(tmp_path, args=("-v", "cases/flows.jsonl::a")))
    assert not yao_jsonl(other, context(tmp_path, args=("cases/flows.jsonl",)))
    assert yao_jsonl(data, context(tmp_path, yao_globs=["cases/*.jsonl"]))
    assert yao_jsonl(data, context(tmp_path, yao_globs=["flows.jsonl"]))
    assert not yao_jsonl(other, context(tmp_path, yao_globs=["cases/*.jsonl"]))
    assert yao_jsonl(data, context(tmp_path, generate_out="cases/flows.jsonl"))


def test_detection_in_a_session(pytester: pytest.Pytester) -> None:
    write(pytester.path / "flows_test.jsonl", {"id": "a", "input": "hi"})
    write(pytester.path / "records.jsonl", {"id": "a", "input": "hi"})
    write(pytester.path / "picked" / "chosen.jsonl", {"id": "b", "input": "hi"})
    pytester.makeini("[pytest]\nsemantictest_yao_globs =\n    picked/*.jsonl\n")
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["flows_test.jsonl::a", "picked/chosen.jsonl::b"])
    assert "records.jsonl" not in result.stdout.str()
