"""The LLM options as the LLM client's configuration and the run's limits (``llm/``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from . import option_groups
from .options import OPTIONS, ini_text, is_set, llm_roles, value

if TYPE_CHECKING:
    from .llm.config import LLMConfig
    from .llm.limits import Limits


def llm_limits(config: pytest.Config) -> Limits:
    """The run's LLM rate limits, budget and prices (``llm/limits.py``); raises UsageError naming the option."""
    from .llm.limits import Limits, parse_budget, parse_prices

    try:
        budget = value(config, "llm-budget")
        tokens, money = parse_budget(str(budget)) if budget else (None, None)
        prices = parse_prices(list(value(config, "llm-price") or []))
        counts = _rate_counts(config)
    except ValueError as exc:
        raise pytest.UsageError(f"pytest-semantictest: {exc}") from None
    return Limits(
        counts["rpm"],
        counts["tpm"],
        counts["max-in-flight"],
        float(value(config, "llm-rate-window")),
        tokens,
        money,
        prices,
    )


def _rate_counts(config: pytest.Config) -> dict[str, int]:
    """The rate limits by name (0: none); raises ValueError naming the first that is negative, or
    a rate window that is not positive."""
    counts = {name: value(config, f"llm-{name}") or 0 for name in ("rpm", "tpm", "max-in-flight")}
    bad = [name for name, count in counts.items() if count < 0]
    if bad or value(config, "llm-rate-window") <= 0:
        raise ValueError(f"--semantictest-llm-{(bad or ['rate-window'])[0]} must be more than 0")
    return counts


_ROLE_OPTIONS = (("llm-model", "model"), ("llm-base-url", "base_url"), ("llm-api-key-env", "api_key_env"))
"""The LLM options a ``ROLE=VALUE`` line can give per role, with their key in ``RoleSettings``."""


def llm_config(config: pytest.Config, env: Mapping[str, str], rootdir: Path) -> LLMConfig:
    """The LLM client's configuration: options, ini keys (global and ``ROLE=VALUE``), environment.
    For a role, its own line wins over the global one; of two lines for the same role (or two global
    ones), the command line's wins over the ini file's, a current spelling over a deprecated one."""
    from .llm.config import RoleSettings, from_values

    values, given = _option_values(config)
    found: dict[str, dict[str, str]] = {}
    for name, key in _ROLE_OPTIONS:
        overall, by_role = _by_role(_ini_role_lines(config, key) + _lines(config, name))
        values.pop(name)
        values[name] = overall
        if name != "llm-api-key-env" and overall is None and name in given:
            given.remove(name)  # only ROLE=VALUE lines: no global value was given
        _add_role_values(found, key, by_role, overall)
    roles = {
        role: RoleSettings(keys.get("model"), keys.get("base_url"), keys.get("api_key_env"))
        for role, keys in found.items()
    }
    try:
        return from_values(values, roles, env, rootdir, given)
    except ValueError as exc:
        raise pytest.UsageError(f"pytest-semantictest: {exc}") from None


def _option_values(config: pytest.Config) -> tuple[dict[str, object], list[str]]:
    """Every LLM option's value by name, and the names given (not defaults)."""
    names = [n for n, *_ in OPTIONS if n.startswith("llm-")]
    return {n: value(config, n) for n in names}, [n for n in names if is_set(config, n)]


def _ini_role_lines(config: pytest.Config, key: str) -> list[str]:
    """``ROLE=VALUE`` lines from the per-role ini keys (``semantictest_llm_judge_model``) that are set."""
    old = [f"{role}={ini_text(config, f'semantictest_llm_{role}_{key}') or ''}" for role in llm_roles()]
    return [line for line in old if not line.endswith("=")]


def _add_role_values(
    found: dict[str, dict[str, str]], key: str, by_role: dict[str, str], overall: str | None
) -> None:
    """Each role's value of ``key``: its own line's, else (for the API key's variable only) the global one."""
    for role in llm_roles():
        chosen = by_role.get(role) or (overall if key == "api_key_env" else None)
        if chosen:
            found.setdefault(role, {})[key] = chosen


def _lines(config: pytest.Config, name: str) -> list[str]:
    """A repeatable option's lines, ini file first and then the command line, each in its deprecated
    spellings first (a later line for the same role wins)."""
    spellings = [(a.old, a.prefix) for a in option_groups.aliases_of(name)] + [(name, "")]
    lines: list[str] = []
    for source in ("ini", "option"):
        for spelling, prefix in spellings:
            dest = option_groups.dest(spelling)
            raw = config.getini(dest) if source == "ini" else config.getoption(dest, None)
            if raw in (None, "", []):
                continue
            lines += [prefix + str(v) for v in (raw if isinstance(raw, list) else [raw])]
    return lines


def _by_role(lines: list[str]) -> tuple[str | None, dict[str, str]]:
    """``["gpt-4o-mini", "judge=gpt-4o"]`` -> the value for every role (the last one) and by role."""
    overall: str | None = None
    by_role: dict[str, str] = {}
    for line in lines:
        role, sep, rest = str(line).partition("=")
        if sep and role.strip() in llm_roles():
            by_role[role.strip()] = rest.strip()
        elif str(line).strip():
            overall = str(line).strip()
    return overall, by_role


def check(config: pytest.Config) -> None:
    """Reject malformed LLM options at startup (only when given: idle sessions import nothing)."""
    if any(value(config, f"llm-{n}") for n in ("budget", "price", "rpm", "tpm", "max-in-flight")):
        llm_limits(config)  # malformed: a usage error before anything runs
    if not any(
        config.getoption(f"semantictest_llm_{n}", None) or config.getini(f"semantictest_llm_{n}")
        for n in ("cache", "header")
    ):
        return
    from .llm.config import parse_headers
    from .llm.roles import CACHE_MODES

    mode = value(config, "llm-cache")
    if mode not in CACHE_MODES:
        raise pytest.UsageError(
            f"pytest-semantictest: LLM cache mode {mode!r} is not one of {', '.join(CACHE_MODES)}"
        )
    try:
        parse_headers(value(config, "llm-header") or [])
    except ValueError as exc:
        raise pytest.UsageError(f"pytest-semantictest: {exc}") from None
