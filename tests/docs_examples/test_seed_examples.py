"""Every SemanticTest suite of the docs, as published (endpoints adapted to loopback only), collected by
the plugin and run against the docs' APIs on loopback: each test gets the verdict the docs intend.

The suites are read from the documentation at test time and staged with only their endpoints adapted
(seed_copies.py); the APIs are docs_server.py. LLMJudge steps stay unjudged here, so a test that reads a judge's score is SKIPPED
("LLM judge not configured"), never PASSED.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples" / "agents"))
sys.path.insert(0, str(HERE))

import seed_copies  # noqa: E402
from docs_run import shared_docs_run  # noqa: E402

from tests.shared import needs_docs  # noqa: E402

pytestmark = needs_docs

P, F, S = "passed", "failed", "skipped"
JUDGE_SKIP = "LLM judge not configured"

# copy -> {test id: the verdict the docs intend}; ids "test-<n>" are the tests the docs give no id
EXPECTED: dict[str, dict[str, str]] = {
    "01-ai-testing-multi-turn-conversations.json": {"turn-1": P, "turn-2": P},
    "02-ai-testing-multi-turn-conversations.json": {"full-conversation": P},
    "03-ai-testing-multi-turn-conversations.json": {
        "turn-1-greeting": S,
        "turn-2-state-problem": S,
        "turn-3-provide-order": S,
    },
    "04-ai-testing-multi-turn-conversations.json": {"laptop-shopping-flow": S},
    "05-ai-testing-multi-turn-conversations.json": {"math-tutoring-session": S},
    "06-ai-testing-multi-turn-conversations.json": {"test-pronoun-resolution": S},
    "07-ai-testing-multi-turn-conversations.json": {"test-state-accumulation": S},
    "08-ai-testing-multi-turn-conversations.json": {"test-correction-handling": S},
    "09-ai-testing-multi-turn-conversations.json": {"test-ambiguous-reference": S},
    "10-ai-testing-multi-turn-conversations.json": {"test-topic-switch": S},
    "11-ai-testing-overview.json": {"test-greeting": S},
    "12-ai-testing-semantic-validation.json": {"test-helpful-response": S},
    "13-ai-testing-semantic-validation.json": {"test-article-summary": S},
    "14-ai-testing-semantic-validation.json": {"test-code-explanation": S},
    "15-ai-testing-streaming-responses.json": {"test-streaming-response": S},
    "16-ai-testing-streaming-responses.json": {"test-streaming-with-tools": P},
    "17-ai-testing-streaming-responses.json": {"test-vercel-ai-stream": S},
    "18-ai-testing-streaming-responses.json": {"test-partial-response": P},
    "19-ai-testing-tool-calls.json": {"test-schedule-meeting": P},
    "20-ai-testing-tool-calls.json": {"test-safe-customer-service": P},
    "21-ai-testing-tool-calls.json": {"test-database-query-order": P},
    "22-ai-testing-tool-calls.json": {"test-order-fulfillment-agent": P},
    "23-blocks-http-request.json": {"create-user": P},
    "24-blocks-http-request.json": {"test-0": P},
    "25-blocks-json-parser.json": {"test-parse": P},
    "26-blocks-loop.json": {"poll-until-complete": P},
    "27-blocks-loop.json": {"test-job-completion": P},
    "28-blocks-mock-data.json": {"test-validation": P},
    "29-blocks-mock-data.json": {"test-with-mock": P, "test-with-real-api": P},
    "30-blocks-mock-data.json": {"test-user-validation": P},
    "31-blocks-mock-data.json": {"test-empty-data": P, "test-null-fields": P},
    "32-blocks-stream-parser.json": {"test-function-calling": P},
    "33-blocks-stream-parser.json": {"test-streaming-agent": P},
    "34-blocks-validate-content.json": {"validate-ai-response": P},
    "35-blocks-validate-tools.json": {"test-calendar-agent": P},
    "36-blocks-validate-tools.json": {"test-customer-query": P},
    "37-concepts-assertions.json": {"test-user": S},
    "38-concepts-data-flow.json": {"test-0": P},
    "39-concepts-data-flow.json": {"test-0": P},
    "40-concepts-pipelines.json": {"my-test": P},
    "41-concepts-pipelines.json": {"test1": P},
    "42-examples-ai-chat-test.json": {"meeting-scheduler": S, "bad-response-detection": S},
    "43-examples-basic-api-test.json": {"get-user": P, "create-post": P, "get-posts": P},
    "44-examples-basic-api-test.json": {"test-0": P},
    "45-examples-basic-api-test.json": {"test-0": P},
    "46-examples-calendar-agent.json": {"schedule-meeting": S, "conflict-handling": S, "multi-attendee": P},
    "47-examples-error-handling.json": {"validation-failure": P, "missing-data": P, "retry-on-failure": P},
    "48-examples-error-handling.json": {"helpful-error": P},
    "49-installation.json": {"verify": P},
    "50-introduction.json": {"get-user": S},
    "51-quickstart.json": {"simple-test": P},
    "52-quickstart.json": {"semantic-test": S},
}


def test_the_staged_suites_are_the_docs_suites(tmp_path: Path) -> None:
    """52 suites in the docs, 52 staged, each the docs' block with only its endpoints adapted."""
    blocks = seed_copies.seed_blocks(seed_copies.SEED.read_text(encoding="utf-8"))
    assert len(blocks) == 52
    staged = seed_copies.stage(tmp_path)
    assert [p.name for p in staged] == sorted(p.name for p in tmp_path.glob("*.json")) == list(EXPECTED)
    for copy, (page, line, text) in zip(staged, blocks):
        data = json.loads(copy.read_text(encoding="utf-8"))
        assert data == seed_copies.adapt(json.loads(text), page), (
            f"{copy.name} differs from the docs (line {line})"
        )


