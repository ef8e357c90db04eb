"""How a2a and realtime cases are read: the dialect, the base URL each transport's files go to, the
realtime request's form, and the strict ``reply:`` key (all at collection, before anything is sent)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.compliance.compile import Settings, compile_document
from pytest_semantictest.formats.compliance.parse import parse_text
from pytest_semantictest.model import Suite
from tests.compliance.conftest import doc
from tests.helpers import bus_of

INPUT = '### 1. Hi\n\n**Input:** User sends "Hi" to `echo-agent`\n'


def compiled(text: str, **settings: Any) -> Suite:
    return compile_document(parse_text(text, "t.md"), Settings(**settings))


def test_dialect_belongs_to_a2a_files_only() -> None:
    with pytest.raises(SpecError, match="dialect is for transport: a2a"):
        compiled(doc(INPUT, transport="realtime", dialect="jsonrpc"))
    with pytest.raises(SpecError, match="dialect"):
        compiled(doc(INPUT, transport="a2a", dialect="grpc"))
    config = compiled(doc(INPUT, transport="a2a", dialect="webagents")).cases[0].steps[-1].config
    assert config["dialect"] == "webagents" and config["transport"] == "a2a"


def test_each_transport_has_its_own_base_url_variable() -> None:
    env = {
        "COMPLIANCE_A2A_URL": "http://a2a",
        "COMPLIANCE_A2A_JSONRPC_URL": "http://rpc",
        "COMPLIANCE_REALTIME_URL": "http://rt",
    }

    def url(**extra: str) -> str:
        suite = compiled(doc(INPUT, **extra), env=env, base_url="http://general")
        config = next(
            s.config for s in suite.cases[0].steps if s.block in ("ChatRequest", "TransportRequest")
        )
        return str(config.get("base_url") or config["url"])

    assert url(transport="a2a") == "http://a2a"
    assert url(transport="a2a", dialect="jsonrpc") == "http://rpc"
    assert url(transport="a2a", dialect="webagents") == "http://a2a"  # no variable of its own: the a2a one
    assert url(transport="realtime") == "http://rt"
    assert url(transport="completions").startswith("http://general")


@pytest.mark.parametrize(
    "request_text, problem",
    [
        ('POST `/realtime`\n```json\n[{"type": "response.create"}]\n```', "write GET `/realtime`, not POST"),
        ('GET `/realtime`\n```json\n{"messages": []}\n```', "a JSON array of client events"),
        ('GET `/realtime`\n```json\n["response.create"]\n```', "a JSON array of client events"),
    ],
)
def test_a_realtime_request_is_a_get_with_client_events(request_text: str, problem: str) -> None:
    case = f"### 1. Events\n\n**Request:**\n{request_text}\n"
    error = compiled(doc(case, transport="realtime")).cases[0].error or ""
    assert problem in error and "t.md:" in error


def test_reply_is_a_strict_key_with_paths() -> None:
    case = (
        INPUT
        + "\n**Strict:**\n```yaml\nreply:\n  state: completed\n  events[*].kind: exists\n  rpely: 1\n```\n"
    )
    suite = compiled(doc(case, transport="a2a"))
    assert suite.cases[0].error is None
    typo = INPUT + "\n**Strict:**\n```yaml\nrepyl:\n  state: completed\n```\n"
    assert "did you mean 'reply'" in (compiled(doc(typo, transport="a2a")).cases[0].error or "")


def test_a_disconnect_behaviour_is_not_silently_dropped_for_other_transports() -> None:
    case = INPUT + "\n**Behavior:** Client disconnects after receiving 2 chunks\n"
    error = compiled(doc(case, transport="a2a")).cases[0].error or ""
    assert "for transport: completions only, not a2a" in error


def test_a_failed_task_without_expected_fails_and_a_hang_never_passes_as_a_rejection() -> None:
    from pytest_semantictest.formats.compliance.transport import ReplyCheck

    def verdict(expected: str | None, **observed: object) -> tuple[list[str], str | None]:
        result = ReplyCheck(expected).evaluate_sync(
            bus_of({"observed": {"ok": True, "status": 200, **observed}})
        )
        return [f.message for f in result.failures], result.error

    failed = {
        "reply": {"state": "failed", "error": "no such tool", "timeline": ["task.failed (state=failed)"]}
    }
    messages, _ = verdict(None, **failed)
    assert messages == ['the agent rejected the request (status 200, state failed): "no such tool"']
    assert verdict("failure", **failed) == ([], None)
    hung = {
        "ok": False,
        "timed_out": True,
        "failure": "no final event within 1.8 s",
        "reply": {"url": "http://x"},
    }
    assert verdict("failure", **hung) == ([], "http://x: no final event within 1.8 s")
    refused = {"ok": False, "status": 0, "failure": "cannot connect", "reply": {"url": "http://x"}}
    assert (
        verdict("failure", **refused) == ([], None)
        and verdict(None, **refused)[1] == "http://x: cannot connect"
    )


def test_unknown_a2a_results_are_kept_not_a_crash() -> None:
    from pytest_semantictest.blocks.transports.a2a_fold import fold_payload
    from pytest_semantictest.blocks.transports.reply import Reply
    from pytest_semantictest.blocks.transports.tool_calls import DEFAULT

    reply = Reply("a2a", "jsonrpc")
    fold_payload('{"jsonrpc": "2.0", "id": 1, "result": {"kind": "mystery", "x": 1}}', reply, "0.3", DEFAULT)
    fold_payload("not json", reply, "0.3", DEFAULT)
    assert [e["kind"] for e in reply.events] == ["unknown:mystery", "unknown"]
    assert reply.problems == [] and reply.as_dict()["timeline"] == ["unknown:mystery", "unknown: not json"]


def test_realtime_text_from_done_events_and_calls_from_response_done() -> None:
    """A server that sends no deltas: the text of ``response.text.done`` (once), a function call listed only
    in ``response.done``'s output; a failed response's details are its error."""
    from pytest_semantictest.blocks.transports.realtime import _fold
    from pytest_semantictest.blocks.transports.reply import Reply

    reply = Reply("realtime", "realtime")
    call = {"type": "function_call", "name": "lookup", "call_id": "c9", "arguments": '{"q": "x"}'}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {"id": "r1"}}),
        ("response.output_text.done", {"text": "whole answer"}),
        ("response.done", {"response": {"status": "completed", "output": [call]}}),
        ("response.created", {"response": {"id": "r2"}}),
        ("response.text.delta", {"delta": "part"}),
        ("response.text.done", {"text": "part"}),
        ("response.done", {"response": {"status": "failed", "status_details": {"why": "quota"}}}),
    ]
    for kind, event in events:
        _fold(reply, kind, event)
    shaped = reply.as_dict()
    assert shaped["text"] == "whole answerpart"
    assert shaped["responses"] == [
        {"id": "r1", "text": "whole answer", "status": "completed"},
        {"id": "r2", "text": "part", "status": "failed"},
    ]
    assert shaped["tool_calls"] == [{"name": "lookup", "call_id": "c9", "arguments": {"q": "x"}}]
    assert shaped["state"] == "failed" and shaped["error"] == {"why": "quota"} and "deltas" not in shaped
