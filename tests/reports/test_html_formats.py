"""pytest-html extras for the compliance and conversation formats: judged bullets, validator
verdicts, the transcript and the checkpoint timeline, in the report's data and in Chromium; and
their JUnit properties."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.compliance.conftest import chat_case, compliance_server, doc
from tests.llm.fake_openai import Reply
from tests.reports.dom import blob, chromium, extra_of, parse, render_in_chromium, result_rows, table_rows
from tests.reports.scenario import run
from tests.yao.conftest import EXPENSE_CHECKPOINTS, EXPENSE_TURNS, write_cases
from tests.yao.fakes import ConversationFake
from tests.yao.scripted_agent import ScriptedAgent

BULLETS = "**Assertions:**\n- The reply echoes the user\n- The reply is in French\n"
VALIDATED = [
    *EXPENSE_CHECKPOINTS[:2],
    {
        "id": "confirm",
        "after": ["call_create"],
        "assertion": {
            "type": "agent",
            "criteria": "tells the user the expense was submitted",
            "threshold": 0.8,
        },
    },
]


@pytest.fixture
def llm() -> Iterator[ConversationFake]:
    with ConversationFake() as server:
        yield server


@pytest.fixture
def agent() -> Iterator[ScriptedAgent]:
    with ScriptedAgent() as scripted:
        yield scripted


@pytest.fixture
def server() -> Iterator[compliance_server.ComplianceServer]:
    instance, _ = compliance_server.start_server(0)
    yield instance
    instance.shutdown()


Servers = tuple[compliance_server.ComplianceServer, ScriptedAgent, ConversationFake]


@pytest.fixture
def servers(
    server: compliance_server.ComplianceServer, agent: ScriptedAgent, llm: ConversationFake
) -> Servers:
    return server, agent, llm


def report_run(pytester: pytest.Pytester, servers: Servers) -> Path:
    server, agent, llm = servers
    # Files run in name order, so the compliance case takes the queued verdict before any conversation starts.
    pytester.makefile(".md", a_compliance=doc(chat_case("1. Echoes in French", extra=BULLETS)))
    llm.queue(
        Reply(
            content=json.dumps(
                {
                    "assertions": {
                        "1": {
                            "passed": True,
                            "reason": "The reply starts with Echo: and repeats the message.",
                        },
                        "2": {"passed": False, "reason": "The reply is in English."},
                    }
                }
            )
        )
    )
    failing_turns = [
        EXPENSE_TURNS[0],
        {"input": EXPENSE_TURNS[1]["input"], "assertions": [{"type": "contains", "value": "refund"}]},
    ]
    write_cases(
        pytester,
        "b_conversation_test",
        {"id": "expense-flow", "turns": failing_turns},
        {
            "id": "simulated",
            "mode": "dynamic",
            "input": "I want to submit an expense",
            "max_turns": 5,
            "checkpoints": [
                *VALIDATED,
                {
                    "id": "receipt",
                    "description": "asks for the receipt",
                    "required": False,
                    "assertion": {"type": "contains", "value": "receipt"},
                },
            ],
            "simulator": {
                "options": {"metadata": {"persona": "an employee", "goal": "submit a travel expense"}}
            },
        },
    )
    result = run(
        pytester,
        f"--semantictest-compliance-base-url={server.url}",
        f"--semantictest-llm-base-url={llm.url}",
        f"--semantictest-agent-endpoint={agent.url}",
        "--html=report.html",
        "--self-contained-html",
        "--junitxml=junit.xml",
    )
    result.assert_outcomes(passed=1, failed=2)
    return pytester.path / "report.html"


def test_judged_bullets_validators_transcripts_and_checkpoints_in_the_extras(
    pytester: pytest.Pytester, servers: Servers
) -> None:
    data = blob(report_run(pytester, servers))

    compliance = extra_of(data, "a_compliance.md::1. Echoes in French")
    bullets = compliance.find(cls="st-judge")
    assert "1/2 held" in bullets.find("h4").text()
    assert table_rows(bullets.find("table", cls="st-judged")) == [
        ["The reply echoes the user", "yes", "The reply starts with Echo: and repeats the message."],
        ["The reply is in French", "no", "The reply is in English."],
    ]
    exchange = compliance.find(cls="st-exchange")
    assert "POST" in exchange.find("h4").text() and "Echo: Hello" in exchange.find(cls="st-response").text()

    static = extra_of(data, "b_conversation_test.jsonl::expense-flow")
    transcript = table_rows(static.find("table", cls="st-transcript"))
    assert [row[1] for row in transcript] == ["I want to submit an expense", "Business travel, $3500"]
    assert "create_expense" in transcript[1][3]

    dynamic = extra_of(data, "b_conversation_test.jsonl::simulated")
    timeline = table_rows(dynamic.find("table", cls="st-checkpoints"))
    assert [(row[0], row[2]) for row in timeline] == [
        ("ask_type", "turn 1"),
        ("call_create", "turn 2"),
        ("confirm", "turn 3"),
        ("receipt", "not reached"),
    ]
    early, reached = dynamic.find_all(cls="st-validator")  # asked after every reply until it held
    assert (
        early.find("h4")
        .text()
        .startswith("turn 2, checkpoint confirm: agent: tells the user the expense was")
    )
    assert "failed" in early.find("h4").text() and early.find("ul", cls="st-suggestions").text()
    assert (
        reached.find("h4").text().startswith("turn 3, checkpoint confirm")
        and "passed" in reached.find("h4").text()
    )
    assert reached.find(cls="st-threshold").text() == "threshold 0.8"

    junit = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    }
    assert junit["1. Echoes in French"]["judged"] == "1/2"
    simulated = junit["simulated"]  # the checkpoint's last validator verdict decides, not the early misses
    assert (simulated["format"], simulated["threshold"], simulated["runs"]) == ("yao", "0.8", "1/1")
    assert simulated["score"] is not None and float(simulated["score"]) >= 0.8

    summary = parse((pytester.path / "report.html").read_text(encoding="utf-8")).find(
        cls="additional-summary"
    )
    assert [row[0] for row in table_rows(summary.find("table", cls="st-formats"))] == ["compliance", "yao"]


def test_the_conversation_extras_render_in_headless_chromium(
    pytester: pytest.Pytester, servers: Servers, tmp_path: Path
) -> None:
    chromium()
    rows = result_rows(render_in_chromium(report_run(pytester, servers), tmp_path))
    assert len(rows) == 3, sorted(rows)
    dynamic = rows["b_conversation_test.jsonl::simulated"].find(cls="extraHTML")
    assert table_rows(dynamic.find("table", cls="st-checkpoints"))[3][2] == "not reached"
    judged = rows["a_compliance.md::1. Echoes in French"].find(cls="extraHTML").find("table", cls="st-judged")
    assert table_rows(judged)[1][1] == "no"
