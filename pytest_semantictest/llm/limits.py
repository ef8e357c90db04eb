"""One rate limit and one budget for a whole run, shared by every process of it (the xdist workers).

The processes share one small JSON state file in a folder the run makes (the xdist controller makes
it and hands it to its workers, as it does the agent folder), read and written under an exclusive
``fcntl.flock`` lock: no process has to ask the controller (execnet has no channel back to it
during a run), a crashed worker's requests in flight are dropped (its pid is gone) and the lock is
held only for a read and a write. Per bucket (an endpoint and a model) the file holds when each
request of the last window was sent, the tokens answered in it, the requests in flight and a pause
(a 429's ``Retry-After``, which then holds for every process); for the run, the tokens and money
spent.

A request waits until its bucket is under every limit: ``rpm`` requests sent in the last
``window_s`` seconds (a request counts from when it was admitted until it is done, and from then
for the window: the provider may have seen it arrive at any time in between), ``tpm`` tokens answered in it (a request's tokens are known only once it is
answered: the limit holds for the tokens counted so far), ``in_flight`` requests at once. The
budget admits a request only while what is spent, plus what the requests in flight are expected to
cost, plus this one's expected cost (the bucket's largest answer so far, else the run's), stays within
it; the run's first request goes alone. Once no request fits, every further call raises
:class:`BudgetSpent`: its check is an ERROR saying so, never a pass.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..files import read_json, write_atomic
from ..json_types import JSONValue
from .errors import LLMError

STATE = "llm-limits.json"
POLL_S = 0.05
SHOWN_S = 0.5
"""A wait longer than this is shown while it lasts (the ``waiting`` callback of :class:`SharedLimiter`)."""


class BudgetSpent(LLMError):
    """The run's LLM budget (``--semantictest-llm-budget``) is spent: no further call is sent."""


@dataclass(frozen=True)
class Price:
    """Money per million prompt (input) and completion (output) tokens."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1_000_000


@dataclass(frozen=True)
class Limits:
    """The run's limits (0: none) and budget (None: none); ``prices`` by model."""

    rpm: int = 0
    tpm: int = 0
    in_flight: int = 0
    window_s: float = 60.0
    budget_tokens: int | None = None
    budget_money: float | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(
            self.rpm
            or self.tpm
            or self.in_flight
            or self.budget_tokens is not None
            or self.budget_money is not None
        )

    def price(self, model: str) -> Price | None:
        return self.prices.get(model)


def parse_budget(text: str) -> tuple[int | None, float | None]:
    """``"50000"`` (tokens) or ``"$2.50"``, ``"2.50$"``, ``"2.50 USD"`` (money) -> (tokens, money);
    raises ValueError saying what is expected."""
    raw = text.strip()
    money = raw.startswith("$") or raw.endswith("$") or raw.upper().endswith("USD")
    number = raw.strip("$").removesuffix("USD").removesuffix("usd").strip()
    try:
        value = float(number) if money else int(number)
    except ValueError:
        raise ValueError(
            f"LLM budget {text!r} is neither a number of tokens (50000) nor money ($2.50)"
        ) from None
    if value <= 0:
        raise ValueError(f"LLM budget {text!r} must be more than 0")
    return (None, float(value)) if money else (int(value), None)


def parse_prices(lines: list[str]) -> dict[str, Price]:
    """``["gpt-4o-mini=0.15/0.60", ...]`` (money per million input/output tokens) -> prices by model."""
    prices: dict[str, Price] = {}
    for line in lines:
        model, sep, pair = line.strip().rpartition("=")
        prompt, slash, completion = pair.partition("/")
        try:
            if not sep or not model.strip() or not slash:
                raise ValueError
            prices[model.strip()] = Price(float(prompt), float(completion))
        except ValueError:
            raise ValueError(
                f"LLM price {line.strip()!r} must look like 'MODEL=INPUT/OUTPUT' (money per million "
                "input and output tokens, e.g. gpt-4o-mini=0.15/0.60)"
            ) from None
    return prices


