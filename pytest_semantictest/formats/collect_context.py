"""What a format's loader and detectors may know about the session (``CollectContext``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CollectContext:
    """What loaders may know about the session: folders, environment, option values."""

    rootdir: Path
    invocation_dir: Path
    env: Mapping[str, str]
    option: Callable[[str], object]
    """An option's value by its name without ``--semantictest-`` (option, else ini key, else default);
    read it with :meth:`text`, :meth:`texts`, :meth:`number` or :meth:`flag`."""
    args: tuple[str, ...] = ()

    def text(self, name: str) -> str | None:
        """A string option: its value, None when it is unset or empty."""
        value = self.option(name)
        return None if value is None or value == "" else str(value)

    def texts(self, name: str) -> list[str]:
        """A repeatable option (or ini list): its values, in order."""
        value = self.option(name)
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def number(self, name: str) -> int | None:
        """A whole-number option: its value, None when it is unset."""
        value = self.option(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def flag(self, name: str) -> bool:
        """A yes/no option."""
        return bool(self.option(name))
