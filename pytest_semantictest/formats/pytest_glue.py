"""Each format's pytest glue, behind the one interface the plugin calls.

A format that needs pytest hooks of its own (ordering its files, records shared between xdist
workers, work at session start, an xdist scheduler) keeps them in ``formats/<name>/pytest_glue.py``,
which defines::

    def plugins(config: pytest.Config, runtime: GlueRuntime) -> list[tuple[str, object]]:
        '''The pytest plugin objects this session needs, each with its registration name.'''

``plugin.py`` calls :func:`register` once, in ``pytest_configure``, with the process's runtime;
it names no format. ``GLUE`` lists the formats that have glue. A glue module is the pytest layer,
but it gets the session's services passed in (:class:`GlueRuntime`, what it may use of
``runtime.Runtime``) rather than importing ``runtime.py``; nothing below the pytest layer imports
a glue module. It is imported in every session, so at module level it imports only the standard
library and pytest (an idle session imports nothing heavy); what it needs for spec files it imports
when it meets one.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

import pytest

from .registry import FORMATS

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import Protocol, TypeVar

    from ..llm.client import LLMClient
    from ..model import AgentRequirement
    from ..redact import Redactor
    from ..run_context import RunContext

    T = TypeVar("T")

    class GlueRuntime(Protocol):
        """What a format's glue may use of the session's runtime (``runtime.Runtime``)."""

        @property
        def redactor(self) -> Redactor: ...

        @property
        def context(self) -> RunContext: ...

        @property
        def llm(self) -> LLMClient: ...

        def run(self, coro: Coroutine[object, object, T]) -> T:
            """Run ``coro`` on the process's one event loop; its result."""

        def acquire_agents(self, requirements: list[AgentRequirement], *, for_file: str | None) -> None: ...

        def add_lookahead_gate(self, gate: Callable[[pytest.Item], str | None]) -> None:
            """``gate(item)``: why the look-ahead must not start ``item`` early, or None."""

    class XdistNode(Protocol):
        """An xdist worker as the controller's ``pytest_configure_node`` hook gets it (xdist is untyped)."""

        workerinput: dict[str, object]
        """What the worker reads as ``config.workerinput``."""


GLUE: tuple[str, ...] = tuple(spec_format.name for spec_format in FORMATS if spec_format.glue)
"""The formats (packages under ``formats/``) that have a ``pytest_glue`` module (``registry.Format.glue``)."""


def register(config: pytest.Config, runtime: GlueRuntime) -> None:
    """Register every format's pytest plugins for this session."""
    for name in GLUE:
        module = import_module(f"{__package__}.{name}.pytest_glue")
        for plugin_name, plugin in module.plugins(config, runtime):
            config.pluginmanager.register(plugin, plugin_name)
