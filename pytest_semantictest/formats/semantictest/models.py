"""Pydantic models of a SemanticTest suite file (the format as users write it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..validation import strip_free_keys


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _free_keys(cls, data: Any) -> Any:
        return strip_free_keys(data)


class StepSpec(BaseModel):
    """A pipeline step. Block options may sit in ``config`` or at the step's top level."""

    model_config = ConfigDict(extra="allow", strict=True)

    block: str
    id: str | None = None
    name: str | None = None
    description: str | None = None
    input: Any = None
    config: dict[str, Any] = Field(default_factory=dict)
    output: str | dict[str, str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _free_keys(cls, data: Any) -> Any:
        return strip_free_keys(data)

    @field_validator("block", "id")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value


class TestSpec(_Strict):
    """One test: a pipeline and assertions (plus our documented extension keys)."""

    id: str
    name: str | None = None
    description: str | None = None
    pipeline: list[StepSpec]
    assertions: dict[str, Any] = Field(default_factory=dict)
    markers: list[str] = Field(default_factory=list)
    skip: str | bool | None = None
    timeout: int | None = Field(default=None, ge=1, description="milliseconds")
    runs: int = Field(default=1, ge=1)
    minPass: int | float | None = None

    @field_validator("id")
    @classmethod
    def _id_ok(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        if "::" in value or "\n" in value:
            raise ValueError(f"must not contain '::' or line breaks, got {value!r}")
        return value


class SuiteSpec(_Strict):
    """A SemanticTest suite file."""

    name: str | None = None
    version: str | None = None
    description: str | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    setup: list[StepSpec] = Field(default_factory=list)
    tests: list[TestSpec]
    teardown: list[StepSpec] = Field(default_factory=list)
