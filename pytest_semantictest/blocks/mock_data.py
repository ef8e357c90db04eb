"""MockData: returns ``config.data`` (resolved like any input)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..json_types import JSONObject, JSONValue
from .base import Block

if TYPE_CHECKING:
    from ..step import StepContext

_NOT_WRITTEN: Final = object()
"""``data`` left out (a written ``null`` is data like any other)."""


class MockDataConfig(BaseModel):
    """A MockData step's config: ``data``, any JSON value, must be written."""

    model_config = ConfigDict(extra="allow", frozen=True)

    data: JSONValue = Field(default=_NOT_WRITTEN, validate_default=True)

    @field_validator("data", mode="before")
    @classmethod
    def _written(cls, value: JSONValue) -> JSONValue:
        if value is _NOT_WRITTEN:
            raise ValueError("MockData needs 'config.data': the value to put on the DataBus")
        return value


class MockData(Block):
    name = "MockData"
    concurrency_safe = True
    config_model = MockDataConfig
    config_keys = frozenset(MockDataConfig.model_fields)
    input_keys = frozenset()  # MockData reads nothing: its value is config.data

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONValue:
        """The data as written ("can be any structure"): objects, lists and scalars alike."""
        return self.config.get("data")
