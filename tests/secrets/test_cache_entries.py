"""Replay-cache entries are checked against the call they are read for: a file swapped, renamed or
edited is an ERROR naming it, a corrupt one says so (and ``read-write`` records it again, saying so),
and entries recorded before the check existed are still found."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.llm.cache import CorruptEntry, EntryMismatch
from pytest_semantictest.llm.client import LLMClient
from pytest_semantictest.llm.config import LLMConfig
from tests.llm.fake_openai import FakeOpenAI

FIRST = [{"role": "user", "content": "first question"}]
SECOND = [{"role": "user", "content": "second question"}]


def client(tmp_path: Path, server: FakeOpenAI | None, mode: str = "read-write") -> LLMClient:
    return LLMClient(LLMConfig(base_url=server.url if server else None, api_key="sk-cache-test-0123456789",
                               cache_dir=tmp_path / "cache", cache_mode=mode, env={}))


def ask(llm: LLMClient, messages: list[dict[str, str]]) -> Any:
    async def go() -> Any:
        try:
            return await llm.complete("judge", messages)
        finally:
            await llm.aclose()

    return asyncio.run(go())


def entry_of(tmp_path: Path, server: FakeOpenAI, messages: list[dict[str, str]]) -> Path:
    key = ask(client(tmp_path, server), messages).key
    return tmp_path / "cache" / "judge" / f"{key}.json"


def swap(a: Path, b: Path) -> None:
    text_a, text_b = a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")
    a.write_text(text_b, encoding="utf-8")
    b.write_text(text_a, encoding="utf-8")


@pytest.mark.parametrize("mode", ["replay", "read", "read-write"])
def test_swapped_entries_are_an_error_naming_the_file(fake_openai: FakeOpenAI, tmp_path: Path, mode: str) -> None:
    first, second = entry_of(tmp_path, fake_openai, FIRST), entry_of(tmp_path, fake_openai, SECOND)
    swap(first, second)
    with pytest.raises(EntryMismatch) as info:
        ask(client(tmp_path, fake_openai, mode), FIRST)
    message = str(info.value)
    assert str(first) in message and "does not belong to this call" in message and second.stem in message
    assert fake_openai.count == 2  # never silently answered from the other call's entry, nor re-asked


def test_an_edited_request_is_an_error(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["messages"][0]["content"] = "something else"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EntryMismatch, match="request_digest does not match"):
        ask(client(tmp_path, None, "replay"), FIRST)
    data["messages"][0]["content"], data["model"] = FIRST[0]["content"], "another-model"
    data.pop("request_digest")
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EntryMismatch, match="it records model 'another-model', the call has 'gpt-4o-mini'"):
        ask(client(tmp_path, None, "replay"), FIRST)


@pytest.mark.parametrize(("content", "why"), [
    ("{not json", "not JSON (Expecting property name enclosed in double quotes, line 1)"),
    ("[1, 2]", "a JSON list, not an object"),
    ('{"key": "k"}', "it has no 'response' object"),
])
def test_a_corrupt_entry_says_so(fake_openai: FakeOpenAI, tmp_path: Path, content: str, why: str) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CorruptEntry) as info:
        ask(client(tmp_path, None, "replay"), FIRST)
    assert str(info.value).startswith(f"corrupt entry {path}: {why}")
    assert "no entry" not in str(info.value)


def test_read_write_records_a_corrupt_entry_again_and_says_so(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    path.write_text("{not json", encoding="utf-8")
    with pytest.warns(UserWarning, match=rf"corrupt entry {path}: not JSON .*; recording it again"):
        done = ask(client(tmp_path, fake_openai), FIRST)
    assert not done.cached and fake_openai.count == 2
    assert json.loads(path.read_text(encoding="utf-8"))["response"]["content"] == "echo: first question"
    assert ask(client(tmp_path, None, "replay"), FIRST).cached  # usable again


def test_entries_recorded_before_the_check_are_still_found(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["request_digest"]  # what version 1 entries look like
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert ask(client(tmp_path, None, "replay"), FIRST).content == "echo: first question"


def judged(test_id: str, text: str, passed: bool) -> dict[str, Any]:
    """A judged test that must FAIL: ``passed`` is the opposite of what the judge decides for ``text``."""
    return {"id": test_id, "pipeline": [
        {"block": "MockData", "config": {"data": {"text": text}}, "output": "reply"},
        {"block": "LLMJudge", "input": {"text": "${reply.text}", "expected": {"expectedBehavior": "Confirms 2 PM"}},
         "output": "judgement"},
    ], "assertions": {"judgement.passed": passed}}


def test_swapping_two_entries_does_not_make_failing_tests_pass(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    fake_openai.rule("cannot help", 0.1, reasoning="It does not confirm anything.")
    suite = {"name": "swap", "tests": [judged("bad", "I cannot help with that.", True),
                                       judged("good", "Booked for 2 PM.", False)]}
    pytester.makefile(".json", swap=json.dumps(suite))
    args = ["-p", "no:cacheprovider", f"--semantictest-llm-base-url={fake_openai.url}"]
    pytester.runpytest_inprocess(*args).assert_outcomes(failed=2)
    files = sorted((pytester.path / ".semantictest" / "cache").rglob("*.json"))
    assert len(files) == 2
    swap(*files)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--semantictest-llm-cache=replay")
    result.assert_outcomes(errors=2)
    for path in files:
        result.stdout.fnmatch_lines([f"*replay cache entry {path} does not belong to this call*"])
