"""What the ``llm_judge`` and ``llm_client`` fixtures return (plugin.py only wires them up)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypedDict, TypeVar, Unpack

import pytest

from ..json_types import JSONValue
from ..run_context import llm_unavailable
from .client import CompleteOptions, Completion, LLMClient, Parsed
from .errors import LLMError, NotConfigured
from .usage import Usage

if TYPE_CHECKING:
    from .judge import Judge

T = TypeVar("T")


class JudgeOptions(TypedDict, total=False):
    """The keyword arguments of the ``llm_judge`` fixture's methods (:meth:`JudgeFixture.aevaluate`'s)."""

    constraints: Sequence[str]
    threshold: float
    criteria: Mapping[str, float] | None
    history: Sequence[JSONValue]
    tool_calls: JSONValue
    model: str | None
    repeat: int


class Run(Protocol):
    """Runs a coroutine to its end on the session's event loop (``plugin.Runtime.run``)."""

    def __call__(self, coro: Coroutine[object, None, T], /) -> T: ...


class JudgeFixture:
    """``llm_judge.check(text, "expected behaviour", constraints=[...], threshold=0.8)``.

    A verdict below the threshold (or a violated constraint) fails the test with the judge's score
    and reasoning. An infrastructure failure raises :class:`LLMError` (never a verdict). Without a
    configured judge ``check`` skips the test; under ``--semantictest-require-judge`` the fixture
    itself fails to set up (an ERROR).
    Use ``await llm_judge.acheck(...)`` in async tests; ``evaluate``/``aevaluate`` return the
    verdict without asserting.
    """

    def __init__(self, judge: Judge | None, run: Run, require: bool = False) -> None:
        missing = llm_unavailable("judge", configured=judge is not None, require=require)
        if missing is not None and missing.error:  # raised while the fixture is set up: the test is an ERROR
            raise NotConfigured(str(missing))
        self._judge = judge
        self._run = run
        self._require = require

    def check(
        self, text: JSONValue, expected_behavior: str, **options: Unpack[JudgeOptions]
    ) -> dict[str, JSONValue]:
        __tracebackhide__ = True
        return _assert_passed(self._run(self.aevaluate(text, expected_behavior, **options)), self._judge)

    async def acheck(
        self, text: JSONValue, expected_behavior: str, **options: Unpack[JudgeOptions]
    ) -> dict[str, JSONValue]:
        __tracebackhide__ = True
        return _assert_passed(await self.aevaluate(text, expected_behavior, **options), self._judge)

    def evaluate(
        self, text: JSONValue, expected_behavior: str, **options: Unpack[JudgeOptions]
    ) -> dict[str, JSONValue]:
        __tracebackhide__ = True
        return self._run(self.aevaluate(text, expected_behavior, **options))

    async def aevaluate(
        self,
        text: JSONValue,
        expected_behavior: str,
        *,
        constraints: Sequence[str] = (),
        threshold: float = 0.7,
        criteria: Mapping[str, float] | None = None,
        history: Sequence[JSONValue] = (),
        tool_calls: JSONValue = None,
        model: str | None = None,
        repeat: int = 0,
    ) -> dict[str, JSONValue]:
        """The verdict dict (same keys as the LLMJudge block's output)."""
        __tracebackhide__ = True
        from .judge import request_from_args

        request = request_from_args(
            text,
            expected_behavior,
            constraints=constraints,
            threshold=threshold,
            criteria=criteria,
            history=history,
            tool_calls=tool_calls,
            model=model,
        )
        if self._judge is None:
            pytest.skip(str(llm_unavailable("judge", configured=False, require=False)))
        return await self._judge.judge(request, repeat=repeat)


def _assert_passed(verdict: dict[str, JSONValue], judge: Judge | None) -> dict[str, JSONValue]:
    """Fail the test with the judge's reasoning (secrets masked: it may quote the text) unless it passed."""
    __tracebackhide__ = True
    if not verdict["passed"]:
        from .verdict import judge_lines

        text = "LLM judge: the response does not meet the expected behaviour\n" + "\n".join(
            "  " + line for line in judge_lines(verdict)
        )
        client: LLMClient | None = getattr(judge, "client", None)
        pytest.fail(client.redactor.text(text) if client is not None else text, pytrace=False)
    return verdict


class ClientFixture:
    """``llm_client.complete("simulator", messages)`` (sync) or ``await llm_client.acomplete(...)``.

    Goes through the replay cache, retries and concurrency bound like every other LLM call;
    ``.usage`` has the session's counters, ``.client`` the underlying :class:`LLMClient`.
    """

    def __init__(self, client: LLMClient, run: Run) -> None:
        self.client = client
        self._run = run

    @property
    def usage(self) -> Usage:
        return self.client.usage

    def complete(
        self,
        role: str,
        messages: list[dict[str, JSONValue]],
        *,
        parse: Callable[[str], Parsed] | None = None,
        **options: Unpack[CompleteOptions],
    ) -> Completion[Parsed]:
        __tracebackhide__ = True
        return self._run(self.client.complete(role, messages, parse=parse, **options))

    async def acomplete(
        self,
        role: str,
        messages: list[dict[str, JSONValue]],
        *,
        parse: Callable[[str], Parsed] | None = None,
        **options: Unpack[CompleteOptions],
    ) -> Completion[Parsed]:
        __tracebackhide__ = True
        return await self.client.complete(role, messages, parse=parse, **options)


__all__ = ["ClientFixture", "JudgeFixture", "LLMError"]
