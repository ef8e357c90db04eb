"""Small helpers shared by the plugin's tests."""

from __future__ import annotations

from typing import Any

import pytest

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


def run_pytest(pytester: pytest.Pytester, *args: str, own_process: bool = False) -> pytest.RunResult:
    """pytest on the pytester folder: in-process (the root conftest isolates the runs), unless under
    xdist (``-n``) or ``own_process``: a check that nothing (a secret) is printed must see what reaches
    the file descriptors, not only ``sys.stdout``."""
    if own_process or "-n" in args:
        return pytester.runpytest_subprocess(*args, timeout=240)
    return pytester.runpytest_inprocess(*args)
