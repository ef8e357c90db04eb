"""The garbage collector in spec sessions (pytest_semantictest/gc_freeze.py): what collection built is
frozen while a spec-only session runs, unfrozen when it ends, frozen again at exit; any other session,
and a process that froze objects itself, is left as it was.

One fresh process runs the sessions one after another with ``pytest.main`` (this suite's own workers
freeze their collection, which would hide the plugin's), reads ``gc.get_freeze_count()`` while each
test runs and after each session, and once more in an exit handler registered before the plugin's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import mock, suite
from tests.helpers import test_case as case

SCRIPT = r"""
import atexit, gc, json, sys
import pytest

seen = {}
atexit.register(lambda: print("AT EXIT", gc.get_freeze_count(), flush=True))  # runs after the plugin's


class Record:
    def __init__(self, name):
        self.name = name

    def pytest_runtest_call(self, item):
        seen[self.name] = gc.get_freeze_count()


def session(name, *args):
    # pytest's unraisableexception stays: the plugin unfreezes after its last collection, as in a user's run
    lean = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:asyncio"]
    code = pytest.main(["-q", *lean, *args], plugins=[Record(name)])
    seen[name + " after"] = gc.get_freeze_count()
    seen[name + " exit"] = int(code)


gc.freeze()
seen["own freeze before"] = gc.get_freeze_count()
session("own freeze", "specs")
gc.unfreeze()
session("mixed", "specs", "unit")
session("collect only", "specs", "--collect-only")
session("specs", "specs")
print("SEEN " + json.dumps(seen), flush=True)
"""


def test_only_a_spec_session_freezes_and_it_gives_back_what_it_froze(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "s.json").write_text(json.dumps(suite(case([mock({"a": 1})], {"d.a": 1}))))
    (tmp_path / "unit").mkdir()
    (tmp_path / "unit" / "test_unit.py").write_text("def test_unit():\n    assert True\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("SEEN "))
    seen = json.loads(line.removeprefix("SEEN "))
    assert [seen[f"{name} exit"] for name in ("own freeze", "mixed", "collect only", "specs")] == [0, 0, 0, 0]
    # the process's own freeze: nothing added (frozen objects only die), nothing undone
    assert 0 < seen["own freeze after"] <= seen["own freeze"] <= seen["own freeze before"]
    assert seen["mixed"] == 0  # a Python test in the session: the collector is left alone
    assert "collect only" not in seen and seen["collect only after"] == 0
    assert seen["specs"] > 1000  # what collection built is frozen while the spec runs ...
    assert seen["specs after"] == 0  # ... and given back when the session ends
    at_exit = [x for x in done.stdout.splitlines() if x.startswith("AT EXIT ")]
    assert at_exit and int(at_exit[0].split()[-1]) > 0, done.stdout  # frozen for the exit's passes
