"""Shared by every test under ``tests/``."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_outer_example_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """``examples/conftest.py`` exports the example agent's URL when this session also runs the
    examples; a pytest run a test starts must start its own agent, not share (and change) that one's
    state (its job and retry counters)."""
    monkeypatch.delenv("EXAMPLE_AGENT_URL", raising=False)
    monkeypatch.delenv("OTEL_AGENT_URL", raising=False)  # (the traces examples' instrumented agent)


# The slowest tests (own pytest processes, xdist runs, agents, property campaigns), slowest first. Under
# xdist each worker runs them before the rest: xdist hands out tests in collection order, and a long one
# handed out last keeps one worker busy while the other has nothing left to do. (Not in the list:
# tests/highbar/test_processes_signals.py, whose exit-time bound is best kept away from the busiest
# start of the session.)
SLOW_FIRST = (
    "tests/reports/test_html.py::test_the_report_renders_in_headless_chromium",
    "tests/highbar/test_processes.py::test_an_agent_that_cannot_be_used_exits_2",
    "tests/highbar/test_processes.py::test_under_xdist_workers_take_turns_on_the_port",
    "tests/highbar/test_no_leaks.py::test_xdist_",
    "tests/llm/test_llm_pytest.py::test_terminal_summary_sums_xdist_workers",
    "tests/reports/test_secrets.py::test_the_secret_appears_in_no_output",
    "tests/yao/test_yao_results.py::test_results_file_under_xdist_with_generated_cases",
    "tests/reports/test_cli.py::test_validate_exit_codes",
    "tests/test_plugin.py::test_short_summary_and_junit_name_the_first_check_that_failed_under_xdist",
    "tests/reports/test_cli.py::test_semtest_runs_suites_and_writes_the_html_report",
    "tests/secrets/test_encoded_secrets.py::test_no_encoded_form_of_a_secret_reaches_any_output",
    "tests/secrets/test_secret_property.py::",
    "tests/llm/test_llm_pytest.py::test_second_run_in_replay_mode_passes_with_the_server_stopped",
    "tests/reports/test_summary.py::test_the_same_summary_under_xdist",
    "tests/llm/test_llm_pytest.py::test_api_key_from_env_and_option_never_printed_or_cached",
    "tests/reports/test_examples_judged.py::",
    "tests/highbar/test_processes.py::",
    "tests/concurrency/test_repeats_and_xdist.py::test_xdist_workers_run_their_items_at_once",
    "tests/highbar/test_no_leaks.py::",
    "tests/reports/test_junit.py::test_properties_reach_the_controller_under_xdist",
    "tests/compliance/test_xdist.py::",
    "tests/test_loader_property.py::test_mutated_suite",
    "tests/reports/test_user_run.py::test_a_",
    "tests/concurrency/test_never_run_ahead.py::",
    "tests/concurrency/test_corpus_verdicts.py::",
    "tests/highbar/test_highbar_run.py::test_xdist_one_agent_for_all_workers",
    "tests/secrets/test_judge_fixture.py::",
    "tests/agents/test_agent_pool.py::test_one_process_two_request_bodies",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the tests :data:`SLOW_FIRST` names go first, in its order (the rest keep theirs)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def rank(item: pytest.Item) -> int:
        return next(
            (n for n, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)), len(SLOW_FIRST)
        )

    items[:] = sorted(items, key=rank)  # stable: the same order on every worker
