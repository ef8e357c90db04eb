"""Secrets that a shortened excerpt or a URL's own encoding used to let through.

- A 300-character secret an agent echoes: a failure's ``got '...'`` excerpt was cut to 200 or 300
  characters before anything redacted it, and a secret cut short is no longer the secret: most of it
  printed in clear. Now every excerpt is masked first (``shown.shorten``).
- A secret written into a URL's query string holding a space, ``&``, a valid ``%41`` escape and
  non-ASCII: the URL keeps the escape as written and encodes what is around it, so neither the URL
  as printed nor any one decoding of it was the secret.

Each runs once, its every artefact (console, JUnit, HTML, results file, log file) searched for every
encoding ``test_printed_forms.encodings`` checks and for every 8-character piece of the secret.

The same run carries two more cases of what is and is not a secret:

- Kept out, not scrubbed out: a step's input is recorded with the placeholder the spec wrote
  (``${env.MY_API_KEY}``, also through a context value), while the agent receives the value.
- An ordinary value from the environment is not a secret: ``${EXAMPLE_AGENT_URL}`` in a highbar
  agent's config stays visible in every format's output of the same run (before, it became a secret
  and another file's trace showed ``GET ***/users/1``), while the token beside it stays a secret.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.helpers import loopback_server
from tests.ports import free_port
from tests.reports.scenario import TRACE_AGENT, Backend, run, step, write_suite
from tests.secrets.test_printed_forms import encodings

LONG = "".join(f"Lq{n:03d}x" for n in range(50))  # 300 characters, every 8-character piece distinct
QUERY = "a b&c%41dé+/=Zq7Wx9Vt"
PIECE = 8
PLACEHOLDER_SECRET = "sk-live-Pl4ceh0lder-9f2c7e"
AGENT_TOKEN = "tok-5b8d0e6a93"
RECEIVED: list[dict[str, Any]] = []


def _pieces(secret: str) -> set[str]:
    return {secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)}


def _leaks(texts: dict[str, str], secret: str) -> list[tuple[str, str]]:
    forms = {name: form for name, form in encodings(secret).items()}
    forms.update({f"piece {piece}": piece for piece in _pieces(secret) if "%" not in piece})
    return sorted(
        (where, name) for where, text in texts.items() for name, form in forms.items() if form in text
    )


class _Repeater(BaseHTTPRequestHandler):
    """An OpenAI-style agent that answers with the key it was sent, first thing in its reply."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        content = f"Your key: {self.headers.get('X-Relay-Key')}. Anything else?"
        data = json.dumps({"object": "chat.completion", "choices": [{"message": {"content": content}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data.encode())))
        self.end_headers()
        self.wfile.write(data.encode())


class _Recorder(BaseHTTPRequestHandler):
    """Answers 500 (the test fails and its trace is printed), recording what it was sent."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        RECEIVED.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": json.loads(body)}
        )
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def placeholder_suite(url: str) -> dict[str, object]:
    """``${env.MY_API_KEY}`` in a header, and through a context value in the query and the body."""
    return {
        "name": "s",
        "context": {"KEY": "${env.MY_API_KEY}"},
        "tests": [
            {
                "id": "t",
                "pipeline": [
                    {
                        "block": "HttpRequest",
                        "output": "r",
                        "input": {
                            "url": url + "/chat?key=${KEY}",
                            "method": "POST",
                            "headers": {"Authorization": "Bearer ${env.MY_API_KEY}"},
                            "body": {"token": "${KEY}"},
                        },
                    }
                ],
                "assertions": {"r.status": 200},
            }
        ],
    }


def environment_url_specs(pytester: pytest.Pytester, port: int) -> None:
    """A highbar agent at ``${EXAMPLE_AGENT_URL}`` that answers with that URL, a token beside it; a
    SemanticTest request to the same URL."""
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


@pytest.fixture
def repeater() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Repeater)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_cut_split_and_placeholder_secrets_reach_no_artefact_and_a_plain_url_stays_visible(
    pytester: pytest.Pytester, backend: Backend, repeater: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAY_VALUE", LONG)  # secret by where it goes: an X-...-Key header
    monkeypatch.setenv("ST_QUERY_TOKEN", QUERY)  # secret by its name
    monkeypatch.setenv("MY_API_KEY", PLACEHOLDER_SECRET)
    port = free_port()
    agent_url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("EXAMPLE_AGENT_URL", agent_url)
    monkeypatch.setenv("EXAMPLE_AGENT_TOKEN", AGENT_TOKEN)
    environment_url_specs(pytester, port)
    pytester.makefile(
        ".agent.yaml",
        echo_test=textwrap.dedent(f"""\
        endpoint: "{repeater}/v1/chat/completions"
        headers: {{X-Relay-Key: "${{RELAY_VALUE}}"}}
        model: echo-agent
        """),
    )
    cases = [
        {
            "id": "contains",
            "input": "What did I send?",
            "assertions": [{"type": "contains", "value": "nothing"}],
        },
        {"id": "regex", "input": "What did I send?", "assertions": [{"type": "regex", "value": "^nothing$"}]},
    ]
    pytester.makefile(".jsonl", echo_test="\n".join(json.dumps(case) for case in cases))
    url = f"{backend.url}/echo?token=${{env.ST_QUERY_TOKEN}}"
    suite = {
        "name": "query",
        "tests": [
            {
                "id": "query",
                "pipeline": [step("HttpRequest", "response", input={"url": url, "method": "GET"})],
                "assertions": {"response.body": {"contains": "nothing like this"}},
            }
        ],
    }
    write_suite(pytester, suite, name="query")
    args = ["--junitxml=junit.xml", "-rA", "-vv", "--semantictest-results=results.jsonl"]
    args += ["--html=report.html", "--self-contained-html", "--log-level=DEBUG", "--log-file=run.log"]
    RECEIVED.clear()
    with loopback_server(_Recorder) as recorder:
        (pytester.path / "s.json").write_text(json.dumps(placeholder_suite(recorder)))
        result = run(pytester, *args, own_process=True)
    result.assert_outcomes(failed=6)
    texts = {"console": result.stdout.str() + result.stderr.str()}
    for name in ("junit.xml", "results.jsonl", "report.html", "run.log"):
        texts[name] = (pytester.path / name).read_text(encoding="utf-8", errors="replace")
    assert "got '" in texts["console"]  # the excerpt is there, masked
    assert not _leaks(texts, LONG) and not _leaks(texts, QUERY), (_leaks(texts, LONG), _leaks(texts, QUERY))
    assert "token=***" in texts["console"]

    # kept out, not scrubbed out: the agent got the value, the trace (-vv: whole) shows the placeholder
    assert [
        {
            "path": f"/chat?key={PLACEHOLDER_SECRET}",
            "auth": f"Bearer {PLACEHOLDER_SECRET}",
            "body": {"token": PLACEHOLDER_SECRET},
        }
    ] == RECEIVED
    out = result.stdout.str()
    assert '"Authorization": "Bearer ${env.MY_API_KEY}"' in out, out[-3000:]
    assert '"token": "${env.MY_API_KEY}"' in out and "/chat?key=${env.MY_API_KEY}" in out
    assert not [where for where, text in texts.items() if PLACEHOLDER_SECRET in text]

    # an ordinary URL from the environment stays visible everywhere; the token beside it does not
    assert "***/users/1" not in out and "***/mirror" not in out
    result.stdout.fnmatch_lines_random(
        [
            f"*response does not contain 'nowhere'; got '{agent_url}'*",  # highbar's own output
            f'*"url": "{agent_url}/users/1"*',  # the SemanticTest trace
        ]
    )
    assert f"got '{agent_url}'" in texts["results.jsonl"]
    assert not [where for where, text in texts.items() if AGENT_TOKEN in text]
