"""SemanticTest path assertions: a DataBus path, an operator and an expected value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..json_types import JSONValue
from ..model import CheckResult, Failure
from ..paths import MISSING, split_path
from .operators import apply

if TYPE_CHECKING:
    from ..databus import DataBus
    from .run import CheckRun


@dataclass(slots=True)
class PathCheck:
    """``"user.age": {"gt": 30}`` -> PathCheck("user.age", "gt", 30)."""

    path: str
    operator: str
    expected: JSONValue
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

    async def evaluate(self, bus: DataBus, ctx: CheckRun) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
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
                    cause=_why(bus, self.path),
                )
            ]
        )


def _why(bus: DataBus, path: str) -> str | None:
    """For ``tools.passed`` or ``content.score``: the validating block's own failure messages, as the
    failure's cause (its headline says it, so the short summary and JUnit's ``message`` do too)."""
    parts = split_path(path)
    if len(parts) < 2 or parts[-1] not in ("passed", "score"):
        return None
    parent = bus.get(path.rsplit(".", 1)[0]) if "." in path else None
    reasons = parent.get("failures") if isinstance(parent, dict) else None
    if not isinstance(reasons, list) or not reasons or not all(isinstance(r, str) for r in reasons):
        return None
    return "; ".join(reasons)
