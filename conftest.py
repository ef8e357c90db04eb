"""Root conftest: pytester for the plugin's own tests (pytest_plugins must live here).

In-process pytester runs drop modules first imported during the inner run; importing the
plugin's heavier modules here keeps one copy of their classes for the whole session.
"""

import pytest_semantictest.agents.live  # noqa: F401
import pytest_semantictest.blocks.agent_turn  # noqa: F401
import pytest_semantictest.formats.highbar.compile  # noqa: F401
import pytest_semantictest.formats.semantictest.loader  # noqa: F401
import yaml  # noqa: F401

pytest_plugins = ["pytester"]
