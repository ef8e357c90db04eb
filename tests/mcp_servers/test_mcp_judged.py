"""Natural-language assertions over an MCP exchange, and secrets given to an MCP server."""

from __future__ import annotations

import json
import sys

import pytest

from tests.helpers import run_pytest
from tests.llm.fake_openai import FakeOpenAI, Reply
from tests.mcp_servers.conftest import SERVER

pytest_plugins = ["pytester"]


def test_assertions_are_judged_on_the_mcp_reply_with_a_stable_prompt(pytester: pytest.Pytester) -> None:
    case = (
        '### 1. Forecast\n\n**Request:**\nMCP `tools/call`\n```json\n{"name": "forecast", "arguments": {"city": "Oslo"}}\n```\n\n'
        "**Assertions:**\n- The forecast is for Oslo\n- It will rain\n"
    )
    pytester.makefile(
        ".md",
        judged=f"---\nname: j\nversion: 1.0\ntransport: mcp\nserver: {sys.executable} {SERVER}\n---\n\n## Test Cases\n\n{case}",
    )
    verdict = {
        "assertions": {"1": {"passed": True, "reason": "Oslo"}, "2": {"passed": False, "reason": "sunny"}}
    }
    with FakeOpenAI() as fake:
        fake.queue(Reply(content=json.dumps(verdict)))
        args = ("-p", "no:xdist", "-p", "no:cacheprovider", f"--semantictest-llm-base-url={fake.url}")
        result = run_pytest(pytester, *args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["assertion 2 (line *): It will rain", "  judge: not met (*): sunny"])
        prompt = fake.bodies()[0]["messages"][1]["content"]
        again = run_pytest(pytester, *args)  # the same prompt: a cache hit
    assert "transport mcp: MCP tools/call" in prompt and '"city": "Oslo"' in prompt
    assert 'state: "completed"' in prompt and '\\"sky\\": \\"sunny\\"' in prompt
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["semantictest: 0 LLM calls, 1 cache hits, 0 tokens"])
    assert fake.count == 1


def test_a_secret_given_in_env_is_masked_even_when_the_server_echoes_it(pytester: pytest.Pytester) -> None:
    secret = "tok-9f8e7d6c5b4a3210"
    spec = {
        "name": "secret",
        "tests": [
            {
                "id": "echo",
                "pipeline": [
                    {
                        "block": "McpCall",
                        "input": {
                            "command": [sys.executable, str(SERVER)],
                            "env": {"SERVICE_API_TOKEN": secret},
                            "tool": "echo",
                            "arguments": {"text": secret},
                        },
                        "output": "r",
                    }
                ],
                "assertions": {"r.text": "something else"},
            }
        ],
    }
    pytester.makefile(".json", secret=json.dumps(spec))
    result = run_pytest(pytester, "-p", "no:xdist", "-p", "no:cacheprovider", "-vv", own_process=True)
    result.assert_outcomes(failed=1)
    assert "MCP session" in result.stdout.str()
    assert secret not in result.stdout.str() + result.stderr.str()
