"""MockData: returns ``config.data`` (resolved like any input)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .base import Block

if TYPE_CHECKING:
    from ..step import StepContext


class MockData(Block):
    name = "MockData"
    concurrency_safe = True
    config_keys = frozenset({"data"})
    input_keys = frozenset()  # MockData reads nothing: its value is config.data

    @classmethod
    def validate_config(cls, config: Mapping[str, Any]) -> list[tuple[str, str]]:
        if "data" not in config:
            return [("data", "MockData needs 'config.data': the value to put on the DataBus")]
        return []

    async def process(self, inputs: dict[str, Any], ctx: StepContext) -> Any:
        """The data as written ("can be any structure"): objects, lists and scalars alike."""
        return self.config.get("data")
