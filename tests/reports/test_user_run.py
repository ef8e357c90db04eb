"""What a user's run does besides running tests: no warning that is ours, and the dry-run modes
(``--collect-only``, ``--setup-only``, ``--setup-plan``) never contact an agent."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.reports.scenario import PYTEST_ARGS, Backend, report_suite

WARNING = "asyncio_default_fixture_loop_scope"
USER_PLUGINS = ("-p", "asyncio", "-p", "unraisableexception")
"""What a user's run loads and other inner runs leave out (tests.helpers.UNUSED_PLUGINS)."""


def _fresh(pytester: pytest.Pytester, backend: Backend) -> None:
    """A fresh folder: one spec file, no ini file of ours."""
    suite = report_suite(backend.url)
    suite["tests"] = [t for t in suite["tests"] if t["id"] in ("passes", "flaky", "streamed")]
    pytester.makefile(".json", specs=json.dumps(suite))


def test_a_fresh_folder_run_prints_no_warning(
    pytester: pytest.Pytester, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONWARNINGS", "default")  # Python prints every warning, even at configure time
    _fresh(pytester, backend)
    result = pytester.runpytest_subprocess(
        *PYTEST_ARGS, *USER_PLUGINS, "-p", "no:benchmark", "-W", "default", "-rw", timeout=120
    )
    result.assert_outcomes(passed=3)
    output = result.stdout.str() + result.stderr.str()
    assert "Warning" not in output and "warnings summary" not in output, output
    assert f"{WARNING}=function" in output  # pytest-asyncio's header: the value it falls back to anyway


def test_a_value_the_user_set_is_kept(pytester: pytest.Pytester, backend: Backend) -> None:
    _fresh(pytester, backend)
    pytester.makeini(f"[pytest]\n{WARNING} = module\n")
    result = pytester.runpytest_subprocess(*PYTEST_ARGS, *USER_PLUGINS, timeout=120)
    result.assert_outcomes(passed=3)
    assert f"{WARNING}=module" in result.stdout.str()


def _highbar_attached(pytester: pytest.Pytester, backend: Backend) -> None:
    """A highbar spec attached to the backend (endpoint and health, no start command)."""
    pytester.makefile(
        ".highbar.yaml",
        attached=textwrap.dedent(f"""\
        agent:
          endpoint: "{backend.url}/chat"
          health: "{backend.url}/health"
          settle_time: 0
        suites:
          - name: Attached
            tests:
              - name: answers
                trigger: "hello"
                expect:
                  response: {{contains: "ok"}}
        """),
    )


@pytest.mark.parametrize("mode", ["--collect-only", "--setup-only", "--setup-plan"])
def test_dry_runs_never_contact_an_agent(pytester: pytest.Pytester, backend: Backend, mode: str) -> None:
    _fresh(pytester, backend)
    _highbar_attached(pytester, backend)
    result = pytester.runpytest_inprocess(*PYTEST_ARGS, mode)
    assert result.ret == 0, result.stdout.str()
    assert "specs.json::flaky" in result.stdout.str() or "<SpecItem flaky>" in result.stdout.str()
    assert backend.requests == 0, f"{mode} sent {backend.requests} requests"


def test_a_real_run_does_contact_it(pytester: pytest.Pytester, backend: Backend) -> None:
    """The counter the dry-run test reads does count (the same specs, run for real)."""
    _fresh(pytester, backend)
    _highbar_attached(pytester, backend)
    result = pytester.runpytest_inprocess(*PYTEST_ARGS)
    assert result.parseoutcomes().get("passed", 0) >= 3, result.stdout.str()
    assert backend.requests >= 5  # the health check, the trigger, /flaky at least twice, /sse
