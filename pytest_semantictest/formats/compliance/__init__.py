"""Compliance Markdown suites (WebAgents format): ``*.md`` whose front matter has ``transport``.

``parse_file(path)`` reads a file into a :class:`Document` (front matter, ``Setup``, cases);
``compile_document(doc, settings)`` turns it into the internal model. The pytest layer offers
``Setup`` to the ``pytest_semantictest_compliance_setup`` hook before a file's first case.
"""

from .models import Agent, CaseSetup, Document, EnvVar, FrontMatter, Request, Setup, TestCase
from .parse import parse_file, parse_text

__all__ = ["Agent", "CaseSetup", "Document", "EnvVar", "FrontMatter", "Request", "Setup", "TestCase", "parse_file",
           "parse_text"]
