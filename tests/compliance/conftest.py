"""Fixtures for the compliance format tests: the example server, a slow server, a clean environment."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.shared import COMPLIANCE_CORPUS as CORPUS  # noqa: F401  (the folder's tests import it from here)
from tests.shared import REPO

sys.path.insert(0, str(REPO / "examples" / "agents"))

import compliance_server  # noqa: E402

ENV = (
    "BASE_URL",
    "COMPLIANCE_BASE_URL",
    "API_KEY",
    "COMPLIANCE_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "VALID_JWT_TOKEN",
    "EXPIRED_JWT_TOKEN",
    "TOKEN_WITH_READ_SCOPE",
    "COMPLIANCE_A2A_URL",
    "COMPLIANCE_A2A_JSONRPC_URL",
    "COMPLIANCE_A2A_WEBAGENTS_URL",
    "COMPLIANCE_REALTIME_URL",
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing from the developer's environment decides where requests go or which judge answers."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[compliance_server.ComplianceServer]:
    """The example compliance server on a free port (``server.url``)."""
    instance, _ = compliance_server.start_server(0)
    yield instance
    instance.shutdown()


class _Slow(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(3)
        body = b'{"choices": []}'
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def slow_server() -> Iterator[str]:
    """A server that answers after 3 seconds."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def front(name: str = "t", **extra: Any) -> str:
    """Front matter for a test file."""
    lines = [f"name: {name}", "version: 1.0", f"transport: {extra.pop('transport', 'completions')}"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    return "---\n" + "\n".join(lines) + "\n---\n"


def doc(cases: str, name: str = "t", setup: str = "", **extra: Any) -> str:
    """A compliance file: front matter, an echo-agent setup (or ``setup``), then the cases."""
    setup = (
        setup
        or "Create an agent with the following configuration:\n- Name: `echo-agent`\n"
        "- Instructions: \"Repeat back exactly what the user says, prefixed with 'Echo: '\"\n"
    )
    return f"{front(name, **extra)}\n# Title\n\n## Setup\n\n{setup}\n## Test Cases\n\n{cases}"


def chat_case(
    title: str = "1. Hello",
    strict: str = "status: 200",
    content: str = "Hello",
    extra: str = "",
    model: str = "echo-agent",
) -> str:
    return f"""### {title}

**Request:**
POST `/chat/completions`
```json
{{"model": "{model}", "messages": [{{"role": "user", "content": "{content}"}}]}}
```
{extra}
**Strict:**
```yaml
{strict}
```

"""


def reported(text: str, path: str = "t.md", **settings: Any) -> tuple[str, str]:
    """Where a compliance text's problems are reported and what they say: ``("file", the collection
    error)`` or ``("case", every case error, one line each)``; ``("", "")`` when there is none."""
    from pytest_semantictest.errors import SpecError
    from pytest_semantictest.formats.compliance.compile import Settings, compile_document
    from pytest_semantictest.formats.compliance.parse import parse_text

    try:
        suite = compile_document(parse_text(text, path), Settings(**settings))
    except SpecError as exc:
        return "file", exc.render()
    errors = [case.error for case in suite.cases if case.error]
    return ("case", "\n".join(errors)) if errors else ("", "")
