"""``llm/limits.SharedLimiter`` on its own: what two processes' shared state file does."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_semantictest.llm.limits import BudgetSpent, Limits, SharedLimiter, _prune


def test_a_gone_process_requests_in_flight_are_dropped(tmp_path: Path) -> None:
    limiter = SharedLimiter(Limits(in_flight=1), tmp_path)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    asyncio.run(limiter.acquire("b", "m"))  # ours, never released
    state = json.loads(limiter.path.read_text())
    (flight,) = state["flights"]
    state["flights"][flight][0] = int(gone.stdout)  # as if a worker that crashed had sent it
    limiter.path.write_text(json.dumps(state))
    # admitted at once: the crashed one is dropped
    asyncio.run(asyncio.wait_for(limiter.acquire("b", "m"), 2))


def test_the_budget_admits_what_it_can_pay_for(tmp_path: Path) -> None:
    limiter = SharedLimiter(Limits(budget_tokens=25), tmp_path)

    async def run() -> int:
        answered = 0
        for _ in range(5):
            try:
                flight = await limiter.acquire("b", "m")
            except BudgetSpent as exc:
                assert "20 of 25 tokens spent" in str(exc)
                return answered
            limiter.release(flight, "m", 8, 2)
            answered += 1
        return answered

    assert asyncio.run(run()) == 2  # a third answer of 10 would make 30
    with pytest.raises(BudgetSpent):
        asyncio.run(limiter.acquire("other", "m"))  # the budget is the run's, every bucket's


def test_a_request_in_flight_holds_its_slot_past_the_window(tmp_path: Path) -> None:
    """A slow answer keeps counting until it is done: admitted a minute ago (longer than the window)
    and still in flight, it leaves no room for another request; once done, it counts one more window
    from its end and then frees the slot."""
    limiter = SharedLimiter(Limits(rpm=1, window_s=1.0), tmp_path)
    flight = asyncio.run(limiter.acquire("b", "m"))
    state = json.loads(limiter.path.read_text())
    state["buckets"]["b"]["sent"][0][0] -= 60  # as if admitted a minute ago, no answer yet
    limiter.path.write_text(json.dumps(state))
    with limiter._state() as held:
        now = time.time()
        _prune(held, now, 1.0)
        wait, why = limiter._admit(held, "b", "m", now)
    assert wait is not None and why == "1 requests per 1 s to m"
    limiter.release(flight, "m")
    with limiter._state() as held:
        assert limiter._admit(held, "b", "m", time.time())[0] is not None  # done just now: one window more
        later = time.time() + 1.5
        _prune(held, later, 1.0)
        assert limiter._admit(held, "b", "m", later)[0] is None
