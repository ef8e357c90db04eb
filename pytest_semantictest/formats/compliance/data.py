"""What the compliance format keeps on the compiled model for its pytest glue (``pytest_glue.py``).

``Suite.format_data`` of a compliance file is a :class:`ComplianceFile`, ``Case.format_data`` of
each of its cases a :class:`ComplianceCase`. Plain data: nothing here runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...json_types import JSONObject

if TYPE_CHECKING:
    from .models import Setup, TestCase


@dataclass(frozen=True, slots=True)
class ComplianceFile:
    """A compliance file as its glue needs it: who it is, what it depends on, its ``Setup``."""

    name: str
    """The front matter's ``name`` (what ``depends_on`` names)."""
    depends_on: tuple[str, ...]
    timeout: float
    """The front matter's case timeout in seconds (how long a dependant waits past it)."""
    setup: Setup
    """The file's ``Setup`` with its ``base_url`` resolved, as the setup hook is offered it."""


@dataclass(slots=True)
class ComplianceCase:
    """A compliance case as its glue (and ``api.compliance_case``) needs it."""

    parsed: TestCase
    """The case as parsed (``.setup``: its own ``**Setup:**``, ``.title``, ...)."""
    variables: JSONObject = field(default_factory=dict)
    """The variables the case chose (reported as its ``variables`` user property)."""
