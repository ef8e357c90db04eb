"""How the options are shown and renamed: ``--help`` groups by topic, deprecated aliases.

``pytest --help`` lists the few options a newcomer needs first, then one group a topic; the ini keys
are registered in the same order (pytest lists them flat, in that order). An option no group names
is shown in the last group ("more") until it is placed; a name placed here that this version does not
have is left out (options added on other branches can be placed before they land). A renamed option keeps its old spelling, on
the command line and in the ini file, for one release: hidden from ``--help``, it still works and
warns, naming the new spelling.
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass
from typing import Literal

import pytest

GROUPS: list[tuple[str, str, tuple[str, ...]]] = [
    (
        "semantictest",
        "pytest-semantictest: the common options (more below, by topic; docs/options.md)",
        (
            "agent-endpoint",
            "agent-start",
            "agent-health",
            "llm-base-url",
            "llm-model",
            "results",
            "report",
            "baseline",
        ),
    ),
    (
        "semantictest-agent",
        "pytest-semantictest: the agent under test",
        (
            "agent-protocol",
            "agent-logs",
            "agent-logs-keep",
            "otel",
            "otel-port",
            "http-timeout",
            "awaiting-input-tools",
            "awaiting-input-pattern",
        ),
    ),
    (
        "semantictest-repeat",
        "pytest-semantictest: repeated tests, statistics, regressions",
        (
            "highbar-runs",
            "no-early-stop",
            "pass-rate",
            "pass-rate-confidence",
            "pass-rate-max-runs",
            "judge-samples",
            "fail-unstable",
            "inconclusive",
            "fail-on-regression",
            "fail-on-slower",
            "fail-on-score-drop",
            "mutate",
        ),
    ),
    (
        "semantictest-llm",
        "pytest-semantictest: the LLM judge and the other LLM roles (docs/llm-judge.md)",
        (
            "require-judge",
            "llm-api-key",
            "llm-api-key-env",
            "llm-header",
            "llm-cache",
            "llm-cache-dir",
            "llm-timeout",
            "llm-retries",
            "llm-max-in-flight",
            "llm-rpm",
            "llm-tpm",
            "llm-rate-window",
            "llm-budget",
            "llm-price",
        ),
    ),
    (
        "semantictest-run",
        "pytest-semantictest: speed and output",
        ("items-at-once", "runs-at-once", "max-loop", "trace-chars", "secret-env", "secret-header"),
    ),
    (
        "semantictest-compliance",
        "pytest-semantictest: compliance Markdown files",
        (
            "compliance-base-url",
            "compliance-api-key",
            "compliance-server",
            "compliance-value",
            "compliance-strict-only",
            "compliance-a2a-version",
            "compliance-agent-url",
        ),
    ),
    (
        "semantictest-yao",
        "pytest-semantictest: Yao conversation files",
        (
            "yao-globs",
            "interactive",
            "on-missing-input",
            "generate",
            "generate-count",
            "generate-focus",
            "generate-out",
            "generate-run",
        ),
    ),
]
MORE = ("semantictest-more", "pytest-semantictest: more options")
METAVARS = {
    "agent-start": "COMMAND",
    "agent-endpoint": "URL",
    "agent-health": "URL",
    "llm-base-url": "[ROLE=]URL",
    "llm-model": "[ROLE=]MODEL",
    "llm-api-key-env": "ROLE=NAME",
    "results": "FILE",
    "baseline": "PATH",
    "compliance-server": "COMMAND",
    "compliance-base-url": "URL",
}
"""What ``--help`` shows as an option's value where the kind alone says little (else N, X or VALUE)."""


@dataclass(frozen=True)
class Alias:
    """An old option name (``--semantictest-<old>``, ini ``semantictest_<old>``) kept for one release."""

    old: str
    new: str
    prefix: str = ""
    """For a repeatable new option: what the old value is given as (``judge=`` + the model)."""
    note: str = ""


ALIASES: list[Alias] = [
    Alias("concurrency", "runs-at-once"),
    Alias("item-concurrency", "items-at-once"),
    Alias(
        "llm-concurrency",
        "llm-max-in-flight",
        note="which now counts for the whole run, per endpoint and model, every xdist worker included",
    ),
    Alias("runs", "highbar-runs"),
    Alias("all-runs", "no-early-stop"),
    Alias("confidence", "pass-rate-confidence"),
    Alias("max-runs", "pass-rate-max-runs"),
    Alias("llm-judge-model", "llm-model", prefix="judge="),
]
ROLE_OPTIONS = {"model": "llm-model", "base_url": "llm-base-url", "api_key_env": "llm-api-key-env"}
"""The per-role ini keys ``semantictest_llm_<role>_<key>`` (deprecated) and the option that now takes
``ROLE=VALUE`` lines instead."""


def dest(name: str) -> str:
    return "semantictest_" + name.replace("-", "_")


def aliases_of(name: str) -> list[Alias]:
    return [alias for alias in ALIASES if alias.new == name]


def new_name(name: str) -> str:
    """An option's current name (an old name is mapped to its new one)."""
    return next((alias.new for alias in ALIASES if alias.old == name), name)


def add_options(
    parser: pytest.Parser, table: list[tuple[str, type, object, str]], roles: tuple[str, ...]
) -> None:
    by_name = {row[0]: row for row in table}
    _add_grouped(parser, by_name)
    _add_aliases(parser, by_name)
    _add_role_ini_keys(parser, roles)


