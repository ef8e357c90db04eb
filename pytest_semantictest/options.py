"""Command-line options and ini keys (every option has an ini twin)."""

from __future__ import annotations

from typing import Any

import pytest

from .engine.context import Settings

# (name, type, default, help); option --semantictest-<name>, ini semantictest_<name>
OPTIONS: list[tuple[str, type, Any, str]] = [
    ("http-timeout", int, 30000, "default HttpRequest timeout in milliseconds"),
    ("max-loop", int, 100, "upper bound on any Loop's maxIterations"),
    ("concurrency", int, 10, "how many runs of one repeated test execute at once"),
    ("trace-chars", int, 2000, "trim each value in the pipeline trace to this many characters"),
]


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("semantictest", "pytest-semantictest: declarative AI agent tests")
    for name, kind, default, text in OPTIONS:
        dest = "semantictest_" + name.replace("-", "_")
        group.addoption(f"--semantictest-{name}", dest=dest, type=kind, default=None, help=f"{text} (default {default})")
        parser.addini(dest, f"{text} (default {default})", default=None)


def value(config: pytest.Config, name: str) -> Any:
    """Option if given, else ini key, else default; ini strings are converted and checked."""
    dest = "semantictest_" + name.replace("-", "_")
    kind, default = next((k, d) for n, k, d, _ in OPTIONS if n == name)
    given = config.getoption(dest, None)
    if given is not None:
        return given
    raw = config.getini(dest)
    if raw in (None, "", []):
        return default
    try:
        return kind(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"ini key {dest} = {raw!r}: expected {kind.__name__}") from None


def settings(config: pytest.Config) -> Settings:
    return Settings(
        http_timeout_ms=value(config, "http-timeout"),
        max_loop_iterations=value(config, "max-loop"),
        trace_value_chars=value(config, "trace-chars"),
    )
