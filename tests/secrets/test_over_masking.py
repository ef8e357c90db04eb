"""An ordinary value from the environment is not a secret: ``${EXAMPLE_AGENT_URL}`` in a highbar
agent's config stays visible in every format's output of the same run (before, it became a secret
and another file's trace showed ``GET ***/users/1``)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from tests.reports.scenario import TRACE_AGENT, run, step
from tests.reports.test_secrets import free_port


def test_an_environment_url_used_by_highbar_is_not_masked_elsewhere(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("EXAMPLE_AGENT_URL", url)
    monkeypatch.setenv("EXAMPLE_AGENT_TOKEN", "tok-5b8d0e6a93")
    pytester.makefile(
        ".highbar.yaml",
        agent=textwrap.dedent(f"""\
        agent:
          start: "{sys.executable} {TRACE_AGENT} --port {port}"
          endpoint: "${{EXAMPLE_AGENT_URL}}/mirror"
          health: "${{EXAMPLE_AGENT_URL}}/health"
          settle_time: 0
          request:
            headers: {{X-Agent-Token: "${{EXAMPLE_AGENT_TOKEN}}"}}
            body: {{message: "{{{{message}}}}", where: "${{EXAMPLE_AGENT_URL}}"}}
          response: where
        suites:
          - name: Mirror
            tests:
              - name: says where it is
                trigger: "Where are you?"
                expect:
                  response: {{contains: nowhere}}
        """),
    )
    suite = {
        "name": "users",
        "tests": [
            {
                "id": "user",
                "pipeline": [
                    step(
                        "HttpRequest",
                        "response",
                        input={"url": "${env.EXAMPLE_AGENT_URL}/users/1", "method": "GET"},
                    ),
                ],
                "assertions": {"response.status": 200},
            }
        ],
    }
    pytester.makefile(".json", users=json.dumps(suite))
    result = run(pytester, "-p", "no:randomly", "--semantictest-results=results.jsonl", own_process=True)
    result.assert_outcomes(failed=2)
    console = result.stdout.str()
    assert "***/users/1" not in console and "***/mirror" not in console
    result.stdout.fnmatch_lines_random(
        [
            f"*response does not contain 'nowhere'; got '{url}'*",  # highbar's own output
            f'*input.url: "{url}/users/1"*',  # the SemanticTest trace (brief without -vv)
        ]
    )
    results = (pytester.path / "results.jsonl").read_text(encoding="utf-8")
    assert f"got '{url}'" in results and "tok-5b8d0e6a93" not in console + results  # a token stays a secret
