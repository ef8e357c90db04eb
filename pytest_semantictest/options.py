"""Command-line options and ini keys (every option has an ini twin).

Precedence everywhere: command-line option > ini key > environment (where one applies) > default.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from .run_context import Settings

if TYPE_CHECKING:
    from .llm.config import LLMConfig
    from .llm.limits import Limits
    from .stats import PassRateTest

# (name, type, default, help); option --semantictest-<name>, ini semantictest_<name>.
# type list: repeatable option, ini "linelist"; type bool: flag, ini "bool".
OPTIONS: list[tuple[str, type, object, str]] = [
    ("http-timeout", int, 30000, "default HttpRequest timeout in milliseconds"),
    ("max-loop", int, 100, "upper bound on any Loop's maxIterations"),
    ("concurrency", int, 10, "how many runs of one repeated test execute at once"),
    (
        "item-concurrency",
        int,
        16,
        "how many spec items' pipelines run at once in this process (the next items run "
        "ahead while pytest reports in order; 1: one after another)",
    ),
    (
        "mutate",
        bool,
        False,
        "mutation run: record each spec test's agent replies, then re-run the passing tests "
        "against replayed replies with one fault each and print each spec's mutation score (docs/mutation.md)",
    ),
    (
        "all-runs",
        bool,
        False,
        "a repeated test runs all its runs (default: it stops once its outcome is decided)",
    ),
    (
        "baseline",
        str,
        None,
        "compare this run with an earlier results file (--semantictest-results) or a folder "
        "of them: regressions by test, with significance (docs/baseline.md)",
    ),
    (
        "fail-on-regression",
        bool,
        False,
        "exit 1 when a test's pass rate fell significantly against --semantictest-baseline",
    ),
    ("fail-on-slower", float, None, "also gate on a median latency grown significantly by this factor (1.5)"),
    ("fail-on-score-drop", float, None, "also gate on a mean judge score fallen significantly by this much"),
    (
        "pass-rate",
        float,
        None,
        "decide every test by a sequential test of its pass rate: pass once it is at least "
        "this with the given confidence, fail once it is below (docs/statistics.md)",
    ),
    (
        "judge-samples",
        int,
        1,
        "ask the judge of every judged check this many times: the majority (pass/fail) or the "
        "mean (scores) decides, and a check whose samples disagree is listed as unstable",
    ),
    ("fail-unstable", bool, False, "a judged check whose samples disagree fails its test"),
    ("confidence", float, 0.95, "the sequential pass-rate test's confidence (1 - its error rates)"),
    ("max-runs", int, 200, "the pass-rate test's budget (its last look is the exact fixed-size test)"),
    ("inconclusive", str, "fail", "a pass-rate test its budget left undecided: fail (default) or skip"),
    ("trace-chars", int, 2000, "trim each value in the pipeline trace to this many characters"),
    (
        "secret-env",
        list,
        [],
        "environment variable whose value is a secret, beyond the documented name patterns "
        "(a name or a glob such as MY_*; repeatable; ini: one per line)",
    ),
    (
        "secret-header",
        list,
        [],
        "request header whose value is a secret, beyond Authorization and the documented "
        "name patterns (a name or a glob; repeatable; ini: one per line)",
    ),
    ("llm-base-url", str, None, "OpenAI-compatible endpoint for every LLM role (else env OPENAI_BASE_URL)"),
    ("llm-api-key", str, None, "API key for the LLM endpoint (prefer env OPENAI_API_KEY; never printed)"),
    ("llm-model", str, "gpt-4o-mini", "model for every LLM role without its own"),
    ("llm-judge-model", str, None, "model for the LLM judge (default: llm-model)"),
    (
        "llm-header",
        list,
        [],
        "extra HTTP header 'Name: value' on LLM requests (repeatable; ini: one per line)",
    ),
    ("llm-cache", str, "read-write", "LLM replay cache mode: off, read, write, read-write or replay"),
    ("llm-cache-dir", str, ".semantictest/cache", "LLM replay cache directory (relative to the rootdir)"),
    ("llm-concurrency", int, 16, "LLM requests in flight at once, per process"),
    ("llm-timeout", float, 60.0, "seconds to wait for one LLM request"),
    ("llm-retries", int, 3, "retries of an LLM request on 429, 5xx, timeouts and connection errors"),
    (
        "llm-rpm",
        int,
        None,
        "LLM requests per minute (per rate window) to each endpoint and model, for the whole "
        "run: every xdist worker shares it (docs/llm-judge.md)",
    ),
    (
        "llm-tpm",
        int,
        None,
        "LLM tokens per minute (per rate window) to each endpoint and model, for the whole run",
    ),
    (
        "llm-max-in-flight",
        int,
        None,
        "LLM requests in flight at once to each endpoint and model, for the whole run",
    ),
    ("llm-rate-window", float, 60.0, "seconds of the window llm-rpm and llm-tpm count in (60: per minute)"),
    (
        "llm-budget",
        str,
        None,
        "stop sending LLM requests once this is spent: tokens (50000) or money ($2.50, with "
        "llm-price); a check that could not be judged then is an ERROR",
    ),
    (
        "llm-price",
        list,
        [],
        "price of a model: MODEL=INPUT/OUTPUT, money per million tokens (repeatable; ini: one "
        "per line); the summary shows each model's cost",
    ),
    ("agent-endpoint", str, None, "endpoint of the agent the `agent` fixture and Yao cases talk to"),
    ("agent-start", str, None, "command that starts that agent (omit to attach to a running one)"),
    ("agent-health", str, None, "health URL of that agent"),
    (
        "runs",
        int,
        None,
        "run each highbar test N times unless it sets its own runs (overrides defaults.runs)",
    ),
    (
        "agent-logs",
        str,
        ".semantictest/logs",
        "where logs of agents the plugin starts go (relative to the rootdir)",
    ),
    ("require-judge", bool, False, "an LLMJudge that cannot run for lack of a judge is an error, not a skip"),
    (
        "agent-protocol",
        str,
        "openai",
        "how Yao cases talk to the agent at agent-endpoint: openai (chat completions, "
        "the whole history each turn) or highbar (one message a turn)",
    ),
    (
        "awaiting-input-tools",
        list,
        [],
        "tools whose call means the agent awaits the user (repeatable; default "
        "request_confirmation, ask_user, get_user_input)",
    ),
    (
        "awaiting-input-pattern",
        str,
        None,
        "regular expression on an agent reply that means it awaits the user",
    ),
    (
        "yao-globs",
        list,
        [],
        "glob of more *.jsonl files to collect as Yao tests (repeatable; ini: one per line)",
    ),
    (
        "interactive",
        bool,
        False,
        "Yao interactive mode: a person at the terminal answers when the agent awaits input",
    ),
    ("on-missing-input", str, "skip", "interactive cases without a terminal (CI, xdist): skip or fail"),
    (
        "results",
        str,
        None,
        "write one JSON object per test (outcome, duration, turns, checkpoints, LLM usage) to "
        "this .jsonl file",
    ),
    (
        "otel",
        bool,
        False,
        "run an OTLP receiver: agents' spans become tool calls and evidence (docs/traces.md)",
    ),
    ("otel-port", int, 0, "the OTLP receiver's port, for agents started outside pytest (0: any free port)"),
    ("report", str, None, "write the results viewer, one self-contained HTML file, here (docs/reports.md)"),
    (
        "generate",
        str,
        None,
        "generate Yao test cases for this agent (its URL or name) with the LLM generator role",
    ),
    ("generate-count", int, 5, "how many cases the generator writes"),
    (
        "generate-focus",
        str,
        None,
        "what the generated cases focus on (happy-path, edge-cases, errors, free text)",
    ),
    ("generate-out", str, None, "the .jsonl file generated cases go to (default generated_test.jsonl)"),
    (
        "generate-run",
        bool,
        False,
        "run the generated cases (without it the generator only writes them: a dry run)",
    ),
    (
        "compliance-base-url",
        str,
        None,
        "server that compliance Markdown files test (else env COMPLIANCE_BASE_URL or "
        "BASE_URL, else the file's ### Environment default, else http://localhost:8765)",
    ),
    (
        "compliance-api-key",
        str,
        None,
        "API key sent as a bearer token to that server (prefer env API_KEY; never printed)",
    ),
    (
        "compliance-server",
        str,
        None,
        "command that starts that server at the base URL (started once, stopped at the end)",
    ),
    (
        "compliance-value",
        list,
        [],
        "value of a {placeholder} in compliance files: name=value (repeatable; ini: one per line)",
    ),
    (
        "compliance-strict-only",
        bool,
        False,
        "compliance files: only strict checks decide; natural-language assertions are not judged",
    ),
    # A2A and per-agent servers (docs/compliance.md: "a2a", "Your own WebAgents server")
    ("compliance-a2a-version", str, None, "A2A version (0.3 or 1.0) for a2a files naming none"),
    ("compliance-agent-url", str, None, "URL with {agent}: each compliance case goes to its agent's URL"),
]

# Per-role ini keys semantictest_llm_<role>_<key> (the judge's model is the llm-judge-model option).
ROLE_KEYS: list[tuple[str, str]] = [
    ("model", "model for the {role} role (default: llm-model)"),
    ("base_url", "OpenAI-compatible endpoint for the {role} role (default: llm-base-url)"),
    ("api_key_env", "name of the environment variable holding the {role} role's API key"),
]


def _roles() -> tuple[str, ...]:
    from .llm.roles import ROLES

    return ROLES


def _ini_type(kind: type) -> Literal["linelist", "bool"] | None:
    return "linelist" if kind is list else "bool" if kind is bool else None


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("semantictest", "pytest-semantictest: declarative AI agent tests")
    for name, kind, default, text in OPTIONS:
        dest = "semantictest_" + name.replace("-", "_")
        shown = f"{text} (default {default})" if default not in (None, []) else text
        if kind is bool:
            group.addoption(f"--semantictest-{name}", dest=dest, action="store_true", default=None, help=text)
        elif kind is list:
            group.addoption(f"--semantictest-{name}", dest=dest, action="append", default=None, help=shown)
        else:
            group.addoption(f"--semantictest-{name}", dest=dest, type=kind, default=None, help=shown)
        parser.addini(dest, shown, type=_ini_type(kind), default=None)
    for role in _roles():
        for key, text in ROLE_KEYS:
            if role == "judge" and key == "model":
                continue
            parser.addini(f"semantictest_llm_{role}_{key}", text.format(role=role), default=None)


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
    if kind in (list, bool):
        return raw
    try:
        return kind(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"ini key {dest} = {raw!r}: expected {kind.__name__}") from None


def settings(config: pytest.Config) -> Settings:
    return Settings(
        http_timeout_ms=value(config, "http-timeout"),
        max_loop_iterations=value(config, "max-loop"),
        trace_value_chars=value(config, "trace-chars"),
        require_judge=bool(value(config, "require-judge")),
        all_runs=bool(value(config, "all-runs")),
        pass_rate=pass_rate_test(config),
        inconclusive=value(config, "inconclusive"),
        judge_samples=value(config, "judge-samples"),
        fail_unstable=bool(value(config, "fail-unstable")),
    )


def pass_rate_test(config: pytest.Config) -> PassRateTest | None:
    """The run's sequential pass-rate test, or None; a bad setting is a usage error."""
    threshold = value(config, "pass-rate")
    if threshold is None:
        return None
    from .stats import PassRateTest

    confidence = value(config, "confidence")
    try:
        return PassRateTest(threshold, 1 - confidence, 1 - confidence, max_runs=value(config, "max-runs"))
    except ValueError as exc:
        raise pytest.UsageError(
            f"pytest-semantictest: --semantictest-pass-rate {threshold} (confidence {confidence}): {exc}"
        ) from None


