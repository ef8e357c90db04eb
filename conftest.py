"""Root conftest: pytester for the plugin's own tests (pytest_plugins must live here)."""

pytest_plugins = ["pytester"]
