"""Small helpers shared by the plugin's tests."""

from __future__ import annotations

from typing import Any

from pytest_semantictest.api import SuiteResult, run_suite


def suite(*tests: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"name": "t", **top, "tests": list(tests)}


def test_case(pipeline: list[dict[str, Any]], assertions: dict[str, Any], id: str = "t") -> dict[str, Any]:
    return {"id": id, "pipeline": pipeline, "assertions": assertions}


def mock(data: Any, output: str = "d", **extra: Any) -> dict[str, Any]:
    return {"block": "MockData", "config": {"data": data}, "output": output, **extra}


def run_one(pipeline: list[dict[str, Any]], assertions: dict[str, Any], **top: Any) -> Any:
    """Run one test and return its Verdict."""
    result: SuiteResult = run_suite(suite(test_case(pipeline, assertions), **top))
    return result.verdict
