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
        allowed = ALLOWED_KEYS[kind]
        for key in raw:
            name = str(key)
            if name in allowed or name.startswith(EXTENSION_PREFIX):
                continue
            hint = ""
            if kind == "response" and (intended := near_matcher(name)):
                hint = f" — did you mean '{intended}'?"
            hint = hint or did_you_mean(name, sorted(allowed))
            if not hint:
                hint = f" (allowed: {', '.join(sorted(allowed))})"
            self.err(where, f"unknown key '{clip(name)}'{hint}", where + (key,))

    def tainted(self, where: Path_) -> bool:
        """The value at ``where`` holds an unset ``${VAR}`` (already reported)."""
        return any(p[: len(where)] == where for p in self.unset)
