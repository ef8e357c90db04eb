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


# The slowest tests (shared runs of the examples, own pytest processes, xdist runs, agents, property
# campaigns), slowest first. (Not in the list: tests/highbar/test_processes_signals.py, whose exit-time
# bound is best kept away from the busiest start of the session.)
SLOW_FIRST = (
    "tests/mutate/test_examples_offline.py::test_the_mutation_phase_sends_no_request_to_any_example_agent",
    "tests/reports/test_examples_judged.py::",
    "tests/concurrency/test_corpus_verdicts.py::",
    "tests/stats/test_sequential_decision.py::test_a_local_agent_gets_the_simulated_outcomes_and_run_counts",
    "tests/reports/test_validate_agrees.py::",
    "tests/secrets/test_secret_property.py::",
    "tests/traces/test_attribution.py::test_one_test_at_a_time_reads_the_calls_of_an_agent_that_ignores_traceparent",
    "tests/reports/test_html.py::test_the_report_renders_in_headless_chromium",
    "tests/highbar/test_processes.py::test_an_agent_that_cannot_be_used_exits_2",
    "tests/highbar/test_processes.py::test_under_xdist_workers_take_turns_on_the_port",
    "tests/highbar/test_no_leaks.py::test_xdist_",
    "tests/reports/test_secrets.py::test_the_secret_appears_in_no_output",
    "tests/yao/test_yao_results.py::test_results_file_under_xdist_with_generated_cases",
    "tests/reports/test_cli.py::test_validate_exit_codes",
    "tests/test_plugin.py::test_short_summary_and_junit_name_the_first_check_that_failed_under_xdist",
    "tests/reports/test_cli.py::test_semtest_runs_suites_and_writes_the_html_report",
    "tests/secrets/test_encoded_secrets.py::test_no_encoded_form_of_a_secret_reaches_any_output",
    "tests/llm/test_llm_pytest.py::test_second_run_in_replay_mode_passes_with_the_server_stopped",
    "tests/reports/test_summary.py::test_the_same_summary_under_xdist",
    "tests/llm/test_llm_pytest.py::test_api_key_from_env_and_option_never_printed_or_cached",
    "tests/highbar/test_processes.py::",
    "tests/concurrency/test_repeats_and_xdist.py::test_xdist_workers_run_their_items_at_once",
    "tests/highbar/test_no_leaks.py::",
    "tests/reports/test_junit.py::test_properties_reach_the_controller_under_xdist",
    "tests/compliance/test_xdist.py::",
    "tests/test_loader_property.py::test_mutated_suite",
    "tests/reports/test_user_run.py::test_a_",
    "tests/concurrency/test_never_run_ahead.py::",
    "tests/agents/test_agent_pool.py::test_one_process_two_request_bodies",
)


@pytest.hookimpl(trylast=True)  # (after every other reordering)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the tests :data:`SLOW_FIRST` names start first, spread over the workers: xdist hands
    each worker a run of consecutive tests to begin with (its whole share under ``worksteal``, the
    suite's ``-n`` default: the root conftest; a quarter of it under ``load``), so they go in turn to the
    head of each worker's run, the slowest at the heads of different workers. A long test handed out last
    keeps one worker busy while the others have nothing left to do; several at the head of one worker's
    run did the same. The rest keep their collection order (the same on every worker)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if not workers:
        return

    def rank(item: pytest.Item) -> int:
        return next(
            (n for n, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)), len(SLOW_FIRST)
        )

    ranked = sorted(items, key=rank)  # stable
    slow = [item for item in ranked if rank(item) < len(SLOW_FIRST)]
    rest = ranked[len(slow) :]
    share = max(len(items) // workers // (1 if config.getoption("dist", None) == "worksteal" else 4), 2)
    ordered: list[pytest.Item] = []
    for n in range(workers):
        heads = slow[n::workers]
        take = max(share - len(heads), 0)
        ordered += heads + rest[:take]
        del rest[:take]
    items[:] = ordered + rest
