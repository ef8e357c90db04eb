"""A folder with one spec file that does not collect and one that does: exit 2 (a spec error, as
highbar's), never 130 (Ctrl-C), in every way a user runs it; and the broken file is reported once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import helpers
from tests.reports.test_cli import script

GOOD = helpers.suite(helpers.test_case([helpers.mock({"a": 1})], {"d.a": 1}))


def _folder(root: Path) -> Path:
    specs = root / "specs"
    specs.mkdir()
    (specs / "good.json").write_text(json.dumps(GOOD))
    (specs / "broken.json").write_text('{"name": "broken", "tests": [\n')
    return specs


@pytest.mark.parametrize("args", [(), ("--collect-only",), ("-n", "2")], ids=["run", "collect-only", "xdist"])
def test_one_broken_spec_file_beside_a_good_one_exits_2(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    _folder(pytester.path)
    result = helpers.run_pytest(pytester, "specs", "-p", "no:cacheprovider", *args, own_process=True)
    output = result.stdout.str()
    assert result.ret == 2, output
    assert len(re.findall(r"ERROR collecting specs/broken\.json", output)) == 1, output
    assert "specs/broken.json:2: invalid JSON" in output, output
    if args == ("-n", "2"):
        assert re.search(r"\b1 passed, .*1 error\b", output), output  # xdist ran the good file; still 2


def test_semtest_over_the_folder_exits_2(pytester: pytest.Pytester) -> None:
    _folder(pytester.path)
    result = pytester.run(script("semtest"), "specs", "-p", "no:cacheprovider", timeout=120)
    assert result.ret == 2, result.stdout.str() + result.stderr.str()


def test_stopping_at_the_first_failure_under_xdist_exits_1_not_130(pytester: pytest.Pytester) -> None:
    """xdist ends a ``-x`` session with its own ``KeyboardInterrupt`` subclass: that is no Ctrl-C."""
    failing = helpers.test_case([helpers.mock(1)], {"d": 2}, id="fails")
    (pytester.path / "s.json").write_text(
        json.dumps(
            helpers.suite(
                failing, *(helpers.test_case([helpers.mock(1)], {"d": 1}, id=f"ok{i}") for i in range(6))
            )
        )
    )
    result = helpers.run_pytest(pytester, "-p", "no:cacheprovider", "-n", "2", "-x", own_process=True)
    assert result.ret == 1, result.stdout.str()[-2000:]
