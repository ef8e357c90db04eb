"""highbar specs (``*.highbar.yaml``): read and validate them into typed objects.

``load_highbar(path, environ)`` returns a :class:`HighbarSpec` or raises ``SpecError``
with every problem of the file, each in highbar's one-line, path-addressed form.
"""

from .spec import (
    AgentSpec,
    CallSpec,
    CommandHook,
    ExpectSpec,
    HighbarSpec,
    MatcherSpec,
    PythonHook,
    RequestSpec,
    SessionSpec,
    SuiteSpec,
    Template,
    TestSpec,
    TurnSpec,
)
from .validate import HighbarProblem, load_highbar, load_highbar_text

SUFFIX = ".highbar.yaml"


def is_highbar_file(name: str) -> bool:
    """highbar's rule: a spec file's name ends in ``.highbar.yaml``."""
    return name.endswith(SUFFIX)


__all__ = [
    "AgentSpec",
    "CallSpec",
    "CommandHook",
    "ExpectSpec",
    "HighbarProblem",
    "HighbarSpec",
    "MatcherSpec",
    "PythonHook",
    "RequestSpec",
    "SUFFIX",
    "SessionSpec",
    "SuiteSpec",
    "Template",
    "TestSpec",
    "TurnSpec",
    "is_highbar_file",
    "load_highbar",
    "load_highbar_text",
]
