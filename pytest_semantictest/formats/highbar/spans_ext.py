"""The ``expect.spans`` extension: span assertions on a highbar turn (``docs/traces.md``).

```yaml
expect:
  spans:                                   # the spans the agent exported for the test so far
    - name: "execute_tool *"               # a glob on the span name
      attributes: {gen_ai.tool.name: get_weather}
      status: unset                        # ok, error or unset
      max_ms: 2000                         # and/or min_ms: the span's duration
      count: 1                             # or {min: N, max: N}; at least one by default
```

Each entry becomes part of a ``Spans`` step after the turn (it needs ``--semantictest-otel``) whose
``expect`` the core of :mod:`pytest_semantictest.spans.expect` judges; a failed entry fails the turn
naming the closest span and, for an attribute no span carries, a did-you-mean. Unknown keys are
spec errors with a did-you-mean (the validator's ``span`` kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...databus import DataBus
from ...json_types import JSONObject, JSONValue
from ...model import CheckResult, Failure, Step
from .rules import Path_

if TYPE_CHECKING:
    from .spec import ExpectSpec
    from .validate_core import ValidatorCore

WAIT_MS = 5000
_RENAMED = {"min_ms": "minMs", "max_ms": "maxMs"}


def check_spans(core: ValidatorCore, raw: JSONValue, where: Path_) -> None:
    """The validator's part: a non-empty list of mappings with known keys."""
    place = where + ("spans",)
    if not isinstance(raw, list) or not raw:
        core.err(
            where, "spans must be a non-empty list of span entries (- name: ..., attributes: ...)", place
        )
        return
    for n, entry in enumerate(raw):
        if not isinstance(entry, dict) or not entry:
            core.err(where, "a span entry must be a mapping (name, attributes, status, ...)", place + (n,))
            continue
        core.keys(entry, "span", place + (n,))


def spans_steps(
    expect: ExpectSpec | None, turn_slot: str, number: int, line: int | None, place: str
) -> list[Step]:
    """The ``Spans`` step that judges a turn's ``expect.spans`` (none without them)."""
    if expect is None or not expect.spans:
        return []
    entries = [{_RENAMED.get(k, k): v for k, v in entry.items()} for entry in expect.spans]
    slot = f"{turn_slot}_spans"
    config: JSONObject = {"waitMs": WAIT_MS, "roots": number, "expect": entries}
    return [Step("Spans", slot, None, config, slot, line, place, [SpansHeld(slot, line)])]


@dataclass
class SpansHeld:
    """The turn's ``expect.spans`` entries all held (the ``Spans`` step's ``passed``)."""

    slot: str
    line: int | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({self.slot})

    def describe(self) -> str:
        return "spans"

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        output = bus.get(self.slot)
        if not isinstance(output, dict):
            return CheckResult()  # the step failed: its error is the test's
        return CheckResult(
            [Failure("spans", str(why), line=self.line) for why in output.get("failures") or []]
        )
