"""The LLM client through the real openai package against the fake server: retries, faults,
concurrency, cache modes. Nothing here leaves 127.0.0.1 or needs an API key."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.llm.cache import CacheWriteWarning, CorruptEntryWarning, ReplayCache, cache_key
from pytest_semantictest.llm.client import LLMClient, _backoff, _retry_after
from pytest_semantictest.llm.config import LLMConfig
from pytest_semantictest.llm.errors import LLMError, NotConfigured, ReplayMiss
from tests.llm.fake_openai import FakeOpenAI, Reply, status

MESSAGES = [{"role": "user", "content": "Say hello"}]
SECRET = "sk-test-SECRET-0123456789"


def make(server: FakeOpenAI | None, tmp_path: Path, **options: Any) -> LLMClient:
    config = LLMConfig(
        base_url=server.url if server else None,
        api_key=options.pop("api_key", SECRET),
        cache_dir=tmp_path / "cache",
        env={},
        **options,
    )
    return LLMClient(config)


def call(client: LLMClient, *args: Any, **kwargs: Any) -> Any:
    async def go() -> Any:
        try:
            return await client.complete(*args, **kwargs)
        finally:
            await client.aclose()

    return asyncio.run(go())


def entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").rglob("*.json"))


def strict_json(text: str) -> dict:
    value = json.loads(text)
    if not isinstance(value, dict) or "answer" not in value:
        raise ValueError("needs an 'answer' key")
    return value


# --- requests -----------------------------------------------------------------------------


def test_judge_role_pins_temperature_and_seed_and_sends_headers(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    client = make(fake_openai, tmp_path, headers={"X-Team": "qa"})
    done = call(client, "judge", MESSAGES)
    assert done.content == "echo: Say hello" and not done.cached
    body, headers = fake_openai.requests[0]["body"], fake_openai.requests[0]["headers"]
    assert body["temperature"] == 0 and body["seed"] == 42 and body["model"] == "gpt-4o-mini"
    assert headers["x-team"] == "qa" and headers["authorization"] == f"Bearer {SECRET}"
    assert client.usage.calls == 1 and client.usage.tokens == 160


def test_structured_output_requests_a_strict_json_schema(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(content='{"answer": 1}'))
    schema = {"name": "thing", "schema": {"type": "object"}}
    done = call(make(fake_openai, tmp_path), "validator", MESSAGES, schema=schema, parse=strict_json)
    assert done.parsed == {"answer": 1}
    assert fake_openai.bodies()[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "thing", "schema": {"type": "object"}, "strict": True},
    }


def test_per_role_model_and_endpoint(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    from pytest_semantictest.llm.config import RoleSettings

    with FakeOpenAI() as other:
        client = make(
            fake_openai,
            tmp_path,
            roles={"simulator": RoleSettings(model="sim-model", base_url=other.url, api_key_env="SIM_KEY")},
        )
        client.config.env = {"SIM_KEY": "sim-secret-key"}
        call(client, "simulator", MESSAGES)
        call(client, "judge", MESSAGES, model="per-test-model")
        assert [b["model"] for b in other.bodies()] == ["sim-model"]
        assert other.requests[0]["headers"]["authorization"] == "Bearer sim-secret-key"
        assert "temperature" in other.bodies()[0] and "seed" not in other.bodies()[0]
        assert [b["model"] for b in fake_openai.bodies()] == ["per-test-model"]


# --- faults -------------------------------------------------------------------------------


def test_429_then_success_is_retried_and_cached_once(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(status(429), status(503))
    client = make(fake_openai, tmp_path)
    assert call(client, "judge", MESSAGES).content == "echo: Say hello"
    assert fake_openai.count == 3 and client.usage.retries == 2 and client.usage.calls == 3
    assert len(entries(tmp_path)) == 1


def test_persistent_500_is_an_error_after_retries_and_not_cached(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.queue(*[status(500)] * 10)
    client = make(fake_openai, tmp_path, retries=2)
    with pytest.raises(LLMError, match=r"failed after 3 attempt\(s\): HTTP 500"):
        call(client, "judge", MESSAGES)
    assert fake_openai.count == 3 and client.usage.errors == 1
    assert entries(tmp_path) == []


def test_client_errors_are_not_retried(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(status(401, message="bad key"))
    with pytest.raises(LLMError, match="answered HTTP 401: bad key"):
        call(make(fake_openai, tmp_path), "judge", MESSAGES)
    assert fake_openai.count == 1 and entries(tmp_path) == []


def test_timeout_is_an_error_and_not_cached(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(delay=1.0), Reply(delay=1.0))
    client = make(fake_openai, tmp_path, timeout_s=0.2, retries=1)
    start = time.perf_counter()
    with pytest.raises(LLMError, match=r"no answer within 0.2 s \(timeout\)"):
        call(client, "judge", MESSAGES)
    assert time.perf_counter() - start < 2.5
    assert entries(tmp_path) == []


def test_unreachable_endpoint_is_an_error(tmp_path: Path) -> None:
    server = FakeOpenAI().start()
    url = server.url
    server.stop()
    client = LLMClient(
        LLMConfig(base_url=url, api_key=SECRET, cache_dir=tmp_path / "cache", retries=1, env={})
    )
    with pytest.raises(LLMError, match="cannot connect"):
        call(client, "judge", MESSAGES)


def test_malformed_output_is_asked_again_once(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(content="Sure! The answer is 1."), Reply(content='{"answer": 1}'))
    client = make(fake_openai, tmp_path)
    done = call(client, "judge", MESSAGES, parse=strict_json)
    assert done.parsed == {"answer": 1} and fake_openai.count == 2
    reask = fake_openai.bodies()[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "Sure! The answer is 1."}
    assert "could not be used" in reask[-1]["content"]
    # the valid answer is cached under the original request: the next call is a hit
    assert call(make(fake_openai, tmp_path), "judge", MESSAGES, parse=strict_json).cached


def test_malformed_twice_is_an_error_and_not_cached(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(content="{not json"), Reply(content='{"other": 2}'))
    with pytest.raises(LLMError, match="unusable output twice.*needs an 'answer' key"):
        call(make(fake_openai, tmp_path), "judge", MESSAGES, parse=strict_json)
    assert fake_openai.count == 2 and entries(tmp_path) == []


def test_refusal_is_an_error_and_not_cached(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(refusal="I can't evaluate this content."))
    with pytest.raises(LLMError, match="refused to answer: I can't evaluate this content"):
        call(make(fake_openai, tmp_path), "judge", MESSAGES, parse=strict_json)
    assert fake_openai.count == 1 and entries(tmp_path) == []


def test_broken_http_body_is_an_error(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(Reply(body=b"<html>gateway</html>"))
    with pytest.raises(LLMError):
        call(make(fake_openai, tmp_path), "judge", MESSAGES, parse=strict_json)
    assert entries(tmp_path) == []


def test_no_endpoint_configured(tmp_path: Path) -> None:
    client = LLMClient(LLMConfig(cache_dir=tmp_path, env={}))
    with pytest.raises(NotConfigured, match="set OPENAI_API_KEY"):
        call(client, "judge", MESSAGES)


def test_retry_after_headers_and_backoff() -> None:
    assert _retry_after({"retry-after-ms": "250"}) == 0.25
    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert _retry_after({"retry-after": "9999"}) == 30.0
    assert 0.375 <= _backoff(0) <= 0.5 and 1.5 <= _backoff(2) <= 2.0 and _backoff(20) <= 30.0


def test_error_messages_never_contain_the_key(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.queue(status(400, message=f"invalid key {SECRET}"))
    with pytest.raises(LLMError) as info:
        call(make(fake_openai, tmp_path), "judge", MESSAGES)
    assert SECRET not in str(info.value) and "***" in str(info.value)


# --- concurrency --------------------------------------------------------------------------


def run_many(client: LLMClient, n: int) -> None:
    """``n`` concurrent distinct calls (after one warm-up call creates the client)."""

    async def go() -> None:
        await client.complete("judge", [{"role": "user", "content": "warm-up"}])
        await asyncio.gather(
            *(client.complete("judge", [{"role": "user", "content": f"q{i}"}]) for i in range(n))
        )
        await client.aclose()

    asyncio.run(go())


def test_ten_calls_overlap(tmp_path: Path) -> None:
    with FakeOpenAI(delay=0.2) as server:
        run_many(make(server, tmp_path), 10)
        # the server answered all ten at once (bench/bench_judge.py times it)
        assert server.max_in_flight == 10


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    with FakeOpenAI(delay=0.1) as server:
        run_many(make(server, tmp_path, concurrency=2), 6)
        assert server.max_in_flight == 2 and server.count == 7


# --- cache --------------------------------------------------------------------------------


def key(**changes: Any) -> str:
    parts: dict[str, Any] = dict(
        role="judge",
        model="m",
        template="t1",
        messages=MESSAGES,
        temperature=0.0,
        seed=42,
        repeat=0,
        schema=None,
    )
    parts.update(changes)
    return cache_key(**parts)


def test_cache_key_covers_everything_that_shapes_the_answer() -> None:
    base = key()
    assert key() == base
    changed = [
        key(role="simulator"),
        key(model="m2"),
        key(template="t2"),
        key(temperature=0.5),
        key(seed=1),
        key(repeat=1),
        key(schema={"name": "x"}),
        key(messages=[{"role": "user", "content": "Say hello!"}]),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def test_repeat_index_makes_distinct_entries(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    for repeat in (0, 1, 2, 0, 1, 2):
        call(make(fake_openai, tmp_path), "judge", MESSAGES, repeat=repeat)
    assert fake_openai.count == 3 and len(entries(tmp_path)) == 3


@pytest.mark.parametrize(
    ("mode", "network_calls", "files"),
    [("off", 2, 0), ("read", 2, 0), ("write", 2, 1), ("read-write", 1, 1)],
)
def test_cache_modes(
    fake_openai: FakeOpenAI, tmp_path: Path, mode: str, network_calls: int, files: int
) -> None:
    for _ in range(2):
        call(make(fake_openai, tmp_path, cache_mode=mode), "judge", MESSAGES)
    assert fake_openai.count == network_calls and len(entries(tmp_path)) == files


def test_read_mode_uses_recorded_entries(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    call(make(fake_openai, tmp_path), "judge", MESSAGES)
    client = make(fake_openai, tmp_path, cache_mode="read")
    assert call(client, "judge", MESSAGES).cached and fake_openai.count == 1 and client.usage.cache_hits == 1


def test_replay_hits_without_any_endpoint_and_misses_with_a_clear_error(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    call(make(fake_openai, tmp_path), "judge", MESSAGES)
    offline = LLMClient(LLMConfig(cache_dir=tmp_path / "cache", cache_mode="replay", env={}))
    assert offline.config.configured("judge")
    assert call(offline, "judge", MESSAGES).content == "echo: Say hello"
    with pytest.raises(ReplayMiss) as info:
        call(offline, "judge", [{"role": "user", "content": "never recorded"}])
    message = str(info.value)
    assert "replay cache miss" in message and "--semantictest-llm-cache=read-write" in message
    assert any(path.stem in message for path in [Path(message.split("no entry ")[1].split(". Record")[0])])
    assert fake_openai.count == 1


def test_an_unusable_answer_is_recorded_again_in_read_write_and_an_error_in_replay(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """A sound entry (its digest matches) whose answer the role's parser rejects, as after a change of
    the parser: not tampering, so ``read-write`` asks again; ``replay`` cannot."""
    fake_openai.queue(Reply(content="not json"))
    call(make(fake_openai, tmp_path), "judge", MESSAGES, parse=lambda t: t)
    (path,) = entries(tmp_path)
    data = json.loads(path.read_text())
    fake_openai.queue(Reply(content='{"answer": 3}'))
    with pytest.warns(CorruptEntryWarning, match="not a usable answer .*; recording it again"):
        assert call(make(fake_openai, tmp_path), "judge", MESSAGES, parse=strict_json).parsed == {"answer": 3}
    path.write_text(json.dumps(data))
    replay = make(None, tmp_path, cache_mode="replay")
    with pytest.raises(LLMError, match="not a usable answer"):
        call(replay, "judge", MESSAGES, parse=strict_json)


def test_entries_are_written_atomically_and_hold_no_secret(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    client = make(fake_openai, tmp_path, headers={"api-key": "header-secret-value"})

    async def go() -> None:
        await asyncio.gather(
            *(client.complete("judge", [{"role": "user", "content": f"q{i}"}]) for i in range(20))
        )
        await client.aclose()

    asyncio.run(go())
    files = list((tmp_path / "cache").rglob("*"))
    assert len([f for f in files if f.suffix == ".json"]) == 20
    assert not [f for f in files if f.name.endswith(".tmp")]
    for f in files:
        if f.is_file():
            text = f.read_text()
            assert SECRET not in text and "header-secret-value" not in text
            assert json.loads(text)["response"]["content"].startswith("echo: q")


def test_unwritable_cache_never_fails_a_call(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the directory should be")
    with pytest.warns(CacheWriteWarning, match=r"cache entry .*cannot be written.*not recorded"):
        assert call(make(fake_openai, tmp_path), "judge", MESSAGES).content == "echo: Say hello"


def test_unknown_cache_mode_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not one of off, read, write, read-write, replay"):
        ReplayCache(tmp_path, "readwrite")


def test_the_openai_import_pauses_garbage_collection_and_restores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``import_paused`` (openai's first import): collection is off during the import only, and comes
    back as it was, also when it was off or the import fails."""
    import gc

    from pytest_semantictest.llm.client import import_paused

    (tmp_path / "paused_probe.py").write_text("import gc\nENABLED = gc.isenabled()\n")
    (tmp_path / "paused_broken.py").write_text("raise ImportError('broken on purpose')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert gc.isenabled()
    import_paused("paused_probe")
    assert gc.isenabled() and sys.modules["paused_probe"].ENABLED is False
    with pytest.raises(ImportError, match="broken on purpose"):
        import_paused("paused_broken")
    assert gc.isenabled()
    gc.disable()
    try:
        sys.modules.pop("paused_probe")
        import_paused("paused_probe")
        assert not gc.isenabled()
    finally:
        gc.enable()
        for name in ("paused_probe", "paused_broken"):
            sys.modules.pop(name, None)


def test_a_prompt_never_carries_a_secret_to_the_model(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """A secret the prompt quotes (a reply being judged that leaked the API key) reaches the model as ``***``."""
    client = make(fake_openai, tmp_path)
    done = call(client, "judge", [{"role": "user", "content": f"The reply says {json.dumps(SECRET)[1:-1]}!"}])
    assert done.content == "echo: The reply says ***!"
    assert SECRET not in json.dumps(fake_openai.bodies())
