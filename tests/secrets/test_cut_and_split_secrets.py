"""Secrets that a shortened excerpt or a URL's own encoding used to let through.

- A 300-character secret an agent echoes: a failure's ``got '...'`` excerpt was cut to 200 or 300
  characters before anything redacted it, and a secret cut short is no longer the secret: most of it
  printed in clear. Now every excerpt is masked first (``shown.shorten``).
- A secret written into a URL's query string holding a space, ``&``, a valid ``%41`` escape and
  non-ASCII: the URL keeps the escape as written and encodes what is around it, so neither the URL
  as printed nor any one decoding of it was the secret.

Each runs once, its every artefact (console, JUnit, HTML, results file, log file) searched for every
encoding ``test_printed_forms.encodings`` checks and for every 8-character piece of the secret.
"""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.reports.scenario import Backend, run, step, write_suite
from tests.secrets.test_printed_forms import encodings

LONG = "".join(f"Lq{n:03d}x" for n in range(50))  # 300 characters, every 8-character piece distinct
QUERY = "a b&c%41dé+/=Zq7Wx9Vt"
PIECE = 8


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


@pytest.fixture
def repeater() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Repeater)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_long_secret_and_a_query_string_secret_reach_no_artefact(
    pytester: pytest.Pytester, backend: Backend, repeater: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAY_VALUE", LONG)  # secret by where it goes: an X-...-Key header
    monkeypatch.setenv("ST_QUERY_TOKEN", QUERY)  # secret by its name
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
    result = run(pytester, *args, own_process=True)
    result.assert_outcomes(failed=3)
    texts = {"console": result.stdout.str() + result.stderr.str()}
    for name in ("junit.xml", "results.jsonl", "report.html", "run.log"):
        texts[name] = (pytester.path / name).read_text(encoding="utf-8", errors="replace")
    assert "got '" in texts["console"]  # the excerpt is there, masked
    assert not _leaks(texts, LONG) and not _leaks(texts, QUERY), (_leaks(texts, LONG), _leaks(texts, QUERY))
    assert "token=***" in texts["console"]
