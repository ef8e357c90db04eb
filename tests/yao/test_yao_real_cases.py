"""Keys Yao's own test cases use: per-case before/after hooks, user, team, metadata, image parts in
``input``, agents named in ``use``; and where a problem of one case is reported (that case's ERROR).

The files are shaped like the cases in Yao's ``agent/eval/README.md`` (written here, not copied).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.yao.conftest import jsonl, run, write_cases
from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent

# Yao's env_test.ts, ported to Python: Before(ctx, testCase) -> data; After(ctx, testCase, result, data)
ENV_TEST = """
import json

def _log(record):
    with open("hooks.log", "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\\n")

def Before(ctx, testCase):
    _log({"hook": "before", "id": testCase["id"], "ctx": ctx, "metadata": testCase.get("metadata")})
    return {"user_row": 42, "scenario": (testCase.get("metadata") or {}).get("scenario")}

def After(ctx, testCase, result, data):
    _log({"hook": "after", "id": testCase["id"], "status": result["status"], "output": result["output"],
          "data": data})

def Broken(ctx, testCase):
    raise RuntimeError("no database")

def BrokenAfter(ctx, testCase, result, data):
    raise ValueError("cleanup went wrong")

async def asyncBefore(ctx):
    _log({"hook": "async-before", "ctx": ctx})
    return "from async"