def _outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """nodeid -> (outcome, message text) from a JUnit XML report ("error" for setup errors)."""
    found: dict[str, tuple[str, str]] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        nodeid = f"{case.get('classname')}::{case.get('name')}"
        outcome, text = P, ""
        for child in case:
            kind = {"failure": F, "skipped": S, "error": "error"}.get(child.tag)
            if kind:
                outcome, text = kind, f"{child.get('message', '')}\n{child.text or ''}"
        found[nodeid] = (outcome, text)
    return found


@pytest.fixture(scope="module")
def run(request: pytest.FixtureRequest) -> dict[str, tuple[str, str]]:
    """All copies in one pytest run (a subprocess, as users run it) against the docs' APIs on loopback,
    made once for the session (docs_run.shared_docs_run; the concurrency test compares it too)."""
    done = shared_docs_run(request)
    assert done["code"] == pytest.ExitCode.OK, done["stdout"] + done["stderr"]
    assert "error" not in done["stdout"].splitlines()[-1], "no collection errors: " + done["stdout"]
    return _outcomes(Path(done["junit"]))


def test_every_copy_collects_with_the_listed_tests(run: dict[str, tuple[str, str]]) -> None:
    listed = {f"{name}::{test}" for name, tests in EXPECTED.items() for test in tests}
    assert set(run) == listed


def _cases() -> Iterator[object]:
    for name, tests in EXPECTED.items():
        for test_id, outcome in tests.items():
            yield pytest.param(name, test_id, outcome, id=f"{name}::{test_id}")


@pytest.mark.parametrize(("name", "test_id", "outcome"), list(_cases()))
def test_docs_suite_gets_the_intended_verdict(
    name: str, test_id: str, outcome: str, run: dict[str, tuple[str, str]]
) -> None:
    got, text = run[f"{name}::{test_id}"]
    assert got == outcome, text[-3000:]
    if outcome == S:
        assert JUDGE_SKIP in text, text
    assert outcome != F, "no docs suite is meant to fail"
