"""What a format's loader and detectors may know about the session (``CollectContext``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
    start_dirs: Mapping[str, Path] = field(default_factory=dict)
    """The folder a command option (``agent-start``, ``compliance-server``) runs in, when it is not
    ``invocation_dir``: the ini file's folder for one given there (:meth:`folder`)."""
    option_agent_users: list[str] = field(default_factory=list)
    """The files that took their agent from the ``agent-*`` options (an unused option is a warning)."""

    def folder(self, name: str) -> Path:
        """Where the command of option ``name`` runs: the invocation folder for one given on the command
        line, the ini file's folder for one written there (as a command written in a spec file runs in
        the spec file's folder)."""
        return self.start_dirs.get(name, self.invocation_dir)

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
