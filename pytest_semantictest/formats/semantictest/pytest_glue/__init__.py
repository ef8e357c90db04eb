"""The SemanticTest format's pytest glue (``formats/pytest_glue.py``): under ``pytest -n`` with ``--dist
load``, a file with ``setup`` or ``teardown`` runs on one worker, so each runs once
(:mod:`.xdist_scheduling`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .xdist_scheduling import FileSetupScheduling


class XdistScheduling:
    """Gives xdist its scheduler for ``--dist load`` (any other ``--dist`` keeps xdist's own)."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: object) -> FileSetupScheduling | None:
        """``--dist load``: a SemanticTest file with setup or teardown runs on one worker (once each)."""
        if config.getvalue("dist") != "load":
            return None
        from .xdist_scheduling import FileSetupScheduling

        return FileSetupScheduling(config, log)


def plugins(config: pytest.Config, runtime: object) -> list[tuple[str, object]]:
    """One plugin, in every session (it does something only on an xdist controller)."""
    return [("semantictest-xdist-scheduling", XdistScheduling())]