def check(config: pytest.Config) -> None:
    """Reject malformed LLM options at startup (only when given: idle sessions import nothing)."""
    if value(config, "inconclusive") not in ("fail", "skip"):
        raise pytest.UsageError("pytest-semantictest: --semantictest-inconclusive must be 'fail' or 'skip'")
    if value(config, "on-missing-input") not in ("skip", "fail"):
        raise pytest.UsageError(
            "pytest-semantictest: --semantictest-on-missing-input must be 'skip' or 'fail'"
        )
    if not 1 <= value(config, "judge-samples") <= 50:
        raise pytest.UsageError("pytest-semantictest: --semantictest-judge-samples must be between 1 and 50")
    if value(config, "item-concurrency") < 1:
        raise pytest.UsageError(
            "pytest-semantictest: --semantictest-item-concurrency must be at least 1 (1: one "
            "item after another)"
        )
    if value(config, "agent-protocol") not in ("openai", "highbar"):
        raise pytest.UsageError(
            "pytest-semantictest: --semantictest-agent-protocol must be 'openai' or 'highbar'"
        )
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


def llm_limits(config: pytest.Config) -> Limits:
    """The run's LLM rate limits, budget and prices (``llm/limits.py``); raises UsageError naming the option."""
    from .llm.limits import Limits, parse_budget, parse_prices

    try:
        budget = value(config, "llm-budget")
        tokens, money = parse_budget(str(budget)) if budget else (None, None)
        prices = parse_prices(list(value(config, "llm-price") or []))
        counts = {name: value(config, f"llm-{name}") or 0 for name in ("rpm", "tpm", "max-in-flight")}
        bad = [name for name, count in counts.items() if count < 0]
        if bad or value(config, "llm-rate-window") <= 0:
            raise ValueError(f"--semantictest-llm-{(bad or ['rate-window'])[0]} must be more than 0")
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


def llm_config(config: pytest.Config, env: Mapping[str, str], rootdir: Path) -> LLMConfig:
    """The LLM client's configuration: options, ini keys (global and per role), environment."""
    from .llm.config import RoleSettings, from_values

    names = [n for n, *_ in OPTIONS if n.startswith("llm-")]
    values = {n: value(config, n) for n in names}
    roles: dict[str, RoleSettings] = {}
    for role in _roles():
        found = {key: _ini(config, f"semantictest_llm_{role}_{key}") for key, _ in ROLE_KEYS}
        if any(found.values()):
            roles[role] = RoleSettings(found["model"], found["base_url"], found["api_key_env"])
    given = [
        n for n in names if config.getoption(_dest(n), None) is not None or _ini(config, _dest(n)) is not None
    ]
    try:
        return from_values(values, roles, env, rootdir, given)
    except ValueError as exc:
        raise pytest.UsageError(f"pytest-semantictest: {exc}") from None


def _dest(name: str) -> str:
    return "semantictest_" + name.replace("-", "_")


def _ini(config: pytest.Config, name: str) -> str | None:
    try:
        raw = config.getini(name)
    except ValueError:  # the judge's model key is registered as an option's twin
        return None
    return str(raw).strip() or None if raw not in (None, []) else None
