"""Each format's pytest glue, behind the one interface the plugin calls.

A format that needs pytest hooks of its own (ordering its files, records shared between xdist
workers, work at session start, an xdist scheduler) keeps them in ``formats/<name>/pytest_glue.py``,
which defines::

    def plugins(config: pytest.Config) -> list[tuple[str, object]]:
        '''The pytest plugin objects this session needs, each with its registration name.'''

``plugin.py`` calls :func:`register` once, in ``pytest_configure``; it names no format. ``GLUE``
lists the formats that have glue. A glue module is the pytest layer: it may read the session's
runtime, and nothing below the pytest layer imports it. It is imported in every session, so it
imports only the standard library and pytest at module level (an idle session imports nothing
heavy); what it needs for spec files it imports when it meets one.
"""

from __future__ import annotations

from importlib import import_module

import pytest

GLUE: tuple[str, ...] = ("semantictest", "compliance", "yao")
"""The formats (packages under ``formats/``) that have a ``pytest_glue`` module."""


def register(config: pytest.Config) -> None:
    """Register every format's pytest plugins for this session."""
    for name in GLUE:
        module = import_module(f"{__package__}.{name}.pytest_glue")
        for plugin_name, plugin in module.plugins(config):
            config.pluginmanager.register(plugin, plugin_name)
