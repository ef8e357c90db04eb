"""An agent that dies while starting is reported with its log tail: the tail goes through the session's
redactor, so a secret the agent printed (in any encoding) is masked in the console and JUnit XML. The
log file itself holds what the agent printed (the plugin writes nothing into it)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.reports.scenario import run
from tests.secrets.test_printed_forms import encodings

PASSWORD = 'pa"ss\\wörd +/=&<x9Wq7T'

LEAKY_AGENT = """\
import json, os, sys
secret = os.environ["SEMTEST_PASSWORD"]
print("starting with", secret, json.dumps({"password": secret}), repr(secret), flush=True)
sys.exit(3)
"""


def test_the_log_tail_of_an_agent_that_died_is_redacted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEMTEST_PASSWORD", PASSWORD)
    pytester.makepyfile(leaky_agent=LEAKY_AGENT)
    pytester.makefile(
        ".highbar.yaml",
        leaky=textwrap.dedent(f"""\
        agent:
          start: "{sys.executable} leaky_agent.py"
          endpoint: "http://127.0.0.1:9/chat"
          settle_time: 0
        suites:
          - name: Leaky
            tests:
              - trigger: "hello"
                expect:
                  response: {{contains: hello}}
        """),
    )
    result = run(pytester, "--junitxml=junit.xml", own_process=True)
    result.assert_outcomes(errors=1)
    console = result.stdout.str()
    result.stdout.fnmatch_lines(["*agent exited with code 3*"])
    # raw, JSON-escaped and repr forms masked
    assert 'starting with *** {"password": "***"} \'***\'' in console
    shown = {"console": console, "junit.xml": (pytester.path / "junit.xml").read_text(encoding="utf-8")}
    leaks = {
        (where, name)
        for where, text in shown.items()
        for name, form in encodings(PASSWORD).items()
        if form in text
    } | {(where, "core") for where, text in shown.items() if "x9Wq7T" in text}
    assert not leaks, sorted(leaks)
