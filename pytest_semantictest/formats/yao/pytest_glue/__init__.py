"""The Yao format's pytest glue (``formats/pytest_glue.py``): with ``--semantictest-generate``, the LLM
generator writes Yao cases at session start (:mod:`.generation`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .... import options

if TYPE_CHECKING:
    from ...pytest_glue import GlueRuntime


def plugins(config: pytest.Config, runtime: GlueRuntime) -> list[tuple[str, object]]:
    """:class:`~.generation.Generation` when ``--semantictest-generate`` is given, else nothing."""
    if not options.value(config, "generate"):
        return []
    from .generation import Generation

    return [("semantictest-generation", Generation(config, runtime))]
