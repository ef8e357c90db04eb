"""Replay-cache entries are checked whole against the call they are read for: a file swapped, copied,
renamed, truncated or edited (any field, request or response), or one without its digest, is an
ERROR naming it, in every mode that reads; with ``SEMANTICTEST_CACHE_KEY`` an entry must carry a
keyed digest made with that key, so a digest recomputed by hand is an ERROR too."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.llm.cache import CorruptEntry, EntryMismatch, TamperedEntry, entry_digest, sealed
from pytest_semantictest.llm.client import LLMClient
from pytest_semantictest.llm.config import LLMConfig
from pytest_semantictest.llm.errors import LLMError
from tests.llm.fake_openai import FakeOpenAI

FIRST = [{"role": "user", "content": "first question"}]
SECOND = [{"role": "user", "content": "second question"}]
KEY = "ci-held-cache-key-0123456789abcdef"


def client(
    tmp_path: Path, server: FakeOpenAI | None, mode: str = "read-write", key: str | None = None
) -> LLMClient:
    return LLMClient(
        LLMConfig(
            base_url=server.url if server else None,
            api_key="sk-cache-test-0123456789",
            cache_dir=tmp_path / "cache",
            cache_mode=mode,
            env={},
            cache_signing_key=key,
        )
    )


def ask(llm: LLMClient, messages: list[dict[str, str]]) -> Any:
    async def go() -> Any:
        try:
            return await llm.complete("judge", messages)
        finally:
            await llm.aclose()

    return asyncio.run(go())


def entry_of(
    tmp_path: Path, server: FakeOpenAI, messages: list[dict[str, str]], key: str | None = None
) -> Path:
    answer = ask(client(tmp_path, server, key=key), messages).key
    return tmp_path / "cache" / "judge" / f"{answer}.json"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def save(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def swap(a: Path, b: Path) -> None:
    text_a, text_b = a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")
    a.write_text(text_b, encoding="utf-8")
    b.write_text(text_a, encoding="utf-8")


def rekeyed(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """What a forger does to make a copied entry look like ``path``'s: its key, then a fresh digest."""
    return sealed({**data, "key": path.stem})


@pytest.mark.parametrize("mode", ["replay", "read", "read-write"])
def test_swapped_entries_are_an_error_naming_the_file(
    fake_openai: FakeOpenAI, tmp_path: Path, mode: str
) -> None:
    first, second = entry_of(tmp_path, fake_openai, FIRST), entry_of(tmp_path, fake_openai, SECOND)
    swap(first, second)
    with pytest.raises(EntryMismatch) as info:
        ask(client(tmp_path, fake_openai, mode), FIRST)
    message = str(info.value)
    assert str(first) in message and "does not belong to this call" in message and second.stem in message
    assert fake_openai.count == 2  # never silently answered from the other call's entry, nor re-asked


EDITS = {
    "verdict": lambda d: d["response"].update(content=d["response"]["content"].replace("echo", "ECHO")),
    "tokens": lambda d: d["response"].update(tokens=1),
    "request": lambda d: d["messages"][0].update(content="something else"),
    "served model": lambda d: d.update(served_model="gpt-4o"),
    "a new field": lambda d: d.update(note="looks fine to me"),
    "a field removed": lambda d: d.pop("seed"),
    "the digest removed": lambda d: d.pop("digest"),
    "the digest emptied": lambda d: d.update(digest=""),
}


@pytest.mark.parametrize("mode", ["replay", "read-write"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_entry_is_an_error(fake_openai: FakeOpenAI, tmp_path: Path, edit: str, mode: str) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    data = load(path)
    EDITS[edit](data)
    save(path, data)
    with pytest.raises(TamperedEntry) as info:
        ask(client(tmp_path, fake_openai, mode), FIRST)
    message = str(info.value)
    assert message.startswith(f"replay cache entry {path} cannot be trusted: it")
    assert "digest" in message and "--semantictest-llm-cache=write" in message
    assert fake_openai.count == 1  # not answered from it, nor recorded over it
    assert load(path) == data


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("model", "another-model", "it records model 'another-model', the call has 'gpt-4o-mini'"),
        ("messages", SECOND, "it records other messages than the call sends"),
    ],
)
def test_an_edited_request_with_a_recomputed_digest_is_an_error(
    fake_openai: FakeOpenAI, tmp_path: Path, field: str, value: Any, why: str
) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    save(path, sealed({**load(path), field: value}))
    with pytest.raises(EntryMismatch, match=why):
        ask(client(tmp_path, None, "replay"), FIRST)