def _add_grouped(parser: pytest.Parser, by_name: dict[str, tuple[str, type, object, str]]) -> None:
    """Every option in its group's order (an option of no group under ``MORE``), each once."""
    placed: set[str] = set()
    for key, title, names in [*GROUPS, (*MORE, tuple(n for n in by_name if not _in_groups(n)))]:
        group = parser.getgroup(key, title)
        for name in names:
            if name in by_name and name not in placed:
                placed.add(name)
                _add(parser, group, *by_name[name])


def _add_aliases(parser: pytest.Parser, by_name: dict[str, tuple[str, type, object, str]]) -> None:
    """The deprecated spellings, hidden, each of its new option's kind (a ``ROLE=`` one a string)."""
    hidden = parser.getgroup(*MORE)
    for alias in ALIASES:
        kind = by_name[alias.new][1] if alias.new in by_name else str
        if alias.prefix:
            kind = str
        _add(parser, hidden, alias.old, kind, None, "", deprecated=alias)


def _add_role_ini_keys(parser: pytest.Parser, roles: tuple[str, ...]) -> None:
    """The deprecated per-role ini keys (``semantictest_llm_<role>_<key>``)."""
    for role in roles:
        for key, option in ROLE_OPTIONS.items():
            if role == "judge" and key == "model":
                continue  # that key is the ini twin of the llm-judge-model alias
            parser.addini(
                f"semantictest_llm_{role}_{key}",
                f"deprecated: use semantictest_{option.replace('-', '_')} = {role}=VALUE",
                default=None,
            )


def _in_groups(name: str) -> bool:
    return any(name in names for _, _, names in GROUPS)


def _add(
    parser: pytest.Parser,
    group: pytest.OptionGroup,
    name: str,
    kind: type,
    default: object,
    text: str,
    deprecated: Alias | None = None,
) -> None:
    shown = f"{text} (default {default})" if default not in (None, []) else text
    options: dict[str, object] = {"dest": dest(name), "default": None}
    options["help"] = argparse.SUPPRESS if deprecated else (text if kind is bool else shown)
    options.update(_kind_options(name, kind))
    group.addoption(f"--semantictest-{name}", **options)
    ini_type: Literal["linelist", "bool"] | None = (
        "linelist" if kind is list else "bool" if kind is bool else None
    )
    if deprecated:
        shown = f"deprecated: use {dest(deprecated.new)}"
    parser.addini(dest(name), shown, type=ini_type, default=None)


def _kind_options(name: str, kind: type) -> dict[str, object]:
    """How argparse reads an option of ``kind``: a flag, a repeatable one, or one value of a type
    with its metavar."""
    if kind is bool:
        return {"action": "store_true"}
    metavar = METAVARS.get(name) or {int: "N", float: "X"}.get(kind, "VALUE")
    if kind is list:
        return {"action": "append", "metavar": metavar}
    return {"type": kind, "metavar": metavar}


def warn(config: pytest.Config, message: str, category: type[Warning] = pytest.PytestConfigWarning) -> None:
    """A warning about the run's options, shown at the ini file when an ini key is named, else at the
    command line (not at a line of the plugin); during collection, so pytest's summary lists it. Under
    xdist one worker says it (every worker collects the same)."""
    if getattr(config, "workerinput", {}).get("workerid", "gw0") != "gw0":
        return
    where, line = "pytest command line", 1
    if "ini key " in message and config.inipath:
        where, key = str(config.inipath), message.split("ini key ", 1)[1].split(" ", 1)[0]
        try:
            lines = config.inipath.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        line = next((n for n, text in enumerate(lines, 1) if text.strip().startswith(key)), 1)
    warnings.warn_explicit(f"pytest-semantictest: {message}", category, where, line)


def deprecations(config: pytest.Config, roles: tuple[str, ...]) -> list[str]:
    """One line for each deprecated option or ini key this run was given."""
    lines = []
    for alias in ALIASES:
        lines += _alias_lines(config, alias)
    for role in roles:
        for key, option in ROLE_OPTIONS.items():
            name = f"semantictest_llm_{role}_{key}"
            if (role, key) != ("judge", "model") and config.getini(name) not in (None, "", []):
                lines.append(
                    f"ini key {name} is deprecated and goes in the next release: use "
                    f"{dest(option)} = {role}=VALUE (one line a role)"
                )
    return lines


def _alias_lines(config: pytest.Config, alias: Alias) -> list[str]:
    """A deprecated spelling given as an option, as an ini key: a line each, naming what to use."""
    lines = []
    note = f" ({alias.note})" if alias.note else ""
    shown = f"{alias.prefix}VALUE" if alias.prefix else ""
    if config.getoption(dest(alias.old), None) is not None:
        lines.append(
            f"--semantictest-{alias.old} is deprecated and goes in the next release: use "
            f"--semantictest-{alias.new}{' ' + shown if shown else ''}{note}"
        )
    if config.getini(dest(alias.old)) not in (None, "", []):
        lines.append(
            f"ini key {dest(alias.old)} is deprecated and goes in the next release: use "
            f"{dest(alias.new)}{' = ' + shown if shown else ''}{note}"
        )
    return lines
