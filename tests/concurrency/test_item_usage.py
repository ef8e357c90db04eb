"""Each test's LLM usage is its own while tests run ahead (engine/item_usage.py)."""

from __future__ import annotations

import asyncio

from pytest_semantictest.engine.item_usage import ItemUsage, counted
from pytest_semantictest.llm.usage import Usage


def test_usage_of_items_not_reached_is_left_out_until_they_are() -> None:
    usage = ItemUsage(Usage(calls=2, tokens=10))
    ahead, current = {}, {}  # type: ignore[var-annotated]

    async def calls(n: int) -> None:
        for _ in range(n):
            usage.calls += 1
            usage.tokens += 5
            await asyncio.sleep(0)

    async def both() -> None:
        usage.hide(7, ahead)
        await asyncio.gather(
            asyncio.ensure_future(counted(calls(3), ahead)), asyncio.ensure_future(counted(calls(1), current))
        )

    asyncio.run(both())
    assert (ahead, current) == ({"calls": 3, "tokens": 15}, {"calls": 1, "tokens": 5})
    assert usage.as_dict()["calls"] == 3 and usage.as_dict()["tokens"] == 15  # the running item's only
    usage.reveal(7)  # item 7 reached: its calls count from now on
    assert usage.as_dict()["calls"] == 6
    usage.hide(8, {"calls": 1})
    usage.reveal_all()  # the session's totals count every call made
    assert usage.as_dict()["calls"] == 6
