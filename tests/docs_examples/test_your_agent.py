"""docs/your-agent.md cannot break: its files are the ones in examples/your-agent/, and that folder,
run as the page says (``cd examples/your-agent && python -m pytest``), passes in all four formats with
one agent process started by its pytest.ini."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "examples" / "your-agent"
PAGE = REPO / "docs" / "your-agent.md"
FILE_BLOCK = re.compile(
    r"<!-- file: (?P<path>[^ ]+) -->\n(?P<fence>`{3,})[a-z]*\n(?P<text>.*?)(?P=fence)\n", re.S
)


def test_the_page_shows_the_files_as_they_are() -> None:
    page = PAGE.read_text(encoding="utf-8")
    shown = {m["path"]: m["text"] for m in FILE_BLOCK.finditer(page)}
    on_disk = {
        f"examples/your-agent/{p.name}" for p in FOLDER.iterdir() if p.is_file() and p.suffix != ".pyc"
    }
    assert set(shown) == on_disk
    for path, text in shown.items():
        assert (REPO / path).read_text(encoding="utf-8") == text, path
    assert "docs/your-agent.md" in (REPO / "README.md").read_text(encoding="utf-8")
    assert "your-agent.md" in (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")


def test_the_folder_runs_as_the_page_says(tmp_path: Path) -> None:
    project = tmp_path / "your-agent"
    shutil.copytree(FOLDER, project, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    port = str(free_port())  # the page's port may be taken on a shared machine
    for path in project.iterdir():
        path.write_text(path.read_text(encoding="utf-8").replace("8770", port), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-W", "error::pytest.PytestConfigWarning"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    for line in (
        "compliance    2 passed",
        "highbar       1 passed",
        "semantictest  1 passed",
        "yao           2 passed",
    ):
        assert line in out
    assert " 6 passed in " in out.splitlines()[-1]
    logs = list((project / ".semantictest" / "logs").iterdir())
    assert len(logs) == 1, logs  # one agent process served the four formats