def test_swapped_entries_with_rewritten_keys_and_digests_are_errors(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    first, second = entry_of(tmp_path, fake_openai, FIRST), entry_of(tmp_path, fake_openai, SECOND)
    data_first, data_second = load(first), load(second)
    save(first, rekeyed(data_second, first))
    save(second, rekeyed(data_first, second))
    for messages, path in ((FIRST, first), (SECOND, second)):
        with pytest.raises(EntryMismatch, match="it records other messages than the call sends") as info:
            ask(client(tmp_path, None, "replay"), messages)
        assert str(path) in str(info.value)


def test_a_copied_entry_is_an_error(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    first, second = entry_of(tmp_path, fake_openai, FIRST), entry_of(tmp_path, fake_openai, SECOND)
    shutil.copyfile(first, second)
    with pytest.raises(
        EntryMismatch, match=f"it records key '{first.stem}', its file name is for key '{second.stem}'"
    ):
        ask(client(tmp_path, None, "replay"), SECOND)
    save(second, rekeyed(load(first), second))
    with pytest.raises(EntryMismatch, match="other messages"):
        ask(client(tmp_path, None, "replay"), SECOND)


@pytest.mark.parametrize("mode", ["replay", "read", "read-write"])
@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "not JSON (Expecting * line *; truncated?)"),
        ("", "not JSON (Expecting value, line 1; truncated?)"),
        ("[1, 2]", "a JSON list, not an object"),
        ('{"key": "k"}', "it has no 'response' object"),
    ],
)
def test_a_truncated_or_corrupt_entry_is_an_error(
    fake_openai: FakeOpenAI, tmp_path: Path, content: str | None, why: str, mode: str
) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2] if content is None else content, encoding="utf-8")
    with pytest.raises(CorruptEntry) as info:
        ask(client(tmp_path, fake_openai, mode), FIRST)
    message = str(info.value)
    assert message.startswith(f"corrupt entry {path}: ")
    assert fnmatch(message, f"corrupt entry {path}: {why}*")
    assert message.endswith("delete it and record it again with --semantictest-llm-cache=write")
    assert fake_openai.count == 1


def test_write_mode_records_over_a_tampered_entry(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST)
    path.write_text("{trunc", encoding="utf-8")
    assert not ask(client(tmp_path, fake_openai, "write"), FIRST).cached
    assert ask(client(tmp_path, None, "replay"), FIRST).content == "echo: first question"


def test_keyed_entries_replay_with_the_key_and_with_the_plain_digest_without_it(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST, key=KEY)
    data = load(path)
    assert set(data) >= {"digest", "keyed_digest"} and KEY not in path.read_text(encoding="utf-8")
    assert ask(client(tmp_path, None, "replay", key=KEY), FIRST).cached
    assert ask(client(tmp_path, None, "replay"), FIRST).cached  # a developer without the key
    keyed = client(tmp_path, None, key=KEY)
    assert KEY not in repr(keyed.config) and KEY not in repr(keyed.cache) and KEY in keyed.config.secrets()


def forged(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "response": {**data["response"], "content": "forged"}}


@pytest.mark.parametrize(
    ("forge", "why"),
    [
        pytest.param(
            lambda d: {**sealed(forged(d)), "keyed_digest": d["keyed_digest"]},
            "its keyed digest does not match (SEMANTICTEST_CACHE_KEY): it was made without the key",
            id="plain-digest-recomputed",
        ),
        pytest.param(
            lambda d: sealed(forged(d), "another-key-0123456789abcdef"),
            "its keyed digest does not match",
            id="another-key",
        ),
        pytest.param(
            lambda d: sealed(forged(d)),
            "it has no keyed digest, and SEMANTICTEST_CACHE_KEY is set",
            id="keyed-digest-removed",
        ),
    ],
)
def test_with_the_key_a_recomputed_digest_is_an_error(
    fake_openai: FakeOpenAI, tmp_path: Path, forge: Any, why: str
) -> None:
    path = entry_of(tmp_path, fake_openai, FIRST, key=KEY)
    entry = forge(load(path))
    save(path, entry)
    assert entry["digest"] == entry_digest(entry)  # the plain digest is right: only the key tells
    with pytest.raises(TamperedEntry, match=re.escape(why)) as info:
        ask(client(tmp_path, None, "replay", key=KEY), FIRST)
    assert KEY not in str(info.value)


