"""A judged check sampled several times: one verdict from N answers, and how much they disagree.

Each sample is its own call and its own cache entry (``sample`` in the key). Pass/fail verdicts take
the majority (a tie does not pass); scores take the mean. A check whose samples do not all agree on
pass/fail is *unstable*: the reports list it, and ``--semantictest-fail-unstable`` fails it.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..json_types import JSONValue

T = TypeVar("T")

MAX_SAMPLES = 50


@dataclass(frozen=True, slots=True)
class Sampled:
    """What N samples of one check said: how many passed, their scores, where they came from."""

    passed: int
    total: int
    scores: tuple[float, ...] = ()
    replayed: int = 0
    """Samples answered from the replay cache (the others were live calls)."""
    split: bool = False
    """The samples disagreed on a part of the verdict (one assertion of several) even where they
    agree on the whole."""

    @property
    def majority(self) -> bool:
        return self.passed * 2 > self.total

    @property
    def unstable(self) -> bool:
        return self.split or 0 < self.passed < self.total

    def as_dict(self) -> dict[str, JSONValue]:
        data: dict[str, JSONValue] = {
            "n": self.total,
            "passed": self.passed,
            "unstable": self.unstable,
            "live": self.total - self.replayed,
            "replayed": self.replayed,
        }
        if self.scores:
            data.update(
                scores=list(self.scores),
                min=min(self.scores),
                max=max(self.scores),
                sd=round(statistics.pstdev(self.scores), 4),
            )
        return data

    def describe(self) -> str:
        """``3/5 samples passed (scores 0.40-0.90)``."""
        spread = f" (scores {min(self.scores):.2f}-{max(self.scores):.2f})" if self.scores else ""
        return f"{self.passed}/{self.total} samples passed{spread}"


async def sample(call: Callable[[int], Awaitable[T]], samples: int) -> list[T]:
    """``call(i)`` for every sample ``i`` at once (the client bounds what is in flight)."""
    return list(await asyncio.gather(*(call(i) for i in range(samples))))


def combine_judge(
    outputs: Sequence[dict[str, JSONValue]], replayed: int, fail_unstable: bool
) -> dict[str, JSONValue]:
    """One LLMJudge output from several: the mean score and criteria, the majority's verdict (and the
    mean must reach the threshold too), the reasoning of the sample nearest the mean."""
    scores = [float(o["score"]) for o in outputs]
    mean = round(statistics.fmean(scores), 4)
    said = Sampled(sum(1 for o in outputs if o["passed"]), len(outputs), tuple(scores), replayed)
    nearest = min(outputs, key=lambda o: abs(float(o["score"]) - mean))
    details = {
        name: round(statistics.fmean(float(o["details"][name]) for o in outputs), 4)
        for name in nearest.get("details", {})
    }
    passed = said.majority and mean >= float(nearest["threshold"]) and not (fail_unstable and said.unstable)
    reasoning = nearest.get("reasoning", "")
    if said.unstable:
        reasoning = f"[unstable judgement: {said.describe()}] {reasoning}"
    return {
        **nearest,
        "score": mean,
        "details": details,
        "passed": passed,
        "reasoning": reasoning,
        "samples": said.as_dict(),
    }
