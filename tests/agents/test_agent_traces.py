"""TraceReader: byte offsets, partial lines, shrunken files, v0/v1 records, bad lines."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from pathlib import Path

from pytest_semantictest.agents import ToolCall, TraceReader
from pytest_semantictest.agents.traces import TraceBatch


def line(**record) -> str:
    return json.dumps(record) + "\n"


def parse_line(text: str) -> TraceBatch:
    """One line's records, read from a trace file as the agent's are."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.jsonl"
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        return TraceReader(path).read_new()


def append(path: Path, text: str) -> None:
    with open(path, "a") as f:
        f.write(text)


def test_reads_only_new_complete_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    reader = TraceReader(path)
    assert reader.read_new().tools == []  # no file yet
    append(path, line(v=1, type="tool", fn="a", args={"x": 1}, context={"test": "t1"}))
    append(path, '{"v":1,"type":"tool","fn":"b"')  # a writer mid-line
    batch = reader.read_new()
    assert [t.fn for t in batch.tools] == ["a"] and batch.problems == []
    assert reader.offset == len(path.read_text().splitlines(keepends=True)[0])
    append(path, ',"args":{}}\n')
    assert [t.fn for t in reader.read_new().tools] == ["b"]
    assert reader.read_new().tools == []
    assert reader.checkpoint() == path.stat().st_size


def test_stateless_read_since_and_checkpoint(tmp_path):
    path = tmp_path / "t.jsonl"
    append(path, line(v=1, type="tool", fn="a"))
    reader = TraceReader(path)
    mark = reader.checkpoint()
    append(path, line(v=1, type="tool", fn="b"))
    assert [t.fn for t in reader.read_since(mark).tools] == ["b"]
    assert [t.fn for t in reader.read_since(0).tools] == ["a", "b"]
    reader.skip_to_end()
    assert reader.read_new().tools == []


def test_shrunken_file_is_reread_from_start(tmp_path):
    path = tmp_path / "t.jsonl"
    append(path, line(v=1, type="tool", fn="old", args={"pad": "x" * 100}))
    reader = TraceReader(path)
    reader.read_new()
    path.write_text(line(v=1, type="tool", fn="new"))  # recreated by a restarted agent
    assert [t.fn for t in reader.read_new().tools] == ["new"]


def test_v1_records():
    tool = parse_line(
        line(
            v=1,
            type="tool",
            ts=5.0,
            fn="get_order",
            args={"order_id": "1"},
            result={"s": 1},
            error=None,
            started_at=1.0,
            ended_at=2.0,
            context={"test": "t"},
            extra="ignored",
        )
    )
    assert tool.tools == [ToolCall("get_order", {"order_id": "1"}, {"s": 1}, None, 1.0, 2.0, {"test": "t"})]
    defaults = parse_line(line(v=1, type="tool", ts=5.0, fn="f", error={"code": 1}))
    assert defaults.tools[0].started_at == 5.0 and defaults.tools[0].ended_at == 5.0
    assert defaults.tools[0].error == '{"code": 1}' and defaults.tools[0].args == {}
    assert parse_line(line(v=1, type="tool", fn="f", error=False)).tools[0].error is None
    hello = parse_line(line(v=1, type="hello", ts=1, sdk="x/1", pid=9, tools=["a"]))
    assert hello.hellos[0].pid == 9 and hello.hellos[0].tools == ("a",) and hello.declarations == [("a",)]
    assert parse_line(line(v=1, type="tools", names=["b"])).declarations == [("b",)]
    turn = parse_line(line(v=1, type="turn", message="m", response="r", context={"test": "t"}))
    assert turn.turns[0].response == "r" and turn.turns[0].context == {"test": "t"}
    unknown = parse_line(line(v=1, type="span", anything=1))
    assert not (unknown.tools or unknown.turns or unknown.hellos or unknown.problems)


def test_v0_lines_put_extra_fields_in_context():
    for record in (
        {"fn": "a", "args": {"q": 1}, "test": "t1", "conversation_id": 7},
        {"v": 0, "fn": "a", "args": {"q": 1}, "test": "t1", "conversation_id": 7},
    ):
        tool = parse_line(json.dumps(record) + "\n").tools[0]
        assert tool.fn == "a" and tool.args == {"q": 1}
        assert tool.context == {"test": "t1", "conversation_id": 7}


def test_bad_lines_are_problems_naming_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        line(v=1, type="hello", tools=[])
        + "not json\n"
        + line(v=1, type="tool", args={})
        + line(v=1, type="tool", fn="f", args=[1])
        + line(v=1, type="tool", fn="f", context="t1")
        + "\n"
        + line(v=2, type="tool", fn="f")
        + line(v=1, type="tool", fn="ok")
    )
    reader = TraceReader(path)
    reader.offset = len(line(v=1, type="hello", tools=[]))  # line numbers count from the file start
    batch = reader.read_new()
    assert [t.fn for t in batch.tools] == ["ok"]
    assert [(p.line, p.message.split(" (")[0].split(",")[0]) for p in batch.problems] == [
        (2, "not valid JSON"),
        (3, "tool record without 'fn'"),
        (4, "'args' must be an object"),
        (5, "'context' must be an object"),
        (7, "trace format v2 is newer than the v1 this plugin reads"),
    ]
    assert str(batch.problems[0]) == f"{path} line 2: not valid JSON (Expecting value)"


def test_inventory_is_since_the_last_hello(tmp_path):
    path = tmp_path / "t.jsonl"
    reader = TraceReader(path)
    assert reader.inventory() is None
    append(path, line(v=1, type="hello", tools=["old_tool"]) + line(v=1, type="tools", names=["older"]))
    assert reader.inventory() == frozenset({"old_tool", "older"})
    append(path, line(v=1, type="hello", pid=2))  # restarted, declared nothing yet
    assert reader.inventory() is None
    append(path, line(v=1, type="tools", names=["a"]) + line(v=1, type="tools", names=["b"]))
    assert reader.inventory() == frozenset({"a", "b"})


def test_wait_for_hello(tmp_path):
    path = tmp_path / "t.jsonl"
    reader = TraceReader(path)
    started = time.monotonic()
    assert reader.wait_for_hello(timeout_s=0.2) is None
    assert time.monotonic() - started >= 0.2
    timer = threading.Timer(0.1, append, (path, line(v=1, type="hello", sdk="s", tools=["x"])))
    timer.start()
    hello = reader.wait_for_hello(timeout_s=2.0)
    timer.join()
    assert hello is not None and hello.sdk == "s"