def test_an_entry_without_a_keyed_digest_is_an_error_when_the_key_is_set(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    entry_of(tmp_path, fake_openai, FIRST)  # recorded without the key
    with pytest.raises(LLMError, match="it has no keyed digest, and SEMANTICTEST_CACHE_KEY is set"):
        ask(client(tmp_path, None, "replay", key=KEY), FIRST)


def judged(test_id: str, text: str, passed: bool) -> dict[str, Any]:
    """A judged test that must FAIL: ``passed`` is the opposite of what the judge decides for ``text``."""
    return {
        "id": test_id,
        "pipeline": [
            {"block": "MockData", "config": {"data": {"text": text}}, "output": "reply"},
            {
                "block": "LLMJudge",
                "input": {"text": "${reply.text}", "expected": {"expectedBehavior": "Confirms 2 PM"}},
                "output": "judgement",
            },
        ],
        "assertions": {"judgement.passed": passed},
    }


def recorded(pytester: pytest.Pytester, fake_openai: FakeOpenAI, *tests: dict[str, Any]) -> list[Path]:
    fake_openai.rule("cannot help", 0.1, reasoning="It does not confirm anything.")
    pytester.makefile(".json", swap=json.dumps({"name": "swap", "tests": list(tests)}))
    args = ["-p", "no:cacheprovider", f"--semantictest-llm-base-url={fake_openai.url}"]
    pytester.runpytest_inprocess(*args).assert_outcomes(failed=len(tests))
    return sorted((pytester.path / ".semantictest" / "cache").rglob("*.json"))


def replay(pytester: pytest.Pytester) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--semantictest-llm-cache=replay")


def test_swapping_two_entries_does_not_make_failing_tests_pass(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    files = recorded(
        pytester,
        fake_openai,
        judged("bad", "I cannot help with that.", True),
        judged("good", "Booked for 2 PM.", False),
    )
    assert len(files) == 2
    swap(*files)
    result = replay(pytester)
    result.assert_outcomes(errors=2)
    for path in files:
        result.stdout.fnmatch_lines([f"*replay cache entry {path} does not belong to this call*"])
    first, second = (load(p) for p in files)  # swapped: each holds the other's entry
    save(files[0], {k: v for k, v in {**first, "key": files[0].stem}.items() if k != "digest"})
    save(files[1], rekeyed(second, files[1]))  # rewritten keys, the second with a fresh digest too
    result = replay(pytester)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([f"*replay cache entry {files[0]} cannot be trusted: it has no digest*"])
    result.stdout.fnmatch_lines(
        [
            f"*replay cache entry {files[1]} does not belong to this call: it records other "
            "messages than the call sends*"
        ]
    )


def test_an_edited_verdict_is_an_error_not_a_pass(pytester: pytest.Pytester, fake_openai: FakeOpenAI) -> None:
    (path,) = recorded(pytester, fake_openai, judged("bad", "I cannot help with that.", True))
    data = load(path)
    verdict = json.loads(data["response"]["content"])
    assert set(verdict["details"].values()) == {0.1}
    details = {name: 0.95 for name in verdict["details"]}
    data["response"]["content"] = json.dumps({**verdict, "details": details, "reasoning": "Confirms 2 PM."})
    save(path, data)
    result = replay(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*replay cache entry {path} cannot be trusted: its digest does not match what it "
            "records*record it again with --semantictest-llm-cache=write*"
        ]
    )


@pytest.mark.parametrize(("value", "why"), [("", "empty"), ("short-key", "shorter than 16 characters")])
def test_an_empty_or_short_key_is_a_usage_error(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, value: str, why: str
) -> None:
    """An empty key is what CI gives a job that cannot read the secret: never a silent unkeyed run."""
    monkeypatch.setenv("SEMANTICTEST_CACHE_KEY", value)
    pytester.makefile(
        ".json", one=json.dumps({"name": "one", "tests": [judged("t", "Booked for 2 PM.", True)]})
    )
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", f"--semantictest-llm-base-url={fake_openai.url}"
    )
    assert result.ret != 0 and fake_openai.count == 0
    result.stderr.fnmatch_lines(
        [
            f"ERROR: pytest-semantictest: SEMANTICTEST_CACHE_KEY is set but {why}*unset it to check entries by their "
            "sha256 digest alone*"
        ]
    )
    assert value not in result.stdout.str() + result.stderr.str() or not value


def test_a_config_built_in_python_reads_the_key_from_its_environment(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    config = LLMConfig(
        base_url=fake_openai.url, cache_dir=tmp_path / "cache", env={"SEMANTICTEST_CACHE_KEY": KEY}
    )
    assert config.cache_signing_key == KEY and KEY in config.secrets()
    path = tmp_path / "cache" / "judge" / f"{ask(LLMClient(config), FIRST).key}.json"
    assert "keyed_digest" in load(path)
    with pytest.raises(ValueError, match="SEMANTICTEST_CACHE_KEY is set but empty"):
        LLMConfig(env={"SEMANTICTEST_CACHE_KEY": " "})
