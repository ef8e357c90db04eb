"""A block's timeout is a deadline for the whole exchange (connect to last byte), against real
loopback servers that answer slowly on purpose (tests/servers/slow_server.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.agents.chat import send_chat, target_from_mapping
from pytest_semantictest.agents.errors import AgentError
from pytest_semantictest.blocks.chat_request import ChatRequest
from pytest_semantictest.blocks.http_request import HttpRequest
from pytest_semantictest.model import Outcome
from pytest_semantictest.run_context import RunContext
from tests.helpers import run_one, step_context
from tests.servers.slow_server import slow_server

TIMEOUT_MS = 600
"""Above every gap between two pieces of a slow reply (0.2 s, 0.4 s): only a deadline for the whole
exchange ends it, a per-read timeout never would (the replies last 8 s or more)."""
SLACK_S = 1.5


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with slow_server() as url:
        yield url


async def _run(block: Any) -> tuple[dict[str, Any] | str, float]:
    session = RunContext()
    start = time.perf_counter()
    try:
        try:
            out: dict[str, Any] | str = await block.process({}, step_context(session))
        except Exception as exc:  # the block's error, as run_step would record it  # noqa: BLE001
            out = str(exc)
    finally:
        await session.aclose_http()
    return out, time.perf_counter() - start


@pytest.mark.parametrize(
    "path", ["/drip?bytes=40&every=0.2", "/drip?bytes=40&size=1000&every=0.2", "/sse?chunks=30&every=0.4"]
)
def test_http_request_timeout_bounds_a_slow_reply(base: str, path: str) -> None:
    out, took = asyncio.run(_run(HttpRequest({"url": base + path, "timeout": TIMEOUT_MS})))
    assert took < TIMEOUT_MS / 1000 + SLACK_S, took
    assert isinstance(out, str), out
    assert f"timed out after {TIMEOUT_MS} ms while reading the response body" in out
    assert "bytes received" in out and "connect to last byte" in out and base in out


def test_chat_request_timeout_bounds_a_slow_stream(base: str) -> None:
    block = ChatRequest(
        {
            "method": "POST",
            "url": base + "/sse?chunks=30&every=0.4",
            "timeout": TIMEOUT_MS,
            "body": {"stream": True},
        }
    )
    out, took = asyncio.run(_run(block))
    assert took < TIMEOUT_MS / 1000 + SLACK_S, took
    assert isinstance(out, str) and f"timed out after {TIMEOUT_MS} ms" in out, out


def test_chat_request_disconnect_read_is_bounded(base: str) -> None:
    block = ChatRequest(
        {
            "method": "POST",
            "url": base + "/sse?chunks=30&every=0.4",
            "timeout": TIMEOUT_MS,
            "disconnect_after": 20,
            "body": {"stream": True},
        }
    )
    out, took = asyncio.run(_run(block))
    assert took < TIMEOUT_MS / 1000 + SLACK_S, took
    assert isinstance(out, str) and "while reading the stream (waiting for chunk 20)" in out, out


def test_a_fast_reply_is_unchanged(base: str) -> None:
    out, took = asyncio.run(_run(HttpRequest({"url": base + "/fast", "timeout": TIMEOUT_MS})))
    assert isinstance(out, dict) and out["status"] == 200 and out["body"] == '{"ok": true}'


def test_in_a_suite_the_slow_step_fails_at_the_deadline(base: str) -> None:
    start = time.perf_counter()
    verdict = run_one(
        [
            {
                "block": "HttpRequest",
                "input": {"url": base + "/drip?bytes=40&every=0.2"},
                "config": {"timeout": TIMEOUT_MS},
                "output": "r",
            }
        ],
        {"r.status": 200},
    )
    assert time.perf_counter() - start < TIMEOUT_MS / 1000 + SLACK_S
    assert verdict.outcome is Outcome.FAILED
    assert f"timed out after {TIMEOUT_MS} ms" in verdict.trace[0].error


def test_agent_exchange_is_bounded(base: str, tmp_path: Path) -> None:
    target = target_from_mapping(
        {"endpoint": base + "/drip?bytes=40&every=0.2", "timeout": TIMEOUT_MS}, cwd=tmp_path
    )

    async def go() -> None:
        session = RunContext()
        ctx = step_context(session)
        try:
            await send_chat(ctx, target, [{"role": "user", "content": "hi"}], {})
        finally:
            await session.aclose_http()

    start = time.perf_counter()
    with pytest.raises(AgentError, match="timeout"):
        asyncio.run(go())
    assert time.perf_counter() - start < TIMEOUT_MS / 1000 + SLACK_S


def test_llm_timeout_bounds_a_dripping_answer(base: str, tmp_path: Path) -> None:
    from pytest_semantictest.llm.client import LLMClient
    from pytest_semantictest.llm.config import LLMConfig
    from pytest_semantictest.llm.errors import LLMError

    client = LLMClient(
        LLMConfig(
            base_url=base + "/drip-json",
            api_key="k",
            cache_dir=tmp_path,
            env={},
            timeout_s=TIMEOUT_MS / 1000,
            retries=0,
        )
    )

    async def go() -> None:
        try:
            await client.complete("judge", [{"role": "user", "content": "hi"}])
        finally:
            await client.aclose()

    start = time.perf_counter()
    with pytest.raises(LLMError, match=rf"no answer within {TIMEOUT_MS / 1000:g} s \(timeout\)"):
        asyncio.run(go())
    assert time.perf_counter() - start < TIMEOUT_MS / 1000 + SLACK_S