"""


def hook_log(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    path = pytester.path / "hooks.log"
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


def test_before_and_after_hooks_run_around_each_case(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    (pytester.path / "env_test.py").write_text(ENV_TEST, encoding="utf-8")
    write_cases(
        pytester,
        "hooks_test",
        {
            "id": "with-user-data",
            "input": "Show my expenses",
            "before": "env_test.Before",
            "after": "env_test.After",
            "user": "user-001",
            "team": "team-alpha",
            "metadata": {"scenario": "with_data"},
            "assert": {"type": "contains", "value": "expense"},
        },
        {
            "id": "python-spelling",
            "input": "hello",
            "before": "env_test:Before",
            "after": {"python": "env_test:After"},
            "assert": {"type": "contains", "value": "nothing like this"},
        },
        {"id": "before-fails", "input": "hello", "before": "env_test.Broken", "after": "env_test.After"},
        {"id": "after-fails", "input": "hello", "after": "env_test.BrokenAfter"},
        {"id": "async-hook", "input": "hello", "before": "scripts:env_test:asyncBefore", "user": "u-9"},
    )
    result = run(pytester, chat_agent, None)
    result.assert_outcomes(passed=3, failed=1, errors=1)
    log = hook_log(pytester)
    first = [r for r in log if r.get("id") == "with-user-data"]
    assert first[0] == {
        "hook": "before",
        "id": "with-user-data",
        "metadata": {"scenario": "with_data"},
        "ctx": {
            "locale": "en",
            "user_id": "user-001",
            "team_id": "team-alpha",
            "authorized": {"user_id": "user-001", "team_id": "team-alpha"},
        },
    }
    assert first[1] == {
        "hook": "after",
        "id": "with-user-data",
        "status": "completed",
        "output": "What type of expense would you like to submit?",
        "data": {"user_row": 42, "scenario": "with_data"},
    }
    failed = [r for r in log if r.get("id") == "python-spelling"]
    assert [r["hook"] for r in failed] == ["before", "after"]  # the after hook runs for a failing case too
    assert not [r for r in log if r.get("id") == "before-fails"]  # as in Yao: no after when before failed
    assert [r["ctx"] for r in log if r["hook"] == "async-before"] == [
        {"locale": "en", "user_id": "u-9", "authorized": {"user_id": "u-9"}}
    ]
    result.stdout.fnmatch_lines(
        [
            "*before-fails*",
            "before hook 'env_test.Broken' failed: RuntimeError: no database",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*hooks_test.jsonl:4: YaoHookWarning: after hook 'env_test.BrokenAfter' failed: "
            "ValueError: cleanup went wrong"
        ]
    )
    sent = [r for r in chat_agent.requests if "show my expenses" in json.dumps(r["body"]).lower()]
    assert sent and sent[0]["body"]["user"] == "user-001" and sent[0]["body"]["team"] == "team-alpha"
    assert "metadata" not in sent[0]["body"]  # Yao gives a case's metadata to its hooks, not to the agent
    assert "Traceback" not in result.stdout.str()


def test_hooks_around_a_dynamic_case(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, llm: ConversationFake
) -> None:
    (pytester.path / "env_test.py").write_text(ENV_TEST, encoding="utf-8")
    write_cases(
        pytester,
        "dynamic_hooks_test",
        {
            "id": "expense-flow",
            "input": "Submit expense",
            "before": "env_test.Before",
            "after": "env_test.After",
            "team": "team-7",
            "metadata": {"scenario": "empty_db"},
            "simulator": {
                "use": "tests.simulator-agent",
                "options": {"metadata": {"persona": "New employee", "goal": "Submit $3500 travel expense"}},
            },
            "checkpoints": [
                {"id": "ask-type", "assert": {"type": "regex", "value": "(?i)type"}},
                {
                    "id": "create",
                    "after": ["ask-type"],
                    "assert": {"type": "tool_called", "value": "create_expense"},
                },
            ],
            "max_turns": 5,
        },
    )
    result = run(pytester, chat_agent, llm)
    result.assert_outcomes(passed=1)
    before, after = hook_log(pytester)
    assert before["ctx"] == {"locale": "en", "team_id": "team-7", "authorized": {"team_id": "team-7"}}
    assert after["status"] == "passed" and after["data"] == {"user_row": 42, "scenario": "empty_db"}
    assert "draft travel expense" in after["output"]
    assert all(r["body"]["team"] == "team-7" for r in chat_agent.requests)


def test_a_hook_that_cannot_run_is_that_cases_error(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    write_cases(
        pytester,
        "yao_hooks_test",
        {"id": "ts-hook", "input": "hello", "before": "env.Before"},
        {"id": "no-module", "input": "hello", "after": "nowhere_xyz:after"},
        {"id": "bare", "input": "hello", "before": "Before"},
        {"id": "fine", "input": "hello", "assert": {"type": "contains", "value": "help"}},
        {"id": "scripts-hook", "input": "hello", "before": "scripts:tests.env.Before"},
    )
    result = run(pytester, chat_agent, None, "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "yao_hooks_test.jsonl::ts-hook",
            "yao_hooks_test.jsonl::no-module",
            "yao_hooks_test.jsonl::bare",
            "yao_hooks_test.jsonl::fine",
        ]
    )
    result = run(pytester, chat_agent, None)
    result.assert_outcomes(passed=1, errors=4)
    result.stdout.fnmatch_lines(
        [
            "yao_hooks_test.jsonl:1: before: 'env.Before' is a Yao script hook (src/env_test.ts in the agent), which "
            "pytest-semantictest cannot run: write Before(ctx, case) in Python in env_test.py next to this file, or name "
            "a Python callable 'module:function'",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "yao_hooks_test.jsonl:2: after: cannot find module 'nowhere_xyz' for hook "
            "'nowhere_xyz:after' (nor *nowhere_xyz.py)"
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "yao_hooks_test.jsonl:3: before: 'Before' names no module: write 'module:function' "
            "(a Python callable) or Yao's 'env_test.Before'"
        ]
    )
    result.stdout.fnmatch_lines(
        [  # found under tests/ beside the file, not next to it
            "yao_hooks_test.jsonl:5: before: 'scripts:tests.env.Before' is a Yao script hook (src/tests.env_test.ts in "
            "the agent), which pytest-semantictest cannot run: write Before(ctx, case) in Python in tests/env_test.py "
            "under this file's folder, or name a Python callable 'module:function'",
        ]
    )
    assert len(chat_agent.requests) == 1  # only the good case reached the agent


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def test_image_parts_in_input_are_sent_as_data_urls(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    cases = pytester.path / "cases"
    (cases / "fixtures").mkdir(parents=True)
    (cases / "fixtures" / "receipt.png").write_bytes(PNG)
    receipt = {
        "id": "receipt-analyze",
        "input": {
            "role": "user",
            "content": [
                {"type": "text", "text": "Analyze this receipt"},
                {"type": "image", "source": "file://fixtures/receipt.png"},
            ],
        },
        "assert": {"type": "contains", "value": "image/png"},
    }
    history = {
        "id": "in-history",
        "input": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": [{"type": "image", "source": "fixtures/receipt.png"}]},
        ],
        "assert": {"type": "contains", "value": "I see an image"},
    }
    missing = {
        "id": "missing",
        "input": {
            "role": "user",
            "content": [
                {"type": "text", "text": "and this one"},
                {"type": "image", "source": "file://fixtures/gone.jpg"},
            ],
        },
    }
    turns = {
        "id": "turn-missing",
        "turns": [
            {"input": "hello"},
            {"input": [{"role": "user", "content": [{"type": "image", "source": "file://nope.png"}]}]},
        ],
    }
    (cases / "receipt_test.jsonl").write_text(jsonl(receipt, history, missing, turns), encoding="utf-8")
    result = run(pytester, chat_agent, None, "cases")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "cases/receipt_test.jsonl:3: input.content[1].source: file not found: cases/fixtures/gone.jpg",
        ]
    )
    result.stdout.fnmatch_lines(
        ["cases/receipt_test.jsonl:4: turns[1].input[0].content[0].source: file not found: cases/nope.png"]
    )
    sent = [r["body"]["messages"][-1]["content"] for r in chat_agent.requests]  # in the order they arrived
    # cases run at once
    content = next(c for c in sent if isinstance(c, list) and c[0].get("text") == "Analyze this receipt")
    assert content == [
        {"type": "text", "text": "Analyze this receipt"},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        },
    ]
    assert len(chat_agent.requests) == 2


def test_agents_named_in_use_are_played_by_the_role_never_sent_as_models(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent, llm: ConversationFake
) -> None:
    checkpoints = [
        {"id": "ask_type", "assert": {"type": "regex", "value": "(?i)type of expense"}},
        {"id": "create", "after": ["ask_type"], "assert": {"type": "tool_called", "value": "create_expense"}},
    ]
    write_cases(
        pytester,
        "agents_test",
        {
            "id": "sim-agent",
            "input": "I need help with an expense",
            "simulator": {
                "use": "tests.simulator-agent",
                "options": {"metadata": {"persona": "New employee", "goal": "Submit expense report"}},
            },
            "checkpoints": checkpoints,
            "max_turns": 3,
        },
        {
            "id": "validator-agent",
            "input": "Yes, confirm",
            "assert": {
                "type": "agent",
                "use": "agents:tests.validator-agent",
                "value": "Response should be friendly",
            },
        },
        {
            "id": "validator-connector",
            "input": "hello",
            "assert": {
                "type": "agent",
                "use": "agents:workers.test.validator",
                "value": "Response should be friendly",
                "options": {"connector": "gpt-4o"},
            },
        },
        {
            "id": "validator-model",
            "input": "hello",
            "assert": {"type": "agent", "use": "gpt-4.1-mini", "value": "Response should be friendly"},
        },
    )
    result = run(
        pytester,
        chat_agent,
        llm,
        "--semantictest-llm-model=house-model",
        "-o",
        "semantictest_llm_model=simulator=sim-model",
    )
    result.assert_outcomes(passed=1, failed=3)  # the fake validator passes "submitted" replies only
    models = [(role, body.get("model")) for role, body in zip(llm.roles(), llm.bodies())]
    assert ("simulator_turn", "sim-model") in models  # the simulator role plays tests.simulator-agent
    assert set(models) >= {
        ("validator_result", "house-model"),
        ("validator_result", "gpt-4o"),
        ("validator_result", "gpt-4.1-mini"),
    }
    assert all(model not in ("tests.validator-agent", "workers.test.validator") for _, model in models)


def test_bad_values_in_one_case_are_that_cases_error(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    path = pytester.path / "bad_values_test.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "ok", "input": "hello", "assert": {"type": "contains", "value": "help"}}),
                '{"id": "huge-timeout", "input": "hello", "timeout": 1' + "0" * 400 + "}",
                json.dumps(
                    {
                        "id": "args-text",
                        "input": "hello",
                        "assert": {"type": "tool_called", "value": {"name": "setup", "arguments": "init"}},
                    }
                ),
                '{"id": "dup", "input": "a", "input": "b"}',
                json.dumps({"input": "no id here"}),
                json.dumps({"id": "typo", "input": "hello", "befor": "env_test.Before"}),
                json.dumps({"id": "wip", "input": "later", "skip": True, "asert": {}}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    result = run(pytester, chat_agent, None)
    result.assert_outcomes(passed=1, errors=5, skipped=1)
    result.stdout.fnmatch_lines(
        ["bad_values_test.jsonl:2: timeout: must be a positive duration of at most 24h, got 1000000000*…"]
    )
    result.stdout.fnmatch_lines(
        [
            "bad_values_test.jsonl:3: assert[0]: a tool_called object's 'arguments' must be an "
            "object (the arguments to match), got 'init'"
        ]
    )
    result.stdout.fnmatch_lines(["bad_values_test.jsonl:4: duplicate key 'input' *"])
    result.stdout.fnmatch_lines(["bad_values_test.jsonl:5: 'id' is required"])
    result.stdout.fnmatch_lines(["bad_values_test.jsonl:6: unknown key 'befor' — did you mean 'before'?"])
    result.stdout.fnmatch_lines(["ERROR bad_values_test.jsonl::line-5 *"])
    out = result.stdout.str()
    assert "Traceback" not in out and "OverflowError" not in out and "AttributeError" not in out


def test_a_file_problem_stays_a_collection_error(
    pytester: pytest.Pytester, chat_agent: ScriptedAgent
) -> None:
    path = pytester.path / "unreadable_test.jsonl"
    path.write_text('{"id": "a", "input": "hi"}\n{"id": "b", "input": \n', encoding="utf-8")
    result = run(pytester, chat_agent, None)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unreadable_test.jsonl:2: invalid JSON at column *"])
    assert len(chat_agent.requests) == 0


def test_matchers_take_a_scalar_where_an_object_is_expected() -> None:
    from pytest_semantictest.checks.matchers import subset_matches

    assert subset_matches("init", "init") and not subset_matches("init", {"action": "init"})


def test_yao_hook_spellings() -> None:
    from pytest_semantictest.formats.yao.hooks import hook_ref
    from pytest_semantictest.formats.yao.models import PythonHook

    assert hook_ref("env_test.Before") == ("env_test:Before", "env_test.Before")
    assert hook_ref("src/env.Before")[0] == "env_test:Before"  # Yao adds _test and drops src/
    assert hook_ref(PythonHook(python="pkg.hooks:setup"))[0] == "pkg.hooks:setup"
    with pytest.raises(ValueError, match="names no module"):
        hook_ref("Before")
    for wrong in ("a..b", "scripts:", "env_test:not-a-name", "1mod.Before"):
        with pytest.raises(ValueError, match="is not 'module:function'"):
            hook_ref(wrong)


@pytest.mark.parametrize(
    ("use", "expected"),
    [
        ("tests.simulator-agent", ("simulator", None)),
        ("agents:tests.validator-agent", ("simulator", None)),
        ("agents:my-validator", ("simulator", None)),
        ("agents:validator", ("validator", None)),
        ("judge", ("judge", None)),
        ("gpt-4o-mini", ("simulator", "gpt-4o-mini")),
        ("gpt-4.1-mini", ("simulator", "gpt-4.1-mini")),
        ("claude-3.5-sonnet", ("simulator", "claude-3.5-sonnet")),
        (None, ("simulator", None)),
    ],
)
def test_use_names_an_agent_a_role_or_a_model(use: str | None, expected: tuple[str, str | None]) -> None:
    from pytest_semantictest.llm.validator import resolve_use

    assert resolve_use(use, "simulator") == expected


def test_an_agents_connector_is_its_model() -> None:
    from pytest_semantictest.checks.specs import AssertionSpec, SimulatorSpec

    spec = SimulatorSpec.model_validate({"use": "tests.simulator-agent", "options": {"connector": "gpt-4o"}})
    assert spec.model_use == "gpt-4o"
    judged = AssertionSpec.model_validate(
        {"type": "agent", "use": "agents:tests.validator-agent", "value": "x"}
    )
    assert judged.validator_use == "agents:tests.validator-agent"


def test_image_part_conversion_keeps_the_order(tmp_path: Path) -> None:
    from pytest_semantictest.agents.chat import materialize

    (tmp_path / "a.png").write_bytes(PNG)
    sent = materialize(
        [
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": "file://a.png"},
                    {"type": "text", "text": "what is this"},
                    {"type": "image", "url": "https://example.test/b.png"},
                ],
            }
        ],
        tmp_path,
    )
    parts = sent[0]["content"]
    assert [p["type"] for p in parts] == ["image_url", "text", "image_url"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert parts[2]["image_url"]["url"] == "https://example.test/b.png"


def test_user_and_team_with_the_highbar_protocol_are_that_cases_error(tmp_path: Path) -> None:
    from pytest_semantictest.formats.yao.compile import compile_file
    from tests.yao.test_yao_format import context

    path = tmp_path / "hb_test.jsonl"
    path.write_text(
        jsonl({"id": "who", "input": "hi", "user": "u-1"}, {"id": "fine", "input": "hi"}), encoding="utf-8"
    )
    suite = compile_file(
        path, context(tmp_path, agent_endpoint="http://127.0.0.1:9/chat", agent_protocol="highbar")
    )
    assert [c.error for c in suite.cases] == [
        f"{path}:1: user: 'user' is sent in the request body with protocol: openai; with protocol: highbar put "
        "it in the agent file's request.body",
        None,
    ]
