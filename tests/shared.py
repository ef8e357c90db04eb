"""Third-party material the tests read where it is published, never from a copy in this repository:
``../shared`` beside the repository's root (the working layout: ``/work/shared`` for ``/work/main``).

Where it is absent, the tests that need it skip, naming the path they looked for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
COMPLIANCE_CORPUS = SHARED / "corpus" / "compliance"
"""Every compliance test file the WebAgents project has published, as published."""
SEMANTICTEST_DOCS = SHARED / "seeds" / "001_44d4b86ce351183d.txt"
"""The SemanticTest documentation as one text (its pages' examples are its fenced code blocks)."""


def absent(path: Path, what: str) -> str:
    """Why a test that needs ``path`` skips where it is missing."""
    return f"{what} is not here: expected at {path} (../shared beside the repository root)"


def require(path: Path, what: str) -> Path:
    """``path``, or skip the calling test saying what is missing and where it was looked for."""
    if not path.exists():
        pytest.skip(absent(path, what))
    return path


needs_corpus = pytest.mark.skipif(
    not COMPLIANCE_CORPUS.is_dir(),
    reason=absent(COMPLIANCE_CORPUS, "the published WebAgents compliance files"),
)
needs_docs = pytest.mark.skipif(
    not SEMANTICTEST_DOCS.is_file(), reason=absent(SEMANTICTEST_DOCS, "the SemanticTest documentation")
)


REFERENCE_CHECKOUT_ENV = "SEMANTICTEST_REFERENCE_CHECKOUT"
"""Names a checkout of the SemanticTest reference runner (blade47/semantic-test); its example suites
are not in ``../shared``, so the tests that run them as published read them from there."""


def reference_checkout() -> Path:
    """The SemanticTest reference runner's checkout named by ``SEMANTICTEST_REFERENCE_CHECKOUT``, or
    skip the calling test saying how to name one."""
    import os

    named = os.environ.get(REFERENCE_CHECKOUT_ENV, "")
    if not named:
        pytest.skip(
            f"set {REFERENCE_CHECKOUT_ENV} to a checkout of blade47/semantic-test to run its "
            "test-examples/ as published"
        )
    return require(Path(named), f"the SemanticTest checkout named by {REFERENCE_CHECKOUT_ENV}")
