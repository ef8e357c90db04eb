"""The agent log folder keeps each agent's last N starts (``--semantictest-agent-logs-keep``).

A start writes ``<name>-<YYYYmmdd-HHMMSS>[-n].log`` (``process.py``); at the end of a run the older logs
of each name beyond the newest ``keep`` are removed. Files named otherwise are never touched.
"""

from __future__ import annotations

import re
from pathlib import Path

LOG_NAME = re.compile(r"^(?P<name>.+)-(?P<stamp>\d{8}-\d{6})(?:-(?P<n>\d+))?\.log$")


def prune(folder: Path, keep: int) -> list[Path]:
    """Remove each agent's logs but its newest ``keep`` (0: keep all); returns what was removed.
    A file that cannot be listed or removed is left as it is (another run may be writing it)."""
    if keep <= 0:
        return []
    try:
        entries = [p for p in folder.iterdir() if p.is_file() and not p.is_symlink()]
    except OSError:
        return []
    removed = []
    for logs in _by_name(entries).values():
        for _, _, path in sorted(logs, reverse=True)[keep:]:
            if _unlinked(path):
                removed.append(path)
    return removed


def _by_name(entries: list[Path]) -> dict[str, list[tuple[str, int, Path]]]:
    """The agent logs among ``entries`` by agent name, each with its start stamp and number."""
    by_name: dict[str, list[tuple[str, int, Path]]] = {}
    for path in entries:
        found = LOG_NAME.match(path.name)
        if found:
            order = (found["stamp"], int(found["n"] or 1), path)
            by_name.setdefault(found["name"], []).append(order)
    return by_name


def _unlinked(path: Path) -> bool:
    """Whether ``path`` was removed."""
    try:
        path.unlink()
    except OSError:
        return False
    return True
