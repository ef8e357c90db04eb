"""The state and the reporting of the highbar validator, shared by its check mixins
(:mod:`.validate_agent`, :mod:`.validate_expect`) and the validator itself (:mod:`.validate`)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...errors import clip, did_you_mean
from ...json_types import JSONObject, JSONValue
from ...problems import place as _place
from ..yamlsource import YamlSource
from .models import ALLOWED_KEYS
from .problem import HighbarProblem
from .rules import EXTENSION_PREFIX, Path_, near_matcher, type_name
from .spec import Template


class ValidatorCore:
    """What every check reads and writes: the source, the problems found, what was learnt so far."""

    def __init__(self, source: YamlSource, environ: Mapping[str, str], runs: int | None = None) -> None:
        self.source = source
        self.environ = environ
        self.problems: list[HighbarProblem] = []
        self.env_names: dict[str, str] = {}
        self.unset: list[Path_] = []  # values with a ${VAR} that is not set: not checked further
        self.agent: JSONObject | None = None  # the agent mapping with ${VAR} expanded
        self.managed = True
        self.calls_from = "traces"
        self.has_traces = False
        self.regexes: dict[str, re.Pattern[str]] = {}
        self.templates: dict[Path_, tuple[Template, ...]] = {}
        self.default_runs = 1
        self.cli_runs = runs  # the command line's runs win over defaults.runs (highbar's check_runs)

    # reporting

    def err(self, where: Path_, message: str, at: Path_ | None = None) -> None:
        """A problem at ``where`` (its place in the spec), on the line of ``at`` (default ``where``)."""
        line = self.source.line(where if at is None else at)
        self.problems.append(HighbarProblem(_place(where) or "spec", message, line))

    def need(
        self,
        value: JSONValue,
        types: type | tuple[type, ...],
        where: Path_,
        what: str,
        at: Path_ | None = None,
    ) -> bool:
        """``value`` is of ``types`` (a bool is not an int); else ``<where>: <what>, got <type>``."""
        expected = types if isinstance(types, tuple) else (types,)
        if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
            self.err(where, f"{what}, got {type_name(value)}", at)
            return False
        return True

    def keys(self, raw: Mapping[str, JSONValue], kind: str, where: Path_) -> None:
        """Each key of ``raw`` (a ``kind`` of mapping) is one it takes, or an ``x-`` key."""
        for key in raw:
            name = str(key)
            if name not in ALLOWED_KEYS[kind] and not name.startswith(EXTENSION_PREFIX):
                self.err(where, unknown_key(kind, name), where + (key,))

    def tainted(self, where: Path_) -> bool:
        """The value at ``where`` holds an unset ``${VAR}`` (already reported)."""
        return any(p[: len(where)] == where for p in self.unset)


def unknown_key(kind: str, name: str) -> str:
    """``unknown key 'name'`` in a ``kind`` of mapping, with the key meant or the keys it takes."""
    allowed = sorted(ALLOWED_KEYS[kind])
    hint = ""
    if kind == "response" and (intended := near_matcher(name)):
        hint = f" — did you mean '{intended}'?"
    hint = hint or did_you_mean(name, allowed) or f" (allowed: {', '.join(allowed)})"
    return f"unknown key '{clip(name)}'{hint}"
