"""AgentConfig, ${ENV} expansion and masking, placeholders, correlation."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_semantictest.agents import (
    AgentConfig,
    AgentConfigError,
    PlaceholderError,
    Values,
    expand_env,
    matches_correlate,
    new_test_id,
    render,
)
from pytest_semantictest.agents.correlate import Attribution, attribute, classify, resolve_correlate
from pytest_semantictest.agents.traces import ToolCall, TraceBatch, TurnRecord
from pytest_semantictest.redact import Redactor


def test_expand_env_anywhere_and_reports_used_values():
    env = {"TOKEN": "s3cret-token", "PORT": "8731"}
    raw = {
        "endpoint": "http://127.0.0.1:${PORT}/chat",
        "request": {"headers": {"Authorization": "Bearer ${TOKEN}"}, "body": ["${PORT}", 5, None]},
        "n": 3,
    }
    value, used = expand_env(raw, env)
    assert value["endpoint"] == "http://127.0.0.1:8731/chat"
    assert value["request"]["headers"]["Authorization"] == "Bearer s3cret-token"
    assert value["request"]["body"] == ["8731", 5, None] and value["n"] == 3
    assert used == ["8731", "s3cret-token"]
    assert raw["endpoint"] == "http://127.0.0.1:${PORT}/chat"  # input untouched


def test_expand_env_is_not_recursive():
    value, _ = expand_env("${A}", {"A": "${B}", "B": "no"})
    assert value == "${B}"


def test_missing_variable_names_it_and_where():
    with pytest.raises(
        AgentConfigError,
        match=r"agent.request.headers.Authorization: environment variable "
        r"AGENT_TOKEN is not set",
    ):
        expand_env({"request": {"headers": {"Authorization": "Bearer ${AGENT_TOKEN}"}}}, {})


def test_from_highbar_maps_keys_and_collects_secrets(tmp_path):
    agent = {
        "start": "python agent.py",
        "endpoint": "http://127.0.0.1:9/chat",
        "health": None,
        "startup_timeout": 2000,
        "settle_time": 0,
        "timeout": 1000,
        "request": {
            "method": "put",
            "headers": {"Authorization": "Bearer ${TOK}"},
            "body": {"input": "{{message}}"},
        },
        "response": "data.reply",
        "session": {"setup": {"python": "h:setup"}},
        "correlate": {"conversation": "{{session.cid}}"},
    }
    cfg = AgentConfig.from_highbar(agent, cwd=tmp_path, environ={"TOK": "abcdefgh"}, name="orders")
    assert cfg.managed and cfg.request_method == "PUT" and cfg.settle_time_ms == 0
    assert cfg.request_headers == {"Authorization": "Bearer abcdefgh"}
    assert cfg.session_setup == {"python": "h:setup"} and cfg.session_teardown is None
    assert cfg.correlate == {"conversation": "{{session.cid}}"} and cfg.name == "orders"
    assert cfg.secrets == ["abcdefgh"] and cfg.cwd == tmp_path
    assert cfg.redactor.text("sent Bearer abcdefgh") == "sent Bearer ${TOK}"
    assert Redactor(cfg.secrets).text("sent Bearer abcdefgh") == "sent Bearer ***"


def test_from_highbar_skips_extension_keys_only_where_the_schema_has_keys():
    agent = {
        "endpoint": "http://h/x",
        "x-note": "${UNSET_A}",
        "request": {
            "x-anchor": "${UNSET_B}",
            "headers": {"x-api-key": "${KEY}"},
            "body": {"x-input": "{{message}} ${KEY}"},
        },
        "session": {"x-n": 1, "setup": {"python": "m:f", "x-why": "${UNSET_C}"}},
    }
    cfg = AgentConfig.from_highbar(agent, environ={"KEY": "k-123456"})
    assert cfg.request_headers == {"x-api-key": "k-123456"}
    assert cfg.request_body == {"x-input": "{{message}} k-123456"}
    assert cfg.session_setup == {"python": "m:f"}
    default = AgentConfig.from_highbar({"endpoint": "http://h/x"}, environ={})
    assert default.request_body == {"message": "{{message}}"} and default.correlate == {"test": "{{test.id}}"}
    assert not default.managed and default.startup_timeout_ms == 15000 and default.timeout_ms == 60000


def test_mask_forms_and_short_values():
    """A secret is masked in any encoding; one under six characters is not a secret (its encoded form
    may be longer: a 5-character value repr-escaped is 6, and still not masked)."""
    text = "a b%2Fc%3D12 'x\\ny12z' 'x\\ny12' 8731 tok3n!/=1 b+c"
    assert (
        Redactor(["tok3n!/=1", "8731", "b/c=12", "x\ny12z", "x\ny12", "b c"]).text(text)
        == "a *** '***' 'x\\ny12' 8731 *** b+c"
    )


def test_traces_and_log_paths_are_relative_to_cwd(tmp_path):
    cfg = AgentConfig(endpoint="http://h/x", traces="t.jsonl", cwd=tmp_path, log_dir=Path("logs"))
    assert cfg.traces_path() == tmp_path / "t.jsonl" and cfg.log_path_base() == tmp_path / "logs"


def test_render_keeps_types_and_escapes_structurally():
    values = Values(
        test_id="id1", message='say "hi"\n{x}', test_name="T", session={"cid": 42, "user": {"n": "u"}}
    )
    body = {
        "m": "{{message}}",
        "wrapped": "<{{ message }}>",
        "cid": "{{session.cid}}",
        "text": "c={{session.cid}}",
        "obj": "{{session.user}}",
        "list": ["{{test.id}}", "{{test.name}}"],
        "n": 1,
    }
    assert render(body, values) == {
        "m": 'say "hi"\n{x}',
        "wrapped": '<say "hi"\n{x}>',
        "cid": 42,
        "text": "c=42",
        "obj": {"n": "u"},
        "list": ["id1", "T"],
        "n": 1,
    }
    with pytest.raises(PlaceholderError, match="no key 'nope'"):
        render("{{session.nope}}", values)
    with pytest.raises(PlaceholderError, match="no message here"):
        render("{{message}}", Values(test_id="x"))


def test_correlation():
    tid = new_test_id()
    assert len(tid) == 32 and int(tid, 16) >= 0 and tid != new_test_id()
    default = {"test": "{{test.id}}"}
    assert matches_correlate({"test": tid}, default, tid)
    assert not matches_correlate({"test": "other"}, default, tid)
    assert not matches_correlate({}, default, tid)
    two = {"test": "{{test.id}}", "conv": "{{session.cid}}"}
    assert matches_correlate({"test": tid, "conv": "42"}, two, tid, session={"cid": 42})  # 42 == "42"
    resolved = resolve_correlate(two, tid, session={"cid": 42})
    assert attribute({"test": tid}, resolved) is Attribution.UNATTRIBUTED  # a key missing
    assert attribute({"test": tid, "conv": None}, resolved) is Attribution.UNATTRIBUTED
    assert attribute({"test": tid, "conv": 7}, resolved) is Attribution.OTHER
    assert attribute({"test": True}, {"test": 1}) is Attribution.OTHER  # True is never 1


def test_classify_splits_a_batch():
    batch = TraceBatch(
        tools=[
            ToolCall("a", {}, context={"test": "me"}),
            ToolCall("b", {}, context={"test": "you"}),
            ToolCall("c", {}),
        ],
        turns=[TurnRecord(0.0, "m", "r", {"test": "me"})],
    )
    split = classify(batch, {"test": "me"})
    assert [t.fn for t in split.mine_tools] == ["a"] and len(split.mine_turns) == 1
    assert split.other == 1 and [t.fn for t in split.unattributed_tools] == ["c"]
    assert split.observed and split.correlated
