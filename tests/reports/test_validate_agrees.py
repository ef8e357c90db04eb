"""``semantictest validate`` and ``pytest --collect-only`` report the same problems, file by file, for
every spec file of the repository (examples and the tests' own spec files)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pytest_semantictest import cli
from pytest_semantictest.formats.detect import spec_format
from tests.hardening.mutants import collect_context
from tests.helpers import pytest_process

ROOT = Path(__file__).resolve().parents[2]


def _spec_files() -> list[str]:
    found = []
    context = collect_context(ROOT)
    for top in ("examples", "tests"):
        for path in sorted((ROOT / top).rglob("*")):
            if (
                path.is_file()
                and path.suffix != ".py"
                and "__pycache__" not in path.parts
                and spec_format(path, lambda: context) is not None
            ):
                found.append(os.path.relpath(path, ROOT))
    return found


def _from_collect_only(output: str) -> tuple[set[str], dict[str, int]]:
    broken = set(re.findall(r"^_+ ERROR collecting (\S+) _+$", output, re.MULTILINE))
    failing: dict[str, int] = {}
    section = output.split("tests that will ERROR (a problem in their spec)", 1)
    for line in section[1].split("\n\n", 1)[0].splitlines() if len(section) == 2 else []:
        match = re.match(r"^([^:\s]+)::\S", line)
        if match:
            failing[match.group(1)] = failing.get(match.group(1), 0) + 1
    return broken, failing


def _from_validate(output: str) -> tuple[set[str], dict[str, int]]:
    broken = {m.group(1) for m in re.finditer(r"^✗ ([^:\s]+)(?::|$| \S*$)", output, re.MULTILINE)}
    failing = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"^✗ (\S+) \(\d+ tests?, (\d+) will ERROR\)$", output, re.MULTILINE)
    }
    return broken - set(failing), failing


def test_validate_and_collect_only_agree_on_every_spec_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _spec_files()
    assert len(files) > 20  # the examples and the tests' spec files were found
    collected = pytest_process(
        ROOT, "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *files
    )
    monkeypatch.chdir(ROOT)
    for name in [name for name in os.environ if name.startswith("PYTEST_XDIST")]:
        monkeypatch.delenv(name)  # validate as a user runs it (examples/conftest.py reads these)
    code = cli.validate(files)
    by_validate = _from_validate(capsys.readouterr().out)
    by_collection = _from_collect_only(collected.stdout)
    assert by_validate == by_collection, collected.stdout[-3000:]
    assert code == (2 if by_validate[0] else 1 if by_validate[1] else 0)
