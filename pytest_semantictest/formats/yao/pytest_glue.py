"""The Yao format's pytest glue (``formats/glue.py``): with ``--semantictest-generate``, the LLM
generator writes Yao cases at session start (:mod:`.generation`)."""

from __future__ import annotations

import pytest

from ... import options


def plugins(config: pytest.Config) -> list[tuple[str, object]]:
    """:class:`~.generation.Generation` when ``--semantictest-generate`` is given, else nothing."""
    if not options.value(config, "generate"):
        return []
    from ...runtime import runtime
    from .generation import Generation

    return [("semantictest-generation", Generation(config, runtime))]
