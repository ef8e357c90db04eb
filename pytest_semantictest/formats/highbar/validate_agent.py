"""highbar validation of the ``agent:`` block: ``${VAR}`` expanded, then the block validated by its
model (:class:`.agent_model.CheckedAgent`), each pydantic error one problem line."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ...json_types import JSONValue
from ...problems import problems_from
from ...redact import used_secrets
from ...resolve import ENV_VAR
from . import models
from .agent_model import AgentContext, CheckedAgent, Unchecked, init_details
from .agent_values import AgentProblem
from .problem import HighbarProblem
from .rules import Path_
from .validate_core import ValidatorCore, unknown_key

_KIND_AT: dict[Path_, str] = {
    (): "agent",
    ("request",): "request",
    ("session",): "session",
    ("session", "setup"): "python_hook",
    ("session", "teardown"): "python_hook",
}
"""The kind of mapping (:data:`.models.ALLOWED_KEYS`) at each place of the block that has keys."""

_MISSING = {
    "endpoint": "missing 'endpoint' (the URL each trigger is sent to)",
    "python": "python must be 'module:function', got null",
}
"""highbar's words for a required key that is not written."""


class AgentChecks(ValidatorCore):
    """The checks of the ``agent:`` block, a part of the validator."""

    def agent_(self, raw: JSONValue) -> None:
        A: Path_ = ("agent",)  # noqa: N806
        if not self.need(raw, dict, A, "must be a mapping"):
            return
        written = raw.get("start")
        raw = self.expand(raw, A)
        assert isinstance(raw, dict)
        self.agent = raw
        context = AgentContext.of(raw, written, self.environ, self._secrets(raw), self.unset)
        self.managed = context.managed
        self.calls_from = context.calls_from
        self.has_traces = "traces" in raw
        try:
            CheckedAgent.model_validate(raw, context=context)
        except ValidationError as exc:
            self._report(exc)

    def _report(self, exc: ValidationError) -> None:
        """Each error of the agent block as a problem line; those the checks do not word (a bound
        of the schema alone) in the words every format gives pydantic's errors."""
        unworded: list[ErrorDetails] = []
        for err in exc.errors(include_url=False):
            at: Path_ = ("agent", *err["loc"])
            worded = _words(err)
            if worded is None:
                unworded.append(err)
            elif worded.message:
                self.err(at[:-1] if worded.at_owner else at, worded.message, at)
        if unworded:
            again = ValidationError.from_exception_data(
                exc.title, [init_details(e, ("agent",)) for e in unworded]
            )
            found = problems_from(again, models.Spec, self.source.line)
            self.problems += [HighbarProblem(p.place, p.message, p.line) for p in found]

    def _secrets(self, agent: Mapping[str, JSONValue]) -> list[str]:
        """The values expanded under ``agent`` that are secrets (the rule ``AgentConfig`` applies)."""
        request = agent.get("request")
        headers = request.get("headers") if isinstance(request, Mapping) else None
        return used_secrets(self.env_names, headers if isinstance(headers, Mapping) else {})

    def expand(self, value: JSONValue, where: Path_) -> JSONValue:
        """Replace ``${NAME}`` from ``environ``, once (no re-expansion); record each value. As in highbar,
        every value under ``agent`` is expanded, ``x-`` keys' too: a variable that is not set there is
        a spec error as well."""
        if isinstance(value, dict):
            return {key: self.expand(item, where + (key,)) for key, item in value.items()}
        if isinstance(value, list):
            return [self.expand(item, where + (i,)) for i, item in enumerate(value)]
        if not isinstance(value, str) or "${" not in value:
            return value
        missing: list[str] = []

        def variable(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self.environ:
                if name not in missing:
                    missing.append(name)
                return match.group(0)
            found = self.environ[name]
            self.env_names[found] = name
            return found

        expanded = ENV_VAR.sub(variable, value)
        for name in missing:
            self.err(where, f"environment variable {name} is not set")
        if missing:
            self.unset.append(where)
        return expanded


def _words(err: ErrorDetails) -> AgentProblem | None:
    """highbar's words for a pydantic error of the block (an empty message: reported already)."""
    found = (err.get("ctx") or {}).get("error")
    if isinstance(found, AgentProblem):
        return found
    if isinstance(found, Unchecked):
        return AgentProblem("")
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden" and loc[:-1] in _KIND_AT:
        return AgentProblem(unknown_key(_KIND_AT[loc[:-1]], str(loc[-1])), at_owner=True)
    if err["type"] == "missing" and loc[-1] in _MISSING:
        return AgentProblem(_MISSING[str(loc[-1])], at_owner=True)
    return None