class SharedLimiter:
    """The limits of :class:`Limits`, held for every process that shares ``folder``; ``waited``
    is told how long each wait was and why (the usage counters), ``waiting`` once a wait lasts or is
    expected to last over :data:`SHOWN_S` (the seconds still expected and why: the progress line)."""

    def __init__(
        self,
        limits: Limits,
        folder: Path,
        waited: Callable[[float, str], None] | None = None,
        waiting: Callable[[float, str], None] | None = None,
    ) -> None:
        self.limits = limits
        self.path = folder / STATE
        self._lock_path = folder / (STATE + ".lock")
        self._waited = waited
        self._waiting = waiting

    @contextmanager
    def _state(self) -> Iterator[dict[str, JSONValue]]:
        with self._lock_path.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                try:
                    found = read_json(self.path) if self.path.stat().st_size else {}
                    state = found if isinstance(found, dict) else {}
                except FileNotFoundError:
                    state = {}
                state.setdefault("buckets", {})
                state.setdefault("flights", {})
                state.setdefault("spent", {"tokens": 0, "money": 0.0, "models": {}})
                yield state
                write_atomic(self.path, json.dumps(state))
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    async def acquire(self, bucket: str, model: str) -> str:
        """Wait until a request to ``bucket`` fits the limits; its flight id (give it to :meth:`release`).
        Raises :class:`BudgetSpent` once the budget admits no further request."""
        import asyncio  # here: validating the options at configure (a collect-only run) needs no asyncio

        started, why, shown = time.monotonic(), "", False
        while True:
            with self._state() as state:
                now = time.time()
                _prune(state, now, self.limits.window_s)
                wait, why_now = self._admit(state, bucket, model, now)
                if wait is None:
                    flight = uuid.uuid4().hex
                    slot = state["buckets"].setdefault(bucket, _new_bucket())
                    slot["sent"].append([now, flight])
                    state["flights"][flight] = [os.getpid(), bucket, *_expected(state, slot)]
                    break
            why = why or why_now
            if self._waiting is not None and not shown and max(wait, time.monotonic() - started) >= SHOWN_S:
                shown = True
                self._waiting(wait, why_now)
            await asyncio.sleep(max(POLL_S, min(wait, 1.0)))
        if why and self._waited is not None:
            self._waited(time.monotonic() - started, why)
        return flight

    def _admit(
        self, state: dict[str, JSONValue], bucket: str, model: str, now: float
    ) -> tuple[float | None, str]:
        """None when the request may go now, else (seconds to wait, why)."""
        slot = state["buckets"].get(bucket) or _new_bucket()
        flights = [f for f in state["flights"].values() if f[1] == bucket]
        held = self._rate_wait(slot, len(flights), model, now)
        if held is not None:
            return held
        return self._fits_budget(state, slot, bool(flights), model)

    def _rate_wait(
        self, slot: dict[str, JSONValue], flights: int, model: str, now: float
    ) -> tuple[float, str] | None:
        """(seconds to wait, why) while the bucket's pause or a rate limit holds the request; else None."""
        limits = self.limits
        if slot["paused_until"] > now:
            return slot["paused_until"] - now, f"the provider asked to wait (Retry-After) for {model}"
        if limits.rpm and len(slot["sent"]) >= limits.rpm:
            # (a request still in flight holds its slot past its window: poll until it is done)
            oldest = min(t for t, _ in slot["sent"])
            wait = max(POLL_S, oldest + limits.window_s - now)
            return wait, f"{limits.rpm} requests per {limits.window_s:g} s to {model}"
        if limits.tpm and sum(n for _, n in slot["tokens"]) >= limits.tpm:
            return slot["tokens"][0][
                0
            ] + limits.window_s - now, f"{limits.tpm} tokens per {limits.window_s:g} s to {model}"
        if limits.in_flight and flights >= limits.in_flight:
            return POLL_S, f"{limits.in_flight} requests in flight to {model}"
        return None

    def _fits_budget(
        self, state: dict[str, JSONValue], slot: dict[str, JSONValue], busy: bool, model: str
    ) -> tuple[float | None, str]:
        limits, spent = self.limits, state["spent"]
        if limits.budget_tokens is None and limits.budget_money is None:
            return None, ""
        if limits.budget_money is not None and limits.price(model) is None:
            raise BudgetSpent(
                f"no price for the model {model!r}, so the money budget cannot be kept: add it to "
                "--semantictest-llm-price (MODEL=INPUT/OUTPUT per million tokens)"
            )
        reserved = [(f[2], f[3]) for f in state["flights"].values()]
        expected_tokens, expected_money = _expected(state, slot)
        if not slot["answered"] and busy:
            return POLL_S, f"the LLM budget (the first answer of {model} tells its cost)"
        return self._within_budgets(spent, reserved, expected_tokens, expected_money)

    def _within_budgets(
        self,
        spent: dict[str, JSONValue],
        reserved: list[tuple[JSONValue, JSONValue]],
        expected_tokens: float,
        expected_money: float,
    ) -> tuple[float | None, str]:
        """(None, "") when this request's expected cost fits each budget beside what is spent and
        reserved; a wait while requests in flight may cost less than expected; else :class:`BudgetSpent`."""
        limits = self.limits
        for budget, used, ahead, this in (
            (limits.budget_tokens, spent["tokens"], sum(t for t, _ in reserved), expected_tokens),
            (limits.budget_money, spent["money"], sum(m for _, m in reserved), expected_money),
        ):
            if budget is None:
                continue
            if used + ahead + this > budget or used >= budget:
                if reserved:  # a request in flight may cost less than expected
                    return POLL_S, "the LLM budget (requests in flight)"
                raise BudgetSpent(_spent_message(limits, spent))
        return None, ""

    def release(self, flight: str, model: str, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        """A request is done (answered or not): its tokens count against the limits and the budget."""
        with self._state() as state:
            entry = state["flights"].pop(flight, None)
            bucket = entry[1] if entry else None
            tokens = prompt_tokens + completion_tokens
            price = self.limits.price(model)
            money = price.cost(prompt_tokens, completion_tokens) if price else 0.0
            spent = state["spent"]
            spent["tokens"] += tokens
            spent["money"] += money
            slot = state["buckets"].setdefault(bucket, _new_bucket()) if bucket is not None else None
            for sent in slot["sent"] if slot is not None else ():
                if sent[1] == flight:  # it counts from when it was done: it reached the provider by then
                    sent[0] = time.time()
            if slot is not None and tokens:
                slot["tokens"].append([time.time(), tokens])
                slot["answered"] = True
                slot["largest"] = [max(slot["largest"][0], tokens), max(slot["largest"][1], money)]

    def pause(self, bucket: str, seconds: float) -> None:
        """A 429's ``Retry-After``: no process sends to ``bucket`` for ``seconds``."""
        with self._state() as state:
            slot = state["buckets"].setdefault(bucket, _new_bucket())
            slot["paused_until"] = max(slot["paused_until"], time.time() + seconds)

    def spent(self) -> dict[str, JSONValue]:
        """What the run spent so far: ``{"tokens", "money"}``."""
        with self._state() as state:
            return dict(state["spent"])


def _new_bucket() -> dict[str, JSONValue]:
    return {"sent": [], "tokens": [], "paused_until": 0.0, "largest": [0, 0.0], "answered": False}


def _expected(state: dict[str, JSONValue], slot: dict[str, JSONValue]) -> list[float]:
    """What a request is expected to cost: [tokens, money] of its bucket's largest answer, else the run's."""
    if slot["answered"]:
        return list(slot["largest"])
    return [max((b["largest"][i] for b in state["buckets"].values()), default=0) for i in (0, 1)]


def _prune(state: dict[str, JSONValue], now: float, window_s: float) -> None:
    """Forget what left the window, and the flights of processes that are gone. A request still in
    flight stays in its window however long ago it was admitted: it counts until it is done, and from
    then for the window (:meth:`SharedLimiter.release`), so a slow answer never frees its slot early."""
    state["flights"] = {k: f for k, f in state["flights"].items() if _alive(int(f[0]))}
    flying = state["flights"]
    for slot in state["buckets"].values():
        slot["sent"] = [e for e in slot["sent"] if e[0] > now - window_s or e[1] in flying]
        slot["tokens"] = [e for e in slot["tokens"] if e[0] > now - window_s]


def _alive(pid: int) -> bool:
    """Whether the process that sent a request in flight still runs (a crashed worker's are dropped)."""
    if pid == os.getpid():
        return True
    try:
        with contextlib.suppress(PermissionError):  # another user's process: it exists
            os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _spent_message(limits: Limits, spent: Mapping[str, JSONValue]) -> str:
    if limits.budget_tokens is not None:
        what = f"{spent['tokens']} of {limits.budget_tokens} tokens spent"
    else:
        what = f"${spent['money']:.4f} of ${limits.budget_money:g} spent"
    return (
        f"LLM budget spent ({what}; --semantictest-llm-budget): not judged, no further LLM call is sent "
        "in this run"
    )
