"""SemanticTest path assertions: a DataBus path, an operator and an expected value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.databus import MISSING, split_path
from ..model import CheckResult, Failure
from .operators import apply


@dataclass(slots=True)
class PathCheck:
    """``"user.age": {"gt": 30}`` -> PathCheck("user.age", "gt", 30)."""

    path: str
    operator: str
    expected: Any
    line: int | None = None
    plain: bool = False

    @property
    def reads(self) -> frozenset[str]:
        parts = split_path(self.path)
        return frozenset([parts[0]]) if parts and isinstance(parts[0], str) else frozenset()

    def describe(self) -> str:
        if self.plain:
            return f"{self.path} == {self.expected!r}"
        return f"{self.path} {self.operator} {self.expected!r}"

    async def evaluate(self, bus: Any, ctx: Any) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: Any) -> CheckResult:
        actual = bus.get(self.path)
        if self.plain and self.expected is None and (actual is None or actual is MISSING):
            return CheckResult()
        message = apply(self.operator, actual, self.expected)
        if message is None:
            return CheckResult()
        return CheckResult(
            failures=[
                Failure(
                    check=self.path,
                    message=message,
                    expected=self.expected,
                    actual=actual,
                    operator=self.operator,
                    line=self.line,
                )
            ]
        )
