"""The conversation tests' shared cases (``tests/yao/conftest.py``) typed as the JSON objects they are.

mypy infers the conftest's mixed literals as ``list[object]``, which no test can index; this is the one
place that says what they hold, so the tests that read them stay typed.
"""

from __future__ import annotations

from typing import Any, cast

from tests.yao import conftest

EXPENSE_TURNS = cast("list[dict[str, Any]]", conftest.EXPENSE_TURNS)

__all__ = ["EXPENSE_TURNS"]
