"""Fixtures for the look-ahead tests: a loopback server that answers after a delay and counts what it
served at once, and helpers that write SemanticTest suites against it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.concurrency.latency_server import serving


@pytest.fixture
def latency() -> Iterator[str]:
    """The latency server's base URL (``/sleep?s=S&id=X``, ``/stats``, chat completions after 0.3 s)."""
    with serving(0.3) as base:
        yield base


def stats(base: str) -> dict[str, Any]:
    """What the latency server saw: ``max_in_flight``, ``served``, ``order``."""
    return dict(httpx.get(f"{base}/stats", timeout=5, trust_env=False).json())


def sleeping(base: str, test_id: str, seconds: float, status: int = 200, **extra: Any) -> dict[str, Any]:
    """A SemanticTest test whose one HttpRequest waits ``seconds`` at the server; it passes when the
    response status is ``status``."""
    return {
        "id": test_id,
        "pipeline": [
            {
                "block": "HttpRequest",
                "output": "r",
                "input": {"url": f"{base}/sleep?s={seconds:g}&id={test_id}"},
            }
        ],
        "assertions": {"r.status": status},
        **extra,
    }


def write(pytester: pytest.Pytester, name: str, tests: list[dict[str, Any]], **top: Any) -> None:
    pytester.makefile(".json", **{name: json.dumps({"name": name, **top, "tests": tests}, indent=1)})


def outcomes(result: pytest.RunResult) -> list[tuple[str, str]]:
    """(node id, outcome word) of every ``-v`` result line, in the order pytest reported them."""
    found = []
    for line in result.outlines:
        for word in ("PASSED", "FAILED", "ERROR", "SKIPPED"):
            if (
                f" {word}" in line
                and "::" in line
                and not line.startswith(("FAILED ", "ERROR ", "SKIPPED ", "PASSED "))
            ):
                found.append((line.split(f" {word}")[0], word))
                break
    return found


def compliance_doc(name: str, cases: list[tuple[str, int]], depends_on: str = "") -> str:
    """A compliance file of chat-completion cases against the latency server: (title, expected status)."""
    front = (
        f"---\nname: {name}\nversion: 1.0\ntransport: completions\n"
        + (f"depends_on: {depends_on}\n" if depends_on else "")
        + "---\n"
    )
    body = "".join(
        f"### {title}\n\n**Request:**\nPOST `/chat/completions`\n```json\n"
        '{"model": "echo-agent", "messages": [{"role": "user", "content": "Hello"}]}\n```\n\n'
        f"**Strict:**\n```yaml\nstatus: {status}\n```\n\n"
        for title, status in cases
    )
    return (
        f"{front}\n# {name}\n\n## Setup\n\nCreate an agent with the following configuration:\n"
        '- Name: `echo-agent`\n- Instructions: "Repeat back what the user says"\n\n'
        f"## Test Cases\n\n{body}"
    )
