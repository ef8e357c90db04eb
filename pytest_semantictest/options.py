"""Command-line options and ini keys (every option has an ini twin).

Precedence everywhere: command-line option > ini key > environment (where one applies) > default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from . import option_groups
from .run_context import Settings

if TYPE_CHECKING:
    from .stats import PassRateTest

# (name, type, default, help); option --semantictest-<name>, ini semantictest_<name>.
# type list: repeatable option, ini "linelist"; type bool: flag, ini "bool".
OPTIONS: list[tuple[str, type, object, str]] = [
    ("http-timeout", int, 30000, "default HttpRequest timeout in milliseconds"),
    ("max-loop", int, 100, "upper bound on any Loop's maxIterations"),
    ("runs-at-once", int, 10, "how many runs of one repeated test execute at once"),
    (
        "items-at-once",
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
        "no-early-stop",
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
    ("pass-rate-confidence", float, 0.95, "the sequential pass-rate test's confidence (1 - its error rates)"),
    (
        "pass-rate-max-runs",
        int,
        200,
        "the pass-rate test's budget (its last look is the exact fixed-size test)",
    ),
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
    (
        "llm-base-url",
        list,
        [],
        "OpenAI-compatible endpoint of every LLM role (else env OPENAI_BASE_URL); ROLE=URL for one "
        "role (judge, simulator, paraphraser, validator, generator); repeatable",
    ),
    ("llm-api-key", str, None, "API key for the LLM endpoint (prefer env OPENAI_API_KEY; never printed)"),
    (
        "llm-api-key-env",
        list,
        [],
        "ROLE=NAME: the environment variable holding that LLM role's API key (repeatable)",
    ),
    (
        "llm-model",
        list,
        [],
        "model of every LLM role (default gpt-4o-mini); ROLE=MODEL for one role (judge=gpt-4o); repeatable",
    ),
    (
        "llm-header",
        list,
        [],
        "extra HTTP header 'Name: value' on LLM requests (repeatable; ini: one per line)",
    ),
    ("llm-cache", str, "read-write", "LLM replay cache mode: off, read, write, read-write or replay"),
    ("llm-cache-dir", str, ".semantictest/cache", "LLM replay cache directory (relative to the rootdir)"),
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
        "LLM requests in flight at once to each endpoint and model, for the whole run (every xdist "
        "worker included; default: 16 a process)",
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
    (
        "agent-endpoint",
        str,
        None,
        "URL of the agent of SemanticTest suites without an agent section, Yao files without a "
        "sidecar and the `agent` fixture (a SemanticTest test reads it as ${agent.endpoint})",
    ),
    (
        "agent-start",
        str,
        None,
        "command that starts that agent (omit to attach to a running one); it runs where pytest is "
        "invoked, or in the ini file's folder when written there",
    ),
    ("agent-health", str, None, "URL that answers 200 once that agent is ready"),
    (
        "highbar-runs",
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
    (
        "agent-logs-keep",
        int,
        10,
        "keep the logs of each agent's last N starts in agent-logs, removing older ones at the end "
        "of a run (0: keep all)",
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


def llm_roles() -> tuple[str, ...]:
    from .llm.roles import ROLES

    return ROLES


def add_options(parser: pytest.Parser) -> None:
    option_groups.add_options(parser, OPTIONS, llm_roles())


def value(config: pytest.Config, name: str) -> Any:
    """Option if given, else ini key, else default; ini strings are converted and checked. An old
    name is read as its new one; a deprecated spelling the user gave counts where the new one is unset
    (a repeatable option gets both)."""
    name = option_groups.new_name(name)
    kind, default = next((k, d) for n, k, d, _ in OPTIONS if n == name)
    spellings = [(name, "")] + [(a.old, a.prefix) for a in option_groups.aliases_of(name)]
    if kind is list:
        return _all_lines(config, spellings) or default
    for spelling, prefix in spellings:
        given = _given(config, spelling, kind)
        if given is not None:
            return prefix + given if prefix else given
    return default


def _all_lines(config: pytest.Config, spellings: list[tuple[str, str]]) -> list[Any]:
    """A repeatable option's lines in every spelling given (a ``ROLE=`` alias's with its prefix)."""
    found: list[Any] = []
    for spelling, prefix in spellings:
        found += [prefix + str(v) for v in _given(config, spelling, list) or []]
    return found


def _given(config: pytest.Config, name: str, kind: type) -> Any:
    """What one spelling of an option was given: on the command line, else in the ini file, else None."""
    dest = option_groups.dest(name)
    given = config.getoption(dest, None)
    if given is not None:
        return given
    raw = config.getini(dest)
    if raw in (None, "", []):
        return None
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
        all_runs=bool(value(config, "no-early-stop")),
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

    confidence = value(config, "pass-rate-confidence")
    try:
        return PassRateTest(
            threshold, 1 - confidence, 1 - confidence, max_runs=value(config, "pass-rate-max-runs")
        )
    except ValueError as exc:
        raise pytest.UsageError(
            f"pytest-semantictest: --semantictest-pass-rate {threshold} (confidence {confidence}): {exc}"
        ) from None


def check(config: pytest.Config) -> None:
    """Reject malformed options at startup (the LLM options: ``llm_options.check``)."""
    if value(config, "inconclusive") not in ("fail", "skip"):
        raise pytest.UsageError("pytest-semantictest: --semantictest-inconclusive must be 'fail' or 'skip'")
    if value(config, "on-missing-input") not in ("skip", "fail"):
        raise pytest.UsageError(
            "pytest-semantictest: --semantictest-on-missing-input must be 'skip' or 'fail'"
        )
    if not 1 <= value(config, "judge-samples") <= 50:
        raise pytest.UsageError("pytest-semantictest: --semantictest-judge-samples must be between 1 and 50")
    if value(config, "items-at-once") < 1:
        raise pytest.UsageError(
            "pytest-semantictest: --semantictest-items-at-once must be at least 1 (1: one item after another)"
        )
    if value(config, "agent-protocol") not in ("openai", "highbar"):
        raise pytest.UsageError(
            "pytest-semantictest: --semantictest-agent-protocol must be 'openai' or 'highbar'"
        )


def is_set(config: pytest.Config, name: str) -> bool:
    """Whether the user set option ``name`` (in any spelling), on the command line or in the ini file."""
    spellings = [name] + [a.old for a in option_groups.aliases_of(name)]
    return any(
        config.getoption(option_groups.dest(n), None) is not None
        or ini_text(config, option_groups.dest(n)) is not None
        for n in spellings
    )


def ini_text(config: pytest.Config, name: str) -> str | None:
    raw = config.getini(name)
    return str(raw).strip() or None if raw not in (None, []) else None
