"""Compliance Markdown suites (WebAgents format): ``*.md`` whose front matter has ``transport``.

``parse_file(path)`` reads a file into a :class:`Document` (front matter, ``Setup``, cases);
``compile_document(doc, settings)`` turns it into the internal model. The format's pytest glue
(``pytest_glue.py``) offers ``Setup`` to the ``pytest_semantictest_compliance_setup`` hook before a
file's first case, orders files by ``depends_on`` and reports the variables a case chose.

The names below are imported on first use: the glue is registered in every session, and an idle
session imports nothing heavy (pydantic).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what __getattr__ gives, for the type checker
    from .models import Agent, CaseSetup, Document, EnvVar, FrontMatter, Request, Setup, TestCase
    from .parse import parse_file, parse_text

_FROM = {"parse_file": ".parse", "parse_text": ".parse"}
__all__ = [
    "Agent",
    "CaseSetup",
    "Document",
    "EnvVar",
    "FrontMatter",
    "Request",
    "Setup",
    "TestCase",
    "parse_file",
    "parse_text",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_FROM.get(name, ".models"), __name__), name)
