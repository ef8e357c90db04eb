"""The spec formats, one :class:`Format` record each: the one list that the plugin's markers, format
detection (``detect.FORMATS``), the formats' pytest glue (``pytest_glue.GLUE``) and the JSON Schemas
(``schemas.SCHEMAS``) are read from. Adding a format is one record here (and its package).

Plain data, imported in every session: it imports nothing of the formats themselves."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SchemaSource:
    """One JSON Schema of a format: the pydantic model (``module:Class``) and what editors show."""

    name: str
    model: str
    title: str
    description: str
    free_keys: str = "^x-"
    """Keys the format lets users add at every level (a regex), allowed next to every closed object."""
    schema_key: bool = False
    """Whether a file may name its schema in a top-level ``$schema`` key (JSON formats)."""


@dataclass(frozen=True)
class Format:
    """A spec format: its name (a package under ``formats/`` and the marker its tests get), how its files
    are recognised and collected, whether it has pytest glue, and its JSON Schemas."""

    name: str
    marker: str
    """What ``pytest --markers`` says of the marker."""
    detector: str
    """The function of ``formats/detect.py`` that recognises its files."""
    collector: str
    """The module under ``formats/`` that collects a file (its ``make_loader``)."""
    glue: bool = False
    """Whether ``formats/<name>/pytest_glue`` adds pytest hooks for it."""
    schemas: tuple[SchemaSource, ...] = ()


FORMATS: tuple[Format, ...] = (
    Format(
        "semantictest",
        "a test collected from a SemanticTest JSON suite",
        "semantictest_json",
        "semantictest.loader",
        glue=True,
        schemas=(
            SchemaSource(
                "semantictest",
                "pytest_semantictest.formats.semantictest.models:SuiteSpec",
                "SemanticTest suite",
                "A SemanticTest suite file (*.json with a top-level tests array) run by pytest-semantictest.",
                free_keys="^(x-|\\$schema$)",
                schema_key=True,
            ),
        ),
    ),
    Format(
        "highbar",
        "a test collected from a highbar spec (*.highbar.yaml)",
        "highbar_yaml",
        "highbar.compile",
        schemas=(
            SchemaSource(
                "highbar",
                "pytest_semantictest.formats.highbar.models:Spec",
                "highbar spec",
                "A highbar spec (*.highbar.yaml) run by pytest-semantictest; calls_from and markers are "
                "extensions.",
            ),
        ),
    ),
    Format(
        "yao",
        "a test case of a Yao agent test file (*.jsonl)",
        "yao_jsonl",
        "yao.compile",
        glue=True,
        schemas=(
            SchemaSource(
                "yao-case",
                "pytest_semantictest.formats.yao.models:CaseSpec",
                "Yao test case",
                "One line of a Yao conversation test file (*.jsonl): a single-turn, static or dynamic test case.",
            ),
            SchemaSource(
                "yao-agent",
                "pytest_semantictest.formats.yao.models:AgentFileSpec",
                "Yao agent file",
                "The agent a Yao test file talks to (<name>.agent.yaml next to <name>.jsonl).",
            ),
        ),
    ),
    Format(
        "compliance",
        "a test case of a compliance Markdown file (*.md)",
        "compliance_markdown",
        "compliance.collect",
        glue=True,
    ),
)
