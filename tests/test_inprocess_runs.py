"""In-process pytester runs (the root conftest) leave nothing behind for the next run or the outer session."""

from __future__ import annotations

import json
import sys

import pytest

from pytest_semantictest.blocks import registry

LEAKY_CONFTEST = """
from pytest_semantictest import Block, register_block

@register_block
class Leaky(Block):
    name = "Leaky"
    config_keys = None
    async def process(self, inputs, ctx):
        return {"ok": True}
"""

SUITE = {
    "name": "s",
    "tests": [{"id": "t", "pipeline": [{"block": "Leaky", "output": "r"}], "assertions": {"r.ok": True}}],
}


def test_a_block_one_run_registers_is_unknown_to_the_next(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(LEAKY_CONFTEST)
    pytester.makefile(".json", suite=json.dumps(SUITE))
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert "Leaky" not in registry._registered  # the outer session's registry is as it was
    (pytester.path / "conftest.py").unlink()
    again = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert "unknown block 'Leaky'" in again.stdout.str(), again.stdout.str()


def test_the_test_folders_modules_are_dropped_and_the_rest_kept(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        helper_mod="VALUE = 1\n", test_uses="import helper_mod\ndef test_it():\n    assert helper_mod.VALUE\n"
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert "helper_mod" not in sys.modules and "test_uses" not in sys.modules
    assert "pytest_semantictest.plugin" in sys.modules
